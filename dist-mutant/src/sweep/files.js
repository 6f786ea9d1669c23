/**
 * The transcript sweep's file side: which files it reads, how it reads them,
 * and how it rewrites one. What it walks may have been arranged by a
 * prompt-injected agent, so: no symbolic link is followed below a store's
 * root (nor at a known store's root), only regular files are read (a FIFO is
 * opened without blocking and dropped), files past a size are skipped and
 * named, the walk is bounded in depth and count, and a file is read in
 * fixed-size chunks, never a line at a time, so no line length matters.
 * Nothing here writes a value: the one file written is the rewrite, which
 * holds references where the values were.
 */
import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, lstatSync, openSync, read, readSync, readdirSync, renameSync, statSync, unlinkSync, writeSync, } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
/** Bytes read at a time. */
export const CHUNK_BYTES = 1 << 20;
/** Directory levels below a store's root. */
const MAX_DEPTH = 12;
/** Files one sweep looks at; past it the walk stops and says so. */
export const MAX_FILES = 200_000;
/** Occurrences kept per file (the first ones): a file full of one value is one finding to the owner. */
const MAX_HITS_PER_FILE = 10_000;
/** The first link between `base` and `path` (exclusive of base), or null. */
function linkOnTheWay(base, path) {
    const rel = relative(base, path);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
        return null;
    let at = base;
    for (const part of rel.split(sep).slice(0, -1)) {
        at = join(at, part);
        try {
            if (lstatSync(at).isSymbolicLink())
                return at;
        }
        catch {
            return null;
        }
    }
    return null;
}
/**
 * The regular files under each root (a root may be a file). A missing known
 * store is no news; a missing --path is reported.
 */
export function walk(roots, maxFileBytes) {
    const files = [];
    const skipped = [];
    const seen = new Set();
    const visit = (path, agent, depth, follow) => {
        if (files.length >= MAX_FILES)
            return;
        let st;
        try {
            st = follow ? statSync(path) : lstatSync(path);
        }
        catch {
            if (depth === 0 && follow)
                skipped.push({ path, reason: 'not found' });
            return;
        }
        if (st.isSymbolicLink()) {
            skipped.push({ path, reason: 'a symbolic link (not followed)' });
            return;
        }
        const id = `${st.dev}:${st.ino}`;
        if (seen.has(id))
            return;
        seen.add(id);
        if (st.isDirectory()) {
            if (depth >= MAX_DEPTH) {
                skipped.push({ path, reason: `deeper than ${MAX_DEPTH} levels` });
                return;
            }
            let names;
            try {
                names = readdirSync(path).sort();
            }
            catch {
                skipped.push({ path, reason: 'not readable' });
                return;
            }
            for (const n of names)
                visit(join(path, n), agent, depth + 1, false);
            return;
        }
        if (!st.isFile()) {
            skipped.push({ path, reason: 'not a regular file' });
            return;
        }
        if (st.size > maxFileBytes) {
            skipped.push({ path, reason: `larger than ${maxFileBytes} bytes (--max-file-size)` });
            return;
        }
        files.push({ path, agent, size: st.size });
    };
    for (const r of roots) {
        const link = r.base === undefined ? null : linkOnTheWay(r.base, r.path);
        if (link !== null)
            skipped.push({ path: r.path, reason: `${link} is a symbolic link (not followed)` });
        else
            visit(r.path, r.agent, 0, r.explicit);
    }
    if (files.length >= MAX_FILES) {
        skipped.push({ path: '(the rest)', reason: `more than ${MAX_FILES} files` });
    }
    return { files, skipped };
}
/** An open file that is a regular file of at most `maxFileBytes`, or why not. */
export function openRegular(path, maxFileBytes) {
    let fd;
    try {
        // O_NONBLOCK: a FIFO swapped in since the walk opens at once instead of waiting for a writer.
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    }
    catch (err) {
        const code = err.code;
        return { skipped: code === 'ELOOP' ? 'a symbolic link (not followed)' : 'not readable' };
    }
    const st = fstatSync(fd);
    if (!st.isFile()) {
        closeSync(fd);
        return { skipped: 'not a regular file' };
    }
    if (st.size > maxFileBytes) {
        closeSync(fd);
        return { skipped: `larger than ${maxFileBytes} bytes (--max-file-size)` };
    }
    return { fd, st };
}
/**
 * The buffers one sweep reads through, reused from file to file (a sweep of
 * many files allocated 2 MiB a file, and the collector ran for it), zeroed
 * as far as each was written after every file.
 */
export class ChunkBuffers {
    bufs = [];
    /** How far each buffer has been written since it was last zeroed. */
    dirty = [];
    /** Buffer `i` (0 and 1: the chunks; 2: the line counter's), written up to `upTo`. */
    take(i, upTo) {
        const b = (this.bufs[i] ??= Buffer.allocUnsafe(CHUNK_BYTES));
        this.dirty[i] = Math.max(this.dirty[i] ?? 0, upTo);
        return b;
    }
    wipe() {
        this.bufs.forEach((b, i) => b.fill(0, 0, this.dirty[i]));
        this.dirty.fill(0);
    }
}
/**
 * Every occurrence of the matcher's patterns in the file from `from` to its
 * end (at most `limit` bytes), with the line each starts on, in one pass:
 * past the first chunk, the next chunk is read (on libuv's pool, so on
 * another core) while this one is scanned; a file that ends within a chunk
 * is read synchronously, a round trip through the pool costing more than its
 * read. Lines are counted as the scan goes (see LineCounter). The buffers are
 * zeroed after. Returns the hits (at most MAX_HITS_PER_FILE) and where
 * reading stopped.
 */
