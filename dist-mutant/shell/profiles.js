/**
 * Agent profiles for `vault-cli run` (docs/run.md): what a coding agent needs
 * to work in the sandbox and nothing more. The profiles are data
 * (shell/profiles.json, which the owner can read; a user file extends or
 * overrides it), and everything here is pure: parsing, choosing one, and
 * merging an agent's private copy of a state file back into the owner's.
 *
 * The invariant it guards: a profile never lets the agent write what the
 * owner's next session outside the sandbox executes. Its state directories
 * are the agent's private copies (shell/agent-state.ts); at the end only the
 * paths on the profile's `keep` list (data the agent writes for itself:
 * transcripts, history, caches) come back, and everything else it made or
 * changed there is held (shell/held.ts). A file that mixes state and settings
 * (~/.claude.json) is a private copy too, and only its `keep` keys come back.
 * An allow-list: what a new agent release adds is held until it is listed.
 */
import { VaultError } from '../src/core/errors.js';
import builtin from './profiles.json' with { type: 'json' };
const invalid = (where, what) => new VaultError('VLT-1002', `${where}: ${what} (docs/run.md, "Agent profiles").`);
function strings(v, where, field) {
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
        throw invalid(where, `"${field}" must be a list of strings`);
    return v;
}
function record(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const FIELDS = [
    'summary',
    'commands',
    'write',
    'readOnly',
    'keep',
    'private',
    'env',
    'model',
    'aws',
];
const MODEL_FIELDS = ['host', 'variable', 'header', 'entry', 'field'];
/** The profile's model: the owner's fields over the shipped ones, field by field; null for none. */
function modelFrom(v, base, at) {
    if (v === null)
        return null;
    if (!record(v) || !Object.keys(v).every((k) => MODEL_FIELDS.includes(k)))
        throw invalid(at, `"model" must be null or an object of ${MODEL_FIELDS.join(', ')}`);
    const model = { ...(base ?? {}), ...v };
    if (!MODEL_FIELDS.every((f) => typeof model[f] === 'string'))
        throw invalid(at, `"model" must be null or give ${MODEL_FIELDS.join(', ')}`);
    return model;
}
/** A path component a keep pattern may hold: a name, `*` in it, or `**` alone. */
const KEEP_PART = /^(\*\*|[A-Za-z0-9._@+,=*-]+)$/;
/**
 * A `keep` pattern, checked: `~/`, then names (a `*` in one for any
 * characters but `/`, a `**` alone for any depth), inside one of `write`,
 * naming files (no trailing `/`).
 */
export function keepPattern(p, write) {
    if (!p.startsWith('~/') || p.endsWith('/'))
        return 'must start with ~/ and name files';
    const parts = p.slice(2).split('/');
    if (!parts.every((x) => KEEP_PART.test(x) && x !== '.' && x !== '..'))
        return 'takes names, * and ** only';
    if (parts.at(-1) === '**')
        return 'must end in a file name pattern, not **';
    const lit = (w) => (w.endsWith('/') ? w : `${w}/`);
    if (!write.some((w) => p === w || p.startsWith(lit(w))))
        return 'must be inside a "write" path';
    return null;
}
/** A dot path of keys (`*` for any key) a private file keeps. */
const KEY_PATH = /^([A-Za-z0-9_$-]+|\*)(\.([A-Za-z0-9_$-]+|\*))*$/;
function privateFrom(p, at) {
    if (!record(p) || typeof p.path !== 'string')
        throw invalid(at, '"private" entries need a "path"');
    if (Object.hasOwn(p, 'ownerKeeps'))
        throw invalid(at, '"ownerKeeps" is gone: "keep" lists the keys that come back (an allow-list)');
    const keep = strings(p.keep ?? [], at, 'keep');
    const bad = keep.find((k) => !KEY_PATH.test(k));
    if (bad !== undefined)
        throw invalid(at, `"keep" key path ${JSON.stringify(bad)} is not a.b.*`);
    return { path: p.path, keep };
}
/** One profile from its JSON, each field of `base` kept where `v` does not give it. */
function profileFrom(name, v, base, where) {
    if (!record(v))
        throw invalid(where, `profile "${name}" must be an object`);
    const at = `${where}, profile "${name}"`;
    const has = (k) => Object.hasOwn(v, k);
    for (const k of Object.keys(v))
        if (!FIELDS.includes(k))
            throw invalid(at, `unknown field "${k}"`);
    const env = has('env') ? v.env : (base?.env ?? {});
    if (!record(env) || !Object.values(env).every((s) => typeof s === 'string'))
        throw invalid(at, '"env" must map names to strings');
    const privates = has('private') ? v.private : (base?.private ?? []);
    if (!Array.isArray(privates))
        throw invalid(at, '"private" must be a list');
    const model = has('model') ? modelFrom(v.model, base?.model ?? null, at) : (base?.model ?? null);
    const aws = has('aws') ? v.aws : (base?.aws ?? null);
    if (aws !== null && (typeof aws !== 'string' || aws === ''))
        throw invalid(at, '"aws" must be null or the name of an entry holding an AWS key pair');
    const summary = has('summary') ? v.summary : (base?.summary ?? name);
    if (typeof summary !== 'string')
        throw invalid(at, '"summary" must be a string');
    const write = has('write') ? strings(v.write, at, 'write') : (base?.write ?? []);
    const keep = has('keep') ? strings(v.keep, at, 'keep') : (base?.keep ?? []);
    for (const k of keep) {
        const why = keepPattern(k, write);
        if (why !== null)
            throw invalid(at, `"keep" ${JSON.stringify(k)} ${why}`);
    }
    return {
        name,
        summary,
        commands: has('commands') ? strings(v.commands, at, 'commands') : (base?.commands ?? []),
        write,
        keep,
        readOnly: has('readOnly') ? strings(v.readOnly, at, 'readOnly') : (base?.readOnly ?? []),
        private: privates.map((p) => privateFrom(p, at)),
        env: env,
        model,
        aws,
    };
}
/**
 * The shipped profiles, extended or overridden by the user's file (its parsed
 * JSON, or null when there is none): a profile the user names replaces the
 * shipped one field by field.
 * @throws VaultError VLT-1002 when the user's file is not a map of profiles.
 */
export function loadProfiles(user, userFile = 'profiles.json') {
    const out = new Map();
    for (const [name, v] of Object.entries(builtin))
        out.set(name, profileFrom(name, v, undefined, 'shell/profiles.json'));
    if (user === null)
        return out;
    if (!record(user))
        throw invalid(userFile, 'must hold an object of profiles');
    for (const [name, v] of Object.entries(user)) {
        if (!/^[a-z0-9][a-z0-9_-]*$/.test(name))
            throw invalid(userFile, `bad profile name "${name}"`);
        out.set(name, profileFrom(name, v, out.get(name), userFile));
    }
    return out;
}
/**
 * The profile for `run`: the one `--profile` names (`none` for none), else
 * the one whose commands include the command's name, else none.
 * @throws VaultError VLT-1002 for a `--profile` that names no profile.
 */
export function chooseProfile(profiles, commandName, named) {
    if (named === 'none')
        return null;
    if (named !== undefined) {
        const p = profiles.get(named);
        if (p === undefined)
            throw new VaultError('VLT-1002', `No profile ${JSON.stringify(named)}: ${[...profiles.keys(), 'none'].join(', ')}.`);
        return p;
    }
    for (const p of profiles.values())
        if (p.commands.includes(commandName))
            return p;
    return null;
}
/** `~/x` under `home`; other paths as they are. */
export function expandHome(p, home) {
    return p === '~' ? home : p.startsWith('~/') ? `${home}/${p.slice(2)}` : p;
}
/** A read-only path as the profile names it: the path and whether it is a directory. */
export function readOnlyPath(p, home) {
    const dir = p.endsWith('/');
    return { path: expandHome(dir ? p.slice(0, -1) : p, home), dir };
}
/**
 * What a placeholder for a read-only path that does not exist yet holds: the
 * sandbox cannot bind over nothing (bubblewrap would create the mount point
 * in the owner's real directory, empty), so `run` creates one the agent
 * itself would read as "nothing configured", and removes it afterwards.
 */
export function placeholder(path) {
    return path.endsWith('.json') ? '{}\n' : '';
}
function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
}
/** A key for a line: a plain name as it is, anything else quoted. */
function shown(k) {
    return /^[A-Za-z0-9_$-]+$/.test(k) ? k : JSON.stringify(k);
}
/**
 * The owner's file after a session: the owner's current file, with the
 * agent's copy deciding only at the `keep` key paths (its value, or no key
 * when the copy has none). Every other key the copy added or changed is
 * held: left out, and returned on its own. Neither input is changed.
 */
