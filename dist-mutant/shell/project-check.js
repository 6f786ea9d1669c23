/**
 * The project controls below the tops of `run`'s writable roots
 * (docs/sandbox.md, "Nested repositories and directories"): a nested
 * repository's config and hooks, a nested `.envrc`, `.vscode/`, `.mcp.json`,
 * `.claude/settings.json`, ... that the owner's own tools would run later,
 * outside the sandbox.
 *
 * At the start (`projectStart`) the walk notes every control there is, by
 * device and inode, and names the directories whose controls the sandbox
 * keeps read-only. At the end (`projectCheck`), once the agent and its
 * processes are gone, a second walk finds each control the agent made or
 * changed, and makes it harmless by renaming it to `<name>.vault-held-<time>`,
 * a name no tool reads; the caller prints one line per item.
 *
 * "Made or changed" is decided by ctime, which the agent cannot set (it sets
 * mtime at will), and by identity: a control that was not there at the start
 * is new even when its own ctime is old, since renaming a directory into
 * place leaves the ctimes of what is inside it as they were. A repository's
 * configuration is judged by its keys (shell/git-config.ts) and its hooks by
 * name, so that a plain `git init` or `git clone` by the agent survives;
 * everything else the agent made among the controls is held.
 */
import { existsSync, openSync, readSync, closeSync, readdirSync, renameSync, statSync, } from 'node:fs';
import { oneLine } from '../src/core/errors.js';
import { commondirHome, gitdirHome, gitParts } from './git-dir.js';
import { gitConfigKeys, unsafeGitKeys } from './git-config.js';
import { child, identity, KEPT_DEPTH, KEPT_DIRS, look, NODE_MODULES_WALK, walkProject, WALK, } from './project-scan.js';
import { laterKind, laterPart, MAX_LATER_LINES } from './runs-later.js';
import { PROJECT_CONTROLS } from './sandbox-policy.js';
/**
 * Coarse file systems keep ctime in whole seconds (ext3) or two (FAT): a
 * change in the session's first moments must not read as older than it.
 */
const CLOCK_SLACK_NS = 2000000000n;
/** The controls under the `.claude` directory (it is itself only their container). */
const CLAUDE = PROJECT_CONTROLS.filter((c) => c.startsWith('.claude/') && c !== '.claude/').map((c) => c.slice('.claude/'.length).replace(/\/$/, ''));
/** The controls in a directory the walk found. */
function itemsOf(f) {
    const items = [];
    const add = (path, container) => {
        const st = look(path);
        if (st === null)
            return;
        const kind = !st.isDirectory() ? 'file' : container === 'git' ? 'gitdir' : 'dir';
        items.push({ kind, path, st });
    };
    if (f.bare)
        add(f.dir, 'git');
    for (const name of f.names) {
        const path = child(f.dir, name);
        if (name === '.git')
            add(path, 'git');
        else if (name === '.claude' && look(path)?.isDirectory() === true)
            for (const c of CLAUDE)
                add(child(path, c), 'plain');
        else
            add(path, 'plain');
    }
    return items;
}
/** The paths the sandbox hides, or that the owner opened: not walked, not judged. */
function outside(paths) {
    const bufs = paths.map((p) => Buffer.from(p));
    return (p) => bufs.some((b) => p.equals(b) ||
        (p.length > b.length && p[b.length] === 0x2f && p.subarray(0, b.length).equals(b)));
}
/**
 * What there is at the start of a session in `roots` (the working directory
 * first, then the --allow-write directories), besides the paths in `skip`.
 */