export async function scanFd(fd, matcher, buffers, from = 0, limit = Infinity) {
    const hits = [];
    const scanner = matcher.scanner();
    scanner.offset = from;
    const lines = new LineCounter(fd, buffers);
    const readInto = (i, at, len, sync) => {
        if (len <= 0)
            return Promise.resolve(0);
        const buf = buffers.take(i, len);
        if (sync)
            return Promise.resolve(readSync(fd, buf, 0, len, at));
        return new Promise((resolve, reject) => read(fd, buf, 0, len, at, (err, n) => (err === null ? resolve(n) : reject(err))));
    };
    let pos = from;
    let bytes = 0;
    let which = 0;
    /** Whether the file has had a hit: from then on each chunk's lines are counted as it goes. */
    let counting = false;
    let pending = Promise.resolve(0);
    try {
        let asked = Math.min(CHUNK_BYTES, limit);
        pending = readInto(which, pos, asked, true);
        for (;;) {
            const n = await pending;
            if (n === 0)
                break;
            const chunk = buffers.take(which, n).subarray(0, n);
            bytes += n;
            const next = Math.min(CHUNK_BYTES, limit - bytes);
            // A short read is most likely the end: see so at once.
            pending = readInto(1 - which, pos + n, next, n < asked);
            asked = next;
            const found = [];
            scanner.push(chunk, (m) => {
                if (hits.length + found.length < MAX_HITS_PER_FILE)
                    found.push(m);
            });
            if (found.length > 0) {
                counting = true;
                found.sort((a, b) => a.start - b.start);
                for (const m of found)
                    hits.push({ ...m, line: lines.lineAt(m.start, chunk, pos) });
            }
            if (counting)
                lines.lineAt(pos + n, chunk, pos);
            pos += n;
            which = 1 - which;
        }
    }
    finally {
        // A read still in flight writes into a buffer about to be zeroed, from the fd the caller closes.
        await pending.catch(() => 0);
        scanner.end();
        buffers.wipe();
    }
    return { hits, end: pos, bytes };
}
/**
 * The line number at offsets of one file, counted lazily: a file without a
 * hit is never counted (most are), and the first hit counts what came before
 * it by reading it again (from the page cache); after that each chunk in
 * memory is counted once, as the scan passes it. A hit that starts in the
 * previous chunk's tail counts back over those few bytes.
 */
class LineCounter {
    fd;
    buffers;
    line = 1;
    at = 0;
    constructor(fd, buffers) {
        this.fd = fd;
        this.buffers = buffers;
    }
    /** The 1-based line of offset `to`; `chunk` holds the file's bytes from `pos`. */
    lineAt(to, chunk, pos) {
        if (to >= this.at)
            this.line += this.newlines(this.at, to, chunk, pos);
        else
            this.line -= this.newlines(to, this.at, chunk, pos);
        this.at = to;
        return this.line;
    }
    /** Newlines in [a, b): from `chunk` where it holds them, else read again. */
    newlines(a, b, chunk, pos) {
        let n = 0;
        if (a < pos) {
            const until = Math.min(b, pos);
            const scratch = this.buffers.take(2, Math.min(CHUNK_BYTES, until - a));
            while (a < until) {
                const k = readSync(this.fd, scratch, 0, Math.min(CHUNK_BYTES, until - a), a);
                if (k === 0)
                    break;
                n += countNewlines(scratch.subarray(0, k));
                a += k;
            }
            a = Math.max(a, until);
        }
        if (a < b)
            n += countNewlines(chunk.subarray(a - pos, b - pos));
        return n;
    }
}
function countNewlines(b) {
    let n = 0;
    for (let k = b.indexOf(10); k !== -1; k = b.indexOf(10, k + 1))
        n++;
    return n;
}
/**
 * Of overlapping spans, the one that starts first (the longest of those):
 * one value inside another, or a value found in two forms at one place.
 */
export function disjoint(spans) {
    const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
    const out = [];
    let last = -1;
    for (const s of sorted) {
        if (s.start < last)
            continue;
        out.push(s);
        last = s.end;
    }
    return out;
}
/**
 * Rewrites the file open as `fd` with each span replaced by its text, through
 * a new file in the same directory (the original's mode, written, synced)
 * renamed over it. Refused (false) when the file changed since it was read,
 * an agent still writing to it: the caller sweeps it again.
 */
export function rewrite(path, fd, st, spans) {
    const tmp = join(dirname(path), `.${basename(path)}.vault-sweep-${randomBytes(6).toString('hex')}`);
    const out = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);
    let done = false;
    try {
        fchmodSync(out, st.mode & 0o7777);
        let pos = 0;
        const copy = (until) => {
            while (pos < until) {
                const n = readSync(fd, buf, 0, Math.min(CHUNK_BYTES, until - pos), pos);
                if (n === 0)
                    break;
                writeSync(out, buf, 0, n);
                pos += n;
            }
        };
        for (const s of disjoint(spans)) {
            copy(s.start);
            writeSync(out, s.text);
            pos = s.end;
        }
        copy(Infinity);
        fsyncSync(out);
        const now = statSync(path, { throwIfNoEntry: false });
        if (now === undefined || now.ino !== st.ino || now.size !== st.size || pos !== st.size) {
            return false;
        }
        renameSync(tmp, path);
        done = true;
        return true;
    }
    finally {
        buf.fill(0);
        closeSync(out);
        if (!done) {
            try {
                unlinkSync(tmp);
            }
            catch {
                // Already gone.
            }
        }
    }
}