export function mergeKept(owner, copy, keep) {
    const own = record(owner) ? structuredClone(owner) : {};
    if (!record(copy))
        return { merged: own, held: null, dropped: [] };
    const paths = keep.map((k) => k.split('.'));
    for (const path of paths)
        take(own, copy, path);
    const held = {};
    const dropped = [];
    heldKeys(record(owner) ? owner : {}, copy, paths, held, dropped, '');
    return { merged: own, held: dropped.length === 0 ? null : held, dropped };
}
/** Sets `out` at `path` to `copy`'s value there (deleting it when the copy has none). */
function take(out, copy, path) {
    const [head, ...rest] = path;
    if (head === undefined)
        return;
    const keys = head === '*' ? [...new Set([...Object.keys(out), ...Object.keys(copy)])] : [head];
    for (const k of keys) {
        const c = Object.hasOwn(copy, k) ? copy[k] : undefined;
        if (rest.length === 0) {
            if (c === undefined)
                delete out[k];
            else
                out[k] = structuredClone(c);
            continue;
        }
        if (!record(c))
            continue;
        const had = Object.hasOwn(out, k);
        const inner = had ? out[k] : {};
        // The owner's value that is no object stays: nothing below it is the agent's to set.
        if (!record(inner))
            continue;
        take(inner, c, rest);
        if (!had && Object.keys(inner).length > 0)
            out[k] = inner;
    }
}
/** Fills `held` with what `copy` added or changed outside `paths`, and names it in `dropped`. */
function heldKeys(owner, copy, paths, held, dropped, prefix) {
    for (const k of Object.keys(copy)) {
        const o = Object.hasOwn(owner, k) ? owner[k] : undefined;
        const c = copy[k];
        if (same(o, c))
            continue;
        const here = paths.filter((p) => p[0] === '*' || p[0] === k);
        if (here.some((p) => p.length === 1))
            continue;
        const name = `${prefix}${prefix === '' ? '' : '.'}${shown(k)}`;
        if (here.length > 0 && record(c)) {
            const inner = {};
            const before = dropped.length;
            heldKeys(record(o) ? o : {}, c, here.map((p) => p.slice(1)), inner, dropped, name);
            if (dropped.length > before)
                held[k] = inner;
            continue;
        }
        held[k] = structuredClone(c);
        dropped.push(name);
    }
}
/** `held` laid over `owner`: the restore of held keys (objects merged, anything else replaced). */
export function overlay(owner, held) {
    if (!record(held) || !record(owner))
        return structuredClone(held);
    const out = structuredClone(owner);
    for (const [k, v] of Object.entries(held))
        out[k] = Object.hasOwn(out, k) && record(v) ? overlay(out[k], v) : structuredClone(v);
    return out;
}
/** A matcher for the profile's keep patterns (home expanded): true for a path that comes back. */
export function keepMatcher(keep, home) {
    const esc = (x) => x.replace(/[.+^${}()|[\]\\?]/g, '\\$&');
    const res = keep.map((k) => {
        const parts = expandHome(k, home).split('/');
        const body = parts
            .map((p, i) => p === '**'
            ? '(?:[^/]+/)*'
            : esc(p).replaceAll('*', '[^/]*') + (i === parts.length - 1 ? '' : '/'))
            .join('');
        return new RegExp(`^${body}$`);
    });
    return (path) => res.some((r) => r.test(path));
}
function inside(p, dir) {
    return p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
/**
 * What `run` must create, copy and bind for `profile`, given what exists
 * now. A write path ending in `/` is created as a directory when absent; a
 * file that does not exist is left out. Each is copied under `workDir`. A
 * read-only path gets a placeholder only inside a write path (elsewhere the
 * agent cannot create it anyway).
 */
export function planState(profile, home, workDir, found) {
    if (profile === null)
        return { profile: null, write: [], copies: [], keep: [], readOnly: [], private: [] };
    const write = profile.write.flatMap((w) => {
        const { path, dir } = readOnlyPath(w, home);
        const k = found(path);
        if (k !== null)
            return [{ path, create: false, dir: k === 'dir' }];
        return dir ? [{ path, create: true, dir: true }] : [];
    });
    const readOnly = profile.readOnly.flatMap((r) => {
        const { path, dir } = readOnlyPath(r, home);
        const k = found(path);
        if (k !== null)
            return [{ path, kind: k, create: false }];
        if (!write.some((w) => inside(path, w.path)))
            return [];
        return [{ path, kind: (dir ? 'dir' : 'file'), create: true }];
    });
    const privates = profile.private.map((f, i) => {
        const path = expandHome(f.path, home);
        return { ...f, path, copy: `${workDir}/private-${i}.json`, create: found(path) === null };
    });
    return {
        profile: profile.name,
        write: write.map(({ path, create }) => ({ path, create })),
        copies: write.map(({ path, dir }, i) => ({ path, copy: `${workDir}/copy-${i}`, dir })),
        keep: profile.keep.map((k) => expandHome(k, home)),
        readOnly,
        private: privates,
    };
}