export function projectStart(roots, skip, now, hooksDir = null) {
    const since = BigInt(now) * 1000000n - CLOCK_SLACK_NS;
    const walk = walkProject(roots, WALK, outside(skip));
    const seen = new Map();
    const within = new Map();
    const dirs = new Set();
    const nested = [];
    const keep = [];
    const later = new Map();
    const note = (st, path) => {
        seen.set(identity(st), st.ctimeNs);
        const newest = st.isDirectory() ? newestWithin(path) : null;
        if (newest !== null)
            within.set(identity(st), newest);
    };
    for (const f of walk.found) {
        const st = look(f.dir);
        if (st !== null)
            dirs.add(identity(st));
        for (const item of itemsOf(f)) {
            seen.set(identity(item.st), item.st.ctimeNs);
            const newest = item.kind === 'dir' ? newestWithin(item.path) : null;
            if (newest !== null)
                within.set(identity(item.st), newest);
            if (item.kind === 'gitdir')
                for (const p of gitParts(item.path)) {
                    note(p.st, p.path);
                    if (f.depth <= KEPT_DEPTH && item.path !== f.dir && keepable(p))
                        keep.push(p.path.toString('utf8'));
                }
        }
        for (const name of f.later) {
            const path = child(f.dir, name);
            const kind = laterKind(f.dir.toString('latin1'), name);
            const lst = look(path);
            if (kind === null || lst === null)
                continue;
            const part = kind.part === undefined ? null : laterPart(kind, path);
            later.set(path.toString('latin1'), { id: identity(lst), ctime: lst.ctimeNs, part });
        }
        const text = f.dir.toString('utf8');
        // A name that is not UTF-8 cannot be given to bubblewrap: the end check has it.
        if (f.depth >= 1 && f.depth <= KEPT_DEPTH && Buffer.from(text).equals(f.dir))
            if (f.names.length > 0 && nested.length < KEPT_DIRS)
                nested.push(text);
    }
    const cut = walk.found.filter((f) => f.depth >= 1 && f.depth <= KEPT_DEPTH && f.names.length > 0);
    const hooks = hooksDir === null ? null : look(Buffer.from(hooksDir));
    if (hooksDir !== null && hooks !== null) {
        note(hooks, Buffer.from(hooksDir));
        if (hooks.isDirectory())
            keep.push(hooksDir);
    }
    const kept = keep.slice(0, KEPT_PATHS);
    return {
        roots,
        since,
        seen,
        within,
        dirs,
        nested,
        bounded: walk.bounded || cut.length > nested.length || kept.length < keep.length,
        later,
        hooksDir,
        keep: kept,
    };
}
/** Paths kept read-only besides the controls, at most (each is a mount). */
const KEPT_PATHS = 200;
/**
 * Whether the sandbox keeps a part of a git directory read-only: what is not
 * already a control (`config`, `hooks/`, `modules/` are), and can be bound
 * (no link: a mount would land on its target; a UTF-8 name, for bubblewrap).
 */
function keepable(p) {
    const text = p.path.toString('utf8');
    if (p.module || p.st.isSymbolicLink() || !Buffer.from(text).equals(p.path))
        return false;
    if (p.role === 'hook' || p.role === 'hooks')
        return false;
    return p.role !== 'config' || p.name.startsWith('worktrees/');
}
/** Entries read at most under one control directory to see whether anything in it changed. */
const DIR_ENTRIES = 10_000;
/** The newest ctime under `dir` (itself excluded; 0 when empty), or null when there is more than the bound. */
function newestWithin(dir) {
    const queue = [dir];
    let budget = DIR_ENTRIES;
    let newest = 0n;
    for (let i = 0; i < queue.length; i++) {
        let entries;
        try {
            entries = readdirSync(queue[i], { encoding: 'buffer' });
        }
        catch {
            continue;
        }
        budget -= entries.length;
        if (budget < 0)
            return null;
        for (const name of entries) {
            const p = child(queue[i], name);
            const st = look(p);
            if (st === null)
                continue;
            if (st.ctimeNs > newest)
                newest = st.ctimeNs;
            if (st.isDirectory())
                queue.push(p);
        }
    }
    return newest;
}
/** Whether `st` is nothing the owner's tools could run: an empty file or directory. */
function empty(path, st) {
    if (st.isFile())
        return st.size === 0n;
    if (!st.isDirectory())
        return false;
    try {
        return readdirSync(path).length === 0;
    }
    catch {
        return false;
    }
}
/** The first `max` bytes of a file (following a link), or null. */
function head(path, max) {
    try {
        const fd = openSync(path, 'r');
        try {
            const buf = Buffer.alloc(max + 1);
            const n = readSync(fd, buf, 0, buf.length, 0);
            return n > max ? null : buf.subarray(0, n);
        }
        finally {
            closeSync(fd);
        }
    }
    catch {
        return null;
    }
}
/** A configuration larger than this is held unread: git's own are a few hundred bytes. */
const MAX_CONFIG = 1024 * 1024;
/**
 * Why the agent's git configuration would make the owner's git run
 * something, or null when every key in it is harmless.
 */
