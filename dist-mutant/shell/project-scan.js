/**
 * The bounded walk over the writable roots of `run`'s sandbox that finds the
 * project controls below their tops (docs/sandbox.md, "Nested repositories
 * and directories"): at the start of a session, for the sandbox to keep them
 * read-only and to note what was there (`Inventory`); at its end, for
 * shell/project-check.ts to find what the agent made or changed.
 *
 * Paths are bytes: a directory name need not be UTF-8, and one read as a
 * string would come back with U+FFFD in it, a path that leads nowhere, so an
 * agent could hide a repository behind such a name. Symbolic links are not
 * followed; the inside of `.git` is not entered (it is looked at by its
 * parent). `node_modules` is heavy and installed, not written by hand: the
 * walk notes where each is, and the end of the session walks them on their
 * own (`NODE_MODULES_WALK`), for git directories only.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { laterKind } from './runs-later.js';
import { PROJECT_CONTROLS } from './sandbox-policy.js';
/**
 * The walk at each end of a session: past sandbox-runtime's depth 3, deep
 * enough for a monorepo's packages and their nested checkouts, and a few
 * hundred milliseconds on a large tree at most (docs/sandbox.md has the
 * figures). The end walk must see at least what the start walk saw, or an
 * unchanged control of the owner's would look new.
 */
export const WALK = { depth: 8, entries: 100_000 };
/**
 * The nested controls the sandbox keeps read-only: those in directories at
 * most this deep, in at most this many directories (each costs bubblewrap a
 * few mounts at start). Deeper or further ones are left to the check at the
 * end of the session.
 */
export const KEPT_DEPTH = 4;
export const KEPT_DIRS = 200;
/**
 * The walk of each `node_modules` at the end of a session, for git
 * directories only (a planted one is as good to git as any: through a
 * worktree's `commondir`, a `.git` file, or the owner's `cd`). Deeper than the
 * project walk (packages nest deep, and pnpm nests
 * `node_modules/.pnpm/<pkg>/node_modules/<pkg>`): about 0.1-0.2 s for this
 * repository's 15,000 entries, 0.4-0.5 s for 60,000-80,000 with a warm cache
 * (1.5-4 s cold; docs/sandbox.md).
 */
export const NODE_MODULES_WALK = { depth: 64, entries: 1_000_000 };
/** The first components of the project controls (`.git`, `.claude`, `.envrc`, ...). */
export const CONTROL_NAMES = new Set(PROJECT_CONTROLS.map((c) => c.split('/')[0]));
const SLASH = Buffer.from('/');
/** `dir/name` as bytes. */
export function child(dir, name) {
    return Buffer.concat([dir, SLASH, typeof name === 'string' ? Buffer.from(name) : name]);
}
/**
 * The directories under `roots` (breadth first, so a bound cuts the deepest
 * first) that hold project controls or files that run later, or are git
 * directories. `skip` names directories not to enter (the paths the sandbox
 * hides). `gitOnly` (the walk of a `node_modules`) enters `node_modules` too
 * and finds git directories and `.git` only.
 */
export function walkProject(roots, bounds, skip, gitOnly = false) {
    const found = [];
    const modules = [];
    let budget = bounds.entries;
    let bounded = false;
    const queue = roots.map((r) => ({
        dir: typeof r === 'string' ? Buffer.from(r) : r,
        depth: 0,
    }));
    for (let i = 0; i < queue.length; i++) {
        const { dir, depth } = queue[i];
        let entries;
        try {
            entries = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
        }
        catch {
            continue; // Gone, or not ours to read: nothing there for the owner's tools either.
        }
        if (entries.length > budget) {
            bounded = true;
            break;
        }
        budget -= entries.length;
        const names = [];
        const later = [];
        const has = new Set();
        const where = dir.toString('latin1');
        for (const e of entries) {
            // latin1 maps bytes to characters one to one: the ASCII names compare exactly.
            const name = e.name.toString('latin1');
            if (e.isDirectory())
                has.add(`${name}/`);
            else if (e.isFile())
                has.add(name);
            if (gitOnly ? name === '.git' : CONTROL_NAMES.has(name))
                names.push(name);
            if (!gitOnly && !e.isDirectory() && laterKind(where, name) !== null)
                later.push(name);
            if (!e.isDirectory() || name === '.git')
                continue;
            const sub = child(dir, e.name);
            if (skip(sub))
                continue;
            if (name === 'node_modules' && !gitOnly)
                modules.push(sub);
            else if (depth + 1 > bounds.depth)
                bounded = true;
            else
                queue.push({ dir: sub, depth: depth + 1 });
        }
        const bare = has.has('config') && has.has('objects/') && has.has('refs/');
        if (names.length > 0 || bare || later.length > 0)
            found.push({ dir, depth, names, bare, later });
    }
    return { found, bounded, modules };
}
/** The identity of a file for as long as it exists: device and inode. */
export function identity(st) {
    return `${st.dev}:${st.ino}`;
}
/** lstat as bigint, or null when nothing is there. */
export function look(p) {
    try {
        return lstatSync(p, { bigint: true });
    }
    catch {
        return null;
    }
}
