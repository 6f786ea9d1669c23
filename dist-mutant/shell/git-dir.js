/**
 * A git directory's layout as the end of `run` judges it (docs/sandbox.md,
 * "Nested repositories and directories"): an allow-list of what git writes
 * for ordinary work (gitrepository-layout(5): the object store, refs, logs,
 * the index, the `*_HEAD` files and messages, the state of a merge, rebase,
 * cherry-pick or bisect in progress), which is never judged, so that `git
 * commit`, `git checkout -b` and `git stash` inside `run` survive. Everything
 * else in it is judged: `config`, `config.worktree` by their keys, hooks by
 * name, `commondir` and a linked worktree's `commondir` and `gitdir` by where
 * they lead, submodules' git directories (`modules/`) as git directories, and
 * anything else the agent made or changed there (`info/`, `description`, a
 * file git does not know) as a whole.
 */
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { child, look } from './project-scan.js';
/** Top-level names git writes for ordinary work (gitrepository-layout(5)); `*.lock` too. */
export const GIT_ORDINARY = [
    'objects',
    'refs',
    'logs',
    'packed-refs',
    'index',
    'HEAD',
    'ORIG_HEAD',
    'FETCH_HEAD',
    'MERGE_HEAD',
    'MERGE_MSG',
    'MERGE_MODE',
    'MERGE_RR',
    'MERGE_AUTOSTASH',
    'AUTO_MERGE',
    'CHERRY_PICK_HEAD',
    'REVERT_HEAD',
    'REBASE_HEAD',
    'COMMIT_EDITMSG',
    'TAG_EDITMSG',
    'SQUASH_MSG',
    'shallow',
    'gc.pid',
    'gc.log',
    'rebase-merge',
    'rebase-apply',
    'sequencer',
    'rr-cache',
    'lfs',
    // What `git init` copies from its template and git reads as text only: gitweb's
    // description; exclude, attributes (a driver they name runs only if a config defines
    // it, and configs are judged), sparse-checkout.
    'description',
    'info',
    // A linked worktree's own directory: whether it is locked, and why.
    'locked',
];
/** Prefixes of names git writes for ordinary work: bisect's state, split index files, notes merges. */
const ORDINARY_PREFIX = ['BISECT_', 'sharedindex.', 'NOTES_MERGE_'];
/** Whether git writes `name` at the top of a git directory for ordinary work. Pure. */
export function ordinary(name) {
    return (GIT_ORDINARY.includes(name) ||
        name.endsWith('.lock') ||
        ORDINARY_PREFIX.some((p) => name.startsWith(p)));
}
function list(dir) {
    try {
        return readdirSync(dir, { encoding: 'buffer' });
    }
    catch {
        return []; // Not ours to read: not git's either, when it runs as us.
    }
}
/** Whether `dir` looks like a git directory to git: `objects/`, `refs/`, and a `config` or `HEAD`. */
function gitLike(dir) {
    const has = (n) => look(child(dir, n)) !== null;
    return has('objects') && has('refs') && (has('config') || has('HEAD'));
}
/** Submodules' git directories below `modules/` (their names may have slashes), bounded. */
function modulesOf(dir, depth, out) {
    if (depth > 4 || out.length > 200)
        return;
    for (const n of list(dir)) {
        const p = child(dir, n);
        if (look(p)?.isDirectory() !== true)
            continue;
        if (gitLike(p))
            out.push(p);
        else
            modulesOf(p, depth + 1, out);
    }
}
/** The parts of the git directory `dir` that are judged, with their roles. */
export function gitParts(dir, module = false, depth = 0) {
    const parts = [];
    const add = (name, path, role) => {
        const st = look(path);
        if (st !== null)
            parts.push({ name, path, st, role, module });
    };
    for (const n of list(dir)) {
        const name = n.toString('latin1');
        const path = child(dir, n);
        if (ordinary(name))
            continue;
        if (name === 'config' || name === 'config.worktree')
            add(name, path, 'config');
        else if (name === 'commondir')
            add(name, path, 'commondir');
        else if (name === 'hooks') {
            add(name, path, 'hooks');
            if (look(path)?.isDirectory() === true)
                for (const h of list(path))
                    add(`hooks/${h.toString('latin1')}`, child(path, h), 'hook');
        }
        else if (name === 'worktrees' && look(path)?.isDirectory() === true) {
            for (const id of list(path)) {
                const wt = child(path, id);
                if (look(wt)?.isDirectory() !== true)
                    continue;
                for (const e of list(wt)) {
                    const en = e.toString('latin1');
                    const ep = child(wt, e);
                    const at = `worktrees/${id.toString('latin1')}/${en}`;
                    if (en === 'commondir')
                        add(at, ep, 'wt-commondir');
                    else if (en === 'gitdir')
                        add(at, ep, 'wt-gitdir');
                    else if (en === 'config.worktree')
                        add(at, ep, 'config');
                    else if (!ordinary(en))
                        add(at, ep, 'other');
                }
            }
        }
        else if (name === 'modules' && depth < 3 && look(path)?.isDirectory() === true) {
            const found = [];
            modulesOf(path, 0, found);
            for (const m of found)
                parts.push(...gitParts(m, true, depth + 1));
        }
        else
            add(name, path, 'other');
    }
    return parts;
}
/** The first line of a small file, or null. */
function firstLine(path) {
    try {
        const text = readFileSync(path);
        if (text.length > 64 * 1024)
            return null;
        return text.toString('utf8').split('\n')[0]?.trim() ?? null;
    }
    catch {
        return null;
    }
}
function real(p) {
    try {
        return realpathSync(p);
    }
    catch {
        return null;
    }
}
/**
 * Whether a linked worktree's `commondir` (in `<common>/worktrees/<id>/`)
 * leads back to `<common>`, as `git worktree add` writes it (`../..`).
 */
export function commondirHome(path) {
    const text = firstLine(path);
    if (text === null || text === '')
        return false;
    const wt = dirname(path.toString('utf8'));
    const to = real(isAbsolute(text) ? text : resolve(wt, text));
    return to !== null && to === real(resolve(wt, '..', '..'));
}
/**
 * Whether a linked worktree's `gitdir` names a `.git` file that leads back to
 * this worktree's directory, as `git worktree add` writes both.
 */
export function gitdirHome(path) {
    const text = firstLine(path);
    if (text === null || text === '')
        return false;
    const wt = dirname(path.toString('utf8'));
    const file = isAbsolute(text) ? text : resolve(wt, text);
    const pointer = firstLine(file);
    if (pointer === null || !pointer.startsWith('gitdir:'))
        return false;
    const named = pointer.slice('gitdir:'.length).trim();
    const to = real(isAbsolute(named) ? named : resolve(dirname(file), named));
    return to !== null && to === real(wt);
}
