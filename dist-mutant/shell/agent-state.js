/**
 * Carries out a profile's state plan (shell/profiles.ts) around one `run`
 * session. Before the agent starts: the state paths it writes are copied
 * (its private copies, bound where the owner's are), with a note of what
 * each copied entry is (inode and change time, which nothing in the sandbox
 * can set back); the placeholders the sandbox binds read-only; the private
 * copies of mixed JSON files. After it ends, and after its sandbox is gone
 * (so nothing of the agent's can race this): each entry the agent made or
 * changed in a copy comes back into the owner's home only when it is a
 * regular, non-executable file on the profile's `keep` list; everything else
 * is held (shell/held.ts). A JSON file comes back by its `keep` keys alone.
 *
 * The copies are the agent's territory: they are walked with lstat, never
 * following a link, and only ever read as regular files; what comes back is
 * written as a new file of the owner's beside its place and renamed over it,
 * into directories that are directories in the owner's home.
 */
import { chmodSync, constants, copyFileSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmdirSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync, } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { shownPath } from './held.js';
import { keepMatcher, mergeKept, placeholder } from './profiles.js';
const CLONE = constants.COPYFILE_FICLONE;
/** A kept file larger than this (a sparse one the agent made to exhaust `run`'s memory) is held. */
const KEPT_MAX = 1n << 30n;
function identity(st) {
    return `${st.ino}:${st.ctimeNs}`;
}
/** Copies `from` to `to` (files, directories, links; nothing else), noting each entry in `seen`. */
function copyTree(from, to, seen) {
    const st = lstatSync(from);
    if (st.isSymbolicLink())
        symlinkSync(readlinkSync(from), to);
    else if (st.isDirectory()) {
        mkdirSync(to, { mode: 0o700 });
        for (const name of readdirSync(from))
            copyTree(join(from, name), join(to, name), seen);
        chmodSync(to, (st.mode & 0o777) | 0o700);
    }
    else if (st.isFile()) {
        copyFileSync(from, to, CLONE);
        chmodSync(to, st.mode & 0o777);
        // The times too: agents find their latest transcript by them (`claude --continue`).
        utimesSync(to, st.atime, st.mtime);
    }
    else
        return;
    const now = lstatSync(to, { bigint: true });
    seen.set(to, { id: identity(now), size: now.size });
}
/** Creates what the plan says is missing, the copies and the private copies. */
export function applyState(plan) {
    for (const w of plan.write)
        if (w.create)
            mkdirSync(w.path, { recursive: true, mode: 0o700 });
    for (const r of plan.readOnly) {
        if (!r.create)
            continue;
        if (r.kind === 'dir')
            mkdirSync(r.path, { mode: 0o700 });
        else
            writeFileSync(r.path, placeholder(r.path), { mode: 0o600, flag: 'wx' });
    }
    const seen = new Map();
    if (plan.copies.length > 0 || plan.private.length > 0)
        mkdirSync(dirname(plan.copies[0]?.copy ?? plan.private[0]?.copy ?? '/'), {
            recursive: true,
            mode: 0o700,
        });
    for (const c of plan.copies)
        copyTree(c.path, c.copy, seen);
    for (const f of plan.private) {
        if (f.create)
            writeFileSync(f.path, '{}\n', { mode: 0o600, flag: 'wx' });
        copyFileSync(f.path, f.copy);
        chmodSync(f.copy, 0o600);
    }
    return { seen };
}
function json(file) {
    return JSON.parse(readFileSync(file, 'utf8'));
}
/**
 * Writes the copy's file `src` at the owner's `dest` below `root`: every
 * directory on the way a directory of the owner's (made when missing), the
 * file new and renamed into place (a link there is replaced, never
 * followed). When the owner's file only grew since the start and the copy
 * too, the copy's growth is appended to the owner's (two sessions' history).
 * Returns why it could not, or null.
 */
function bringBack(src, dest, root, start) {
    let d = root;
    for (const part of relative(root, dirname(dest))
        .split('/')
        .filter((x) => x !== '')) {
        d = join(d, part);
        try {
            if (!lstatSync(d).isDirectory())
                return `${shownPath(d)} is no directory in your home`;
        }
        catch {
            mkdirSync(d, { mode: 0o700 });
        }
    }
    const tmp = join(dirname(dest), `.${basename(dest)}.vault-cli-${process.pid}`);
    const copy = readFileSync(src);
    let data = copy;
    try {
        const mine = lstatSync(dest);
        const owner = mine.isFile() ? readFileSync(dest) : null;
        if (start !== null && owner !== null && owner.length > start && copy.length >= start) {
            const n = Number(start);
            if (owner.subarray(0, n).equals(copy.subarray(0, n)))
                data = Buffer.concat([owner, copy.subarray(n)]);
        }
    }
    catch {
        // Nothing of the owner's there yet.
    }
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, dest);
    return null;
}
/** Files compared byte for byte with the owner's; a larger one rewritten is judged as changed. */
const SAME_MAX = 64n << 20n;
/**
 * Whether the copy's file `at` is the owner's file at `owner` as it is now:
 * a regular file (never a link) with the same permission bits and the same
 * bytes. Such a file changes nothing in the owner's home, so it is neither
 * held nor written back.
 */