function unsafeConfig(path, git) {
    if (git === null)
        return 'a git configuration written in the session (git is not on PATH to read it)';
    const text = head(path, MAX_CONFIG);
    if (text === null)
        return 'a git configuration written in the session that could not be read';
    const keys = gitConfigKeys(git, text);
    if (keys === null)
        return 'a git configuration written in the session that git cannot parse';
    const bad = unsafeGitKeys(keys);
    if (bad.length === 0)
        return null;
    const shown = bad.slice(0, 3).join(', ') + (bad.length > 3 ? `, and ${bad.length - 3} more` : '');
    return `git configuration written in the session sets ${shown}`;
}
/** `<name>.vault-held-<time>` beside `path`, one that does not exist yet. */
function heldName(path, stamp) {
    for (let n = 0;; n++) {
        const to = Buffer.concat([path, Buffer.from(`.vault-held-${stamp}${n === 0 ? '' : `-${n}`}`)]);
        if (!existsSync(to))
            return to;
    }
}
/**
 * The session's end: every control in `start.roots` the agent made or
 * changed that the owner's tools would run is renamed aside. `opened` are the
 * controls the owner opened with --allow-write (left alone), `kept` those the
 * sandbox bound read-only (the agent could not change them: a change there is
 * the owner's own, from outside, and is left alone), `skip` the paths the
 * sandbox hid; `git` is the owner's git, to read configurations with. Call it
 * only once nothing of the sandbox runs any more.
 */
