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
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { MultiMatcher } from '../core/multi-match.js';

/** Bytes read at a time. */
export const CHUNK_BYTES = 1 << 20;
/** Directory levels below a store's root. */
const MAX_DEPTH = 12;
/** Files one sweep looks at; past it the walk stops and says so. */
export const MAX_FILES = 200_000;
/** Occurrences kept per file (the first ones): a file full of one value is one finding to the owner. */
const MAX_HITS_PER_FILE = 10_000;

export interface Root {
  readonly path: string;
  /** Whose store: an agent's name, `shell`, or `path` for the owner's --path. */
  readonly agent: string;
  /** Named by the owner (--path): a link at the root itself is followed. */
  readonly explicit: boolean;
  /**
   * For a known store: the directory it is found from (the home). No
   * directory between it and the root may be a link either: an agent that
   * turns ~/.codex into a link to elsewhere does not lead the sweep there.
   */
  readonly base?: string;
}

/** The first link between `base` and `path` (exclusive of base), or null. */
function linkOnTheWay(base: string, path: string): string | null {
  const rel = relative(base, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  let at = base;
  for (const part of rel.split(sep).slice(0, -1)) {
    at = join(at, part);
    try {
      if (lstatSync(at).isSymbolicLink()) return at;
    } catch {
      return null;
    }
  }
  return null;
}

export interface FileTarget {
  readonly path: string;
  readonly agent: string;
}

export interface Skipped {
  readonly path: string;
  readonly reason: string;
}

export interface Walked {
  readonly files: FileTarget[];
  readonly skipped: Skipped[];
}

/**
 * The regular files under each root (a root may be a file). A missing known
 * store is no news; a missing --path is reported.
 */
export function walk(roots: readonly Root[], maxFileBytes: number): Walked {
  const files: FileTarget[] = [];
  const skipped: Skipped[] = [];
  const seen = new Set<string>();
  const visit = (path: string, agent: string, depth: number, follow: boolean): void => {
    if (files.length >= MAX_FILES) return;
    let st: Stats;
    try {
      st = follow ? statSync(path) : lstatSync(path);
    } catch {
      if (depth === 0 && follow) skipped.push({ path, reason: 'not found' });
      return;
    }
    if (st.isSymbolicLink()) {
      skipped.push({ path, reason: 'a symbolic link (not followed)' });
      return;
    }
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) return;
    seen.add(id);
    if (st.isDirectory()) {
      if (depth >= MAX_DEPTH) {
        skipped.push({ path, reason: `deeper than ${MAX_DEPTH} levels` });
        return;
      }
      let names: string[];
      try {
        names = readdirSync(path).sort();
      } catch {
        skipped.push({ path, reason: 'not readable' });
        return;
      }
      for (const n of names) visit(join(path, n), agent, depth + 1, false);
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
    files.push({ path, agent });
  };
  for (const r of roots) {
    const link = r.base === undefined ? null : linkOnTheWay(r.base, r.path);
    if (link !== null)
      skipped.push({ path: r.path, reason: `${link} is a symbolic link (not followed)` });
    else visit(r.path, r.agent, 0, r.explicit);
  }
  if (files.length >= MAX_FILES) {
    skipped.push({ path: '(the rest)', reason: `more than ${MAX_FILES} files` });
  }
  return { files, skipped };
}

/** An open file that is a regular file of at most `maxFileBytes`, or why not. */
export function openRegular(
  path: string,
  maxFileBytes: number,
): { fd: number; st: Stats } | { skipped: string } {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in since the walk opens at once instead of waiting for a writer.
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
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

export interface Hit {
  readonly pattern: number;
  readonly start: number;
  readonly end: number;
}

/**
 * Every occurrence of the matcher's patterns in the file from `from` to its
 * end (at most `limit` bytes), in chunks; the chunk buffer is zeroed after.
 * Returns the hits (at most MAX_HITS_PER_FILE) and where reading stopped.
 */
export function scanFd(
  fd: number,
  matcher: MultiMatcher,
  from = 0,
  limit = Infinity,
): { hits: Hit[]; end: number; bytes: number } {
  const hits: Hit[] = [];
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  const scanner = matcher.scanner();
  scanner.offset = from;
  let pos = from;
  let bytes = 0;
  try {
    while (bytes < limit) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK_BYTES, limit - bytes), pos);
      if (n === 0) break;
      scanner.push(buf.subarray(0, n), (m) => {
        if (hits.length < MAX_HITS_PER_FILE) hits.push(m);
      });
      pos += n;
      bytes += n;
    }
  } finally {
    scanner.end();
    buf.fill(0);
  }
  return { hits, end: pos, bytes };
}

/** The 1-based line of each offset, counting newlines from the file's start. */
export function lineNumbers(fd: number, offsets: readonly number[]): Map<number, number> {
  const want = [...new Set(offsets)].sort((a, b) => a - b);
  const out = new Map<number, number>();
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let line = 1;
  let pos = 0;
  let i = 0;
  try {
    while (i < want.length) {
      const n = readSync(fd, buf, 0, CHUNK_BYTES, pos);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      let j = 0;
      const count = (until: number) => {
        for (let k = chunk.indexOf(10, j); k !== -1 && k < until; k = chunk.indexOf(10, k + 1)) {
          line++;
        }
        j = until;
      };
      for (; i < want.length && (want[i] as number) < pos + n; i++) {
        count((want[i] as number) - pos);
        out.set(want[i] as number, line);
      }
      count(n);
      pos += n;
    }
  } finally {
    buf.fill(0);
  }
  for (const t of want) if (!out.has(t)) out.set(t, line);
  return out;
}

export interface Replacement {
  readonly start: number;
  readonly end: number;
  readonly text: Buffer;
}

/**
 * Of overlapping spans, the one that starts first (the longest of those):
 * one value inside another, or a value found in two forms at one place.
 */
export function disjoint<T extends { start: number; end: number }>(spans: readonly T[]): T[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: T[] = [];
  let last = -1;
  for (const s of sorted) {
    if (s.start < last) continue;
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
export function rewrite(
  path: string,
  fd: number,
  st: Stats,
  spans: readonly Replacement[],
): boolean {
  const tmp = join(
    dirname(path),
    `.${basename(path)}.vault-sweep-${randomBytes(6).toString('hex')}`,
  );
  const out = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let done = false;
  try {
    fchmodSync(out, st.mode & 0o7777);
    let pos = 0;
    const copy = (until: number) => {
      while (pos < until) {
        const n = readSync(fd, buf, 0, Math.min(CHUNK_BYTES, until - pos), pos);
        if (n === 0) break;
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
  } finally {
    buf.fill(0);
    closeSync(out);
    if (!done) {
      try {
        unlinkSync(tmp);
      } catch {
        // Already gone.
      }
    }
  }
}