function sameAsOwner(at, owner, st) {
    try {
        const mine = lstatSync(owner, { bigint: true });
        if (!mine.isFile() || mine.size !== st.size || st.size > SAME_MAX)
            return false;
        if ((mine.mode & 4095n) !== (st.mode & 4095n))
            return false;
        return readFileSync(at).equals(readFileSync(owner));
    }
    catch {
        return false;
    }
}
/** Judges every entry of one copy: back when kept, held otherwise; unchanged ones stay as they are. */
function judge(at, owner, root, ctx) {
    const st = lstatSync(at, { bigint: true });
    if (st.isDirectory()) {
        for (const name of readdirSync(at))
            judge(join(at, name), join(owner, name), root, ctx);
        return;
    }
    const before = ctx.started.seen.get(at);
    if (before?.id === identity(st))
        return;
    // Rewritten with the owner's very bytes and mode (Codex unpacks its
    // `skills/.system` anew at every start): no change to the owner's home.
    if (st.isFile() && sameAsOwner(at, owner, st))
        return;
    if (st.isFile() && st.size > KEPT_MAX)
        ctx.said.push(`${shownPath(owner)} is over 1 GiB: held`);
    else if (st.isFile() && (st.mode & 73n) === 0n && ctx.kept(owner)) {
        const why = bringBack(at, owner, root, before?.size ?? null);
        if (why === null)
            return;
        ctx.said.push(`${shownPath(owner)} was not brought back: ${why}`);
    }
    ctx.held.move(at, owner, st.isFile() ? 'file' : st.isSymbolicLink() ? 'link' : 'other');
}
/**
 * Brings back what the profile keeps, holds the rest, merges each private
 * copy back by its keep keys and removes the placeholders that are as
 * `applyState` left them. Call it only once the agent's processes are gone.
 * Returns a line for each thing it could not do (never a value).
 */
export function finishState(plan, started, held) {
    const said = [];
    const kept = keepMatcher(plan.keep, '/');
    for (const c of plan.copies) {
        try {
            judge(c.copy, c.path, c.dir ? c.path : dirname(c.path), { started, kept, held, said });
        }
        catch (err) {
            // What was not judged is held whole: nothing of it reaches the owner's home unseen.
            try {
                held.move(c.copy, c.path, 'other');
            }
            catch {
                // Removed with the session's work folder: it never reaches the owner's home either.
            }
            said.push(`the agent's copy of ${c.path} was not all judged (${err.message}); the rest of it is held`);
        }
    }
    for (const f of plan.private) {
        try {
            let owner = {};
            try {
                owner = json(f.path);
            }
            catch {
                // The owner's file is gone or broken: the copy's kept keys make a new one.
            }
            const m = mergeKept(owner, json(f.copy), f.keep);
            // Written beside it and renamed: the owner's file is never half-written.
            const tmp = join(dirname(f.path), `.${basename(f.path)}.vault-cli-${process.pid}`);
            const mode = (() => {
                try {
                    return statSync(f.path).mode & 0o777;
                }
                catch {
                    return 0o600;
                }
            })();
            writeFileSync(tmp, `${JSON.stringify(m.merged, null, 2)}\n`, { mode });
            renameSync(tmp, f.path);
            if (m.held !== null)
                held.keys(f.path, m.held, m.dropped);
        }
        catch {
            said.push(`the agent's copy of ${f.path} was not merged back (not JSON); yours is unchanged`);
        }
    }
    held.save();
    for (const r of [...plan.readOnly].reverse()) {
        if (!r.create)
            continue;
        try {
            if (r.kind === 'dir') {
                if (readdirSync(r.path).length === 0)
                    rmdirSync(r.path);
            }
            else if (readFileSync(r.path, 'utf8') === placeholder(r.path))
                unlinkSync(r.path);
        }
        catch {
            // Already gone, or changed by the owner meanwhile: theirs now.
        }
    }
    return said;
}