export function projectCheck(start, o) {
    const walk = walkProject(start.roots, WALK, outside(o.skip));
    // Each node_modules, for git directories only (the start does not walk them: they are not kept).
    const modules = walkProject(walk.modules, NODE_MODULES_WALK, outside(o.skip), true);
    const opened = outside([...o.opened, ...o.kept]);
    const stamp = o.now
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.[0-9]+/, '');
    const held = [];
    const hold = (path, why) => {
        const to = heldName(path, stamp);
        try {
            renameSync(path, to);
            held.push({ path, why, to });
        }
        catch {
            // Gone meanwhile: nothing left to run.
        }
    };
    for (const f of [...walk.found, ...modules.found]) {
        const dir = look(f.dir);
        // In a directory the start did not look into, and which the session did not make, nothing is known to be new.
        const known = dir !== null && (start.dirs.has(identity(dir)) || dir.ctimeNs >= start.since);
        // What was there at the start is the session's if its ctime moved; what was not, if it is new
        // here (or, where nothing is known, if its ctime is the session's).
        const fresh = (st) => {
            const then = start.seen.get(identity(st));
            return then !== undefined ? st.ctimeNs !== then : known || st.ctimeNs >= start.since;
        };
        for (const item of itemsOf(f)) {
            if (opened(item.path))
                continue;
            if (item.kind === 'gitdir') {
                // By part, not by the directory: the owner's own repository changes with every commit.
                for (const part of gitParts(item.path)) {
                    if (opened(part.path) || !fresh(part.st) || empty(part.path, part.st))
                        continue;
                    const why = judgePart(part, o.git, start);
                    if (why !== null)
                        hold(part.path, why);
                }
            }
            else if (item.kind === 'dir') {
                // Made, moved in, or anything in it newer than what was there (an entry renamed in is new too).
                if (changedDir(item.path, item.st, start, fresh(item.st)))
                    hold(item.path, 'made or changed in the session');
            }
            else {
                let changed = fresh(item.st);
                if (item.st.isSymbolicLink())
                    try {
                        changed ||= statSync(item.path, { bigint: true }).ctimeNs >= start.since;
                    }
                    catch {
                        // A link to nothing: what it names could be made later.
                    }
                if (changed && !empty(item.path, item.st))
                    hold(item.path, 'made or changed in the session');
            }
        }
    }
    if (start.hooksDir !== null) {
        const path = Buffer.from(start.hooksDir);
        const st = look(path);
        const then = st === null ? undefined : start.seen.get(identity(st));
        if (st !== null && !opened(path) && changedDir(path, st, start, then !== st.ctimeNs))
            hold(path, 'the core.hooksPath directory, made or changed in the session');
    }
    const heldPaths = new Set(held.map((h) => h.path.toString('latin1')));
    const later = laterChanged(walk.found, start, heldPaths);
    return { held, later, bounded: walk.bounded || start.bounded || modules.bounded };
}
/** Whether a control directory is new or anything in it is newer than at the start. */
function changedDir(path, st, start, fresh) {
    const then = start.within.get(identity(st)) ?? start.since - 1n;
    const newest = newestWithin(path);
    return (fresh || newest === null || newest > then) && !empty(path, st);
}
/** Why a part of a git directory the agent made or changed is held, or null when it stays. */
function judgePart(part, git, start) {
    switch (part.role) {
        case 'config':
            return part.st.isFile() ? unsafeConfig(part.path, git) : 'a link made in the session';
        case 'commondir':
            return "made in the session: it points git at another directory's configuration";
        case 'wt-commondir':
            return part.st.isFile() && commondirHome(part.path)
                ? null
                : "a linked worktree's commondir made or changed in the session: it points git at another directory's configuration";
        case 'wt-gitdir':
            return part.st.isFile() && gitdirHome(part.path)
                ? null
                : "a linked worktree's gitdir made or changed in the session";
        case 'hooks':
            return part.st.isDirectory() ? null : 'hooks replaced in the session';
        case 'hook':
            return part.name.endsWith('.sample') ? null : 'a hook made or changed in the session';
        case 'other':
            if (part.st.isDirectory() && !changedDir(part.path, part.st, start, true))
                return null;
            return 'made or changed in the session in a git directory, outside what git writes for ordinary work';
    }
}
/** The files that run later the session made or changed (their running part, where only a part runs). */
function laterChanged(found, start, held) {
    const out = [];
    for (const f of found)
        for (const name of f.later) {
            const path = child(f.dir, name);
            const key = path.toString('latin1');
            const kind = laterKind(f.dir.toString('latin1'), name);
            const st = look(path);
            if (kind === null || st === null || held.has(key))
                continue;
            const then = start.later.get(key);
            const changed = then === undefined
                ? st.ctimeNs >= start.since
                : then.id !== identity(st) || then.ctime !== st.ctimeNs;
            if (!changed)
                continue;
            if (kind.part !== undefined) {
                const part = laterPart(kind, path);
                if (part === (then?.part ?? null))
                    continue;
            }
            out.push({ path, why: kind.why });
        }
    return out;
}
/** `path` for a terminal line: control characters and invisible ones escaped. */
export function shown(path) {
    return oneLine(path.toString('utf8'));
}
/** The lines `run` prints on stderr for what the check did. */
export function heldLines(r) {
    const lines = r.held.map((h) => `vault-cli: held ${shown(h.path)}: ${oneLine(h.why)}; renamed to ${shown(h.to)}, which no tool reads (docs/sandbox.md)`);
    const later = r.later ?? [];
    for (const l of later.slice(0, MAX_LATER_LINES))
        lines.push(`vault-cli: runs later ${shown(l.path)}: ${oneLine(l.why)}; changed in the session and left as the agent wrote it: read it before your tools run it (docs/sandbox.md)`);
    if (later.length > MAX_LATER_LINES)
        lines.push(`vault-cli: runs later: ${later.length - MAX_LATER_LINES} more files changed in the session that your tools run (docs/sandbox.md)`);
    if (r.bounded)
        lines.push(`vault-cli: warning: the walk over project controls stopped at its bound (${WALK.depth} levels, ${WALK.entries} entries, ${KEPT_DIRS} directories kept read-only): what is beyond was neither kept nor checked (docs/sandbox.md)`);
    return lines;
}
