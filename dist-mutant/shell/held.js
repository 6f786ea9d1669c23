/**
 * What `run` held of an agent's state (shell/agent-state.ts): one folder per
 * session under the held directory (outside everything the sandbox shows),
 * with the held files at their own paths and a manifest naming each; and the
 * owner's way to bring one back (`vault-cli held restore`, docs/run.md).
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync, } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { VaultError } from '../src/core/errors.js';
import { expandHome, overlay } from './profiles.js';
const SESSION = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$/;
/** A new session's name: when it started, and six random hex digits. */
export function sessionName(now, random) {
    const t = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    return `${t}-${random.slice(0, 6)}`;
}
/** The folder of one session's held things. */
export function sessionFolder(root, session) {
    return join(root, session);
}
/**
 * `~/` for the home directory, as the held lines show paths; a path with a
 * control character or a quote (the agent names its files) is shown quoted,
 * escaped, so that it can neither drive the owner's terminal nor pass for two lines.
 */
export function shownPath(p, home = homedir()) {
    const shown = p.startsWith(`${home}/`) ? `~${p.slice(home.length)}` : p;
    return /[\u0000-\u001f\u007f-\u009f"\\]/.test(shown) ? JSON.stringify(shown) : shown;
}
/** Records the held items of a session, creating its folder (only the owner's). */
export class HeldSession {
    folder;
    manifest;
    constructor(root, session, profile) {
        this.folder = sessionFolder(root, session);
        this.manifest = { session, profile, at: new Date().toISOString(), items: [] };
    }
    get items() {
        return this.manifest.items;
    }
    place(stored) {
        mkdirSync(dirname(join(this.folder, stored)), { recursive: true, mode: 0o700 });
        return join(this.folder, stored);
    }
    /** Moves `from` (the agent's copy, same file system) into the folder as what would be `path`. */
    move(from, path, kind) {
        const stored = join('files', path);
        renameSync(from, this.place(stored));
        this.manifest.items.push({ path, kind, stored });
    }
    /** Keeps the held keys of a JSON file (their values are the agent's, never printed). */
    keys(path, held, keys) {
        const stored = join('keys', `${this.manifest.items.length}.json`);
        writeFileSync(this.place(stored), `${JSON.stringify(held, null, 2)}\n`, { mode: 0o600 });
        this.manifest.items.push({ path, kind: 'keys', stored, keys });
    }
    /** Writes the manifest when anything was held. */
    save() {
        if (this.manifest.items.length === 0)
            return;
        mkdirSync(this.folder, { recursive: true, mode: 0o700 });
        chmodSync(this.folder, 0o700);
        writeFileSync(join(this.folder, 'manifest.json'), `${JSON.stringify(this.manifest, null, 2)}\n`, {
            mode: 0o600,
        });
    }
}
function nothingHeld(what) {
    return new VaultError('VLT-1014', `${what} (\`vault-cli held\` lists what is held).`);
}
/** The manifest of `session` under `root`. @throws VaultError VLT-1014 when there is none. */
export function readManifest(root, session) {
    if (!SESSION.test(session))
        throw nothingHeld(`No held session ${JSON.stringify(session)}`);
    try {
        return JSON.parse(readFileSync(join(sessionFolder(root, session), 'manifest.json'), 'utf8'));
    }
    catch {
        throw nothingHeld(`Nothing is held for session ${session}`);
    }
}
/** Every session with something held, oldest first. */
export function heldSessions(root) {
    let names;
    try {
        names = readdirSync(root).filter((n) => SESSION.test(n));
    }
    catch {
        return [];
    }
    return names.sort().flatMap((n) => {
        try {
            return [readManifest(root, n)];
        }
        catch {
            return [];
        }
    });
}
function writeJson(path, value) {
    let mode = 0o600;
    try {
        mode = lstatSync(path).mode & 0o777;
    }
    catch {
        // A new file: the owner's alone.
    }
    const tmp = join(dirname(path), `.${path.split('/').pop() ?? 'state'}.vault-cli-${process.pid}`);
    writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode, flag: 'wx' });
    renameSync(tmp, path);
}
/** Brings one held item back to its path: the owner's choice, so it replaces what is there. */
function restoreItem(folder, item) {
    const from = join(folder, item.stored);
    mkdirSync(dirname(item.path), { recursive: true, mode: 0o700 });
    if (item.kind === 'keys') {
        let owner = {};
        try {
            owner = JSON.parse(readFileSync(item.path, 'utf8'));
        }
        catch {
            // Gone or broken: the held keys make a new one.
        }
        writeJson(item.path, overlay(owner, JSON.parse(readFileSync(from, 'utf8'))));
        rmSync(from);
        return;
    }
    let there;
    try {
        there = lstatSync(item.path);
    }
    catch {
        // Nothing there.
    }
    if (there?.isDirectory() === true)
        throw new VaultError('VLT-1015', `${item.path} is a directory now; the held file stays held.`);
    renameSync(from, item.path);
}
/**
 * Restores what `session` held at `path` (that path or below it; every item
 * when `path` is undefined). Returns the paths restored.
 * @throws VaultError VLT-1014 when nothing held matches.
 */
export function restoreHeld(root, session, path) {
    const m = readManifest(root, session);
    const want = path === undefined ? undefined : expandHome(path, homedir()).replace(/\/+$/, '');
    const chosen = m.items.filter((i) => want === undefined || i.path === want || i.path.startsWith(`${want}/`));
    if (chosen.length === 0)
        throw nothingHeld(`Session ${session} holds nothing at ${path ?? '?'}`);
    const folder = sessionFolder(root, session);
    const done = [];
    try {
        for (const item of chosen) {
            restoreItem(folder, item);
            done.push(item.path);
        }
    }
    finally {
        const left = m.items.filter((i) => !done.includes(i.path));
        if (left.length === 0)
            rmSync(folder, { recursive: true, force: true });
        else
            writeFileSync(join(folder, 'manifest.json'), `${JSON.stringify({ ...m, items: left }, null, 2)}\n`, { mode: 0o600 });
    }
    return done;
}
/** At most this many held things are named one a line; `vault-cli held <session>` lists them all. */
const NAMED = 100;
/**
 * The lines `run` ends with for what it held: one per thing (a path, or a
 * JSON file's key), then where it is and the one command that brings it back.
 */
export function heldLines(held, session, profile) {
    const each = held.items.flatMap((i) => i.kind === 'keys'
        ? (i.keys ?? []).map((k) => `vault-cli: held ${shownPath(i.path)} key ${k}: not on the ${profile} profile's keep list`)
        : [`vault-cli: held ${shownPath(i.path)}: not on the ${profile} profile's keep list`]);
    if (each.length === 0)
        return [];
    const out = each.slice(0, NAMED);
    if (each.length > NAMED)
        out.push(`vault-cli: held ${each.length - NAMED} more: vault-cli held ${session} lists them`);
    out.push(`vault-cli: what the agent changed in its state is held in ${held.folder}: \`vault-cli held restore ${session} <path>\` brings one back (docs/run.md)`);
    return out;
}
