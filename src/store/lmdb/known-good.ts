/**
 * A clean close, remembered so the next host's start need not scan the store
 * again (issue 37: the full scan, scan-worker.ts, took 14 s at 100,000
 * entries). The host's own store, closed after a run in which no LMDB call
 * failed, leaves beside it `vault.mdb.known-good`: the file's length, its
 * SHA-256 and the transaction its newer meta page names. The next start takes
 * that file away first (so a host that then crashes, or is killed, leaves
 * nothing behind: its successor scans in full), reads the store whole through
 * read(2) as the scan does, and skips the scan only when all three match.
 *
 * What it trusts: the file is byte for byte the one a host wrote through LMDB
 * and closed without a fault, which started from a store the scan (or this,
 * in turn) passed. Damage done after the close changes the hash: the full
 * scan; a change while the host closes, after its last write (the settling
 * of its close), shows in the file's modification time: nothing is recorded.
 * What it does not see: damage done to the file while that host ran (by
 * another process, or the disk), which the host never read or wrote,
 * and which the close's hash then takes in; the next host may crash on it,
 * as the running one could have, and the start after that scans in full
 * (docs/threat-model.md). Whoever can write this file can write the store.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { diskFault, readFailure } from './failures.js';

/** What a clean close remembers of the store file (and what its next start compares). */
interface Fingerprint {
  readonly bytes: number;
  readonly sha256: string;
  /** The newer meta page's transaction id (decimal). */
  readonly txnid: string;
}

/** The file beside the store file that remembers its clean close. */
export function knownGoodPath(storePath: string): string {
  return `${storePath}.known-good`;
}

/**
 * LMDB's two meta pages as lmdb-js 3 writes them (a 24-byte page header: the
 * page number, the transaction that wrote it, flags and bounds): the magic at
 * 24, the page size (the free-page tree's md_pad) at 48, the last page number
 * at 144, the transaction id at 152 (test/support/store-damage.ts reads the
 * same). The second meta page is one page in. The newer valid one, with
 * whether its last page lies within `bytes`; null when the first is not valid.
 */
function newerMeta(head: Buffer, bytes: number): { txnid: bigint; fits: boolean } | null {
  const at = (off: number) => {
    if (off + 160 > head.length || head.readUInt32LE(off + 24) !== 0xbeefc0de) return null;
    return {
      psize: head.readUInt32LE(off + 48),
      last: head.readBigUInt64LE(off + 144),
      txnid: head.readBigUInt64LE(off + 152),
    };
  };
  const first = at(0);
  if (first === null || first.psize < 512 || first.psize > 65536) return null;
  const second = at(first.psize);
  const newer = second !== null && second.txnid > first.txnid ? second : first;
  return { txnid: newer.txnid, fits: (newer.last + 1n) * BigInt(first.psize) <= BigInt(bytes) };
}

/**
 * The store file read whole through read(2) (a disk that fails the read
 * throws EIO here, never a SIGBUS as from a map): its fingerprint, or null
 * when its meta pages are not LMDB's or its last page lies past its end.
 */
function fingerprint(path: string): Fingerprint | null {
  const fd = openSync(path, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    let head: Buffer | null = null;
    let bytes = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, bytes);
      if (n === 0) break;
      if (head === null) head = Buffer.from(buf.subarray(0, Math.min(n, 131072)));
      h.update(buf.subarray(0, n));
      bytes += n;
    }
    const meta = head === null ? null : newerMeta(head, bytes);
    if (meta === null || !meta.fits) return null;
    return { bytes, sha256: h.digest('hex'), txnid: meta.txnid.toString() };
  } finally {
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * After the host's own store closed cleanly (store.ts; `wroteAt`: when it
 * last wrote the file, ms since the epoch): the file's fingerprint, written
 * beside it atomically (a new file, flushed, renamed over, the directory
 * flushed). Nothing when the file cannot be read whole: the next start then
 * scans in full.
 */
export function rememberClean(storePath: string, wroteAt: number): void {
  const target = knownGoodPath(storePath);
  const temp = `${target}.${process.pid}`;
  try {
    // Changed after this host's last write (the file system's clock is the
    // coarser one: never ahead of Date.now() at the write), or while it is
    // hashed here: by someone else. Then nothing is remembered.
    const before = statSync(storePath);
    if (before.mtimeMs > wroteAt + 1) return;
    const print = fingerprint(storePath);
    const after = statSync(storePath);
    if (print === null || after.mtimeMs !== before.mtimeMs || after.size !== print.bytes) return;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(print) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
    syncDir(dirname(storePath));
  } catch {
    rmSync(temp, { force: true });
  }
}

/**
 * At the host's start, before anything opens the store: whether the store
 * file is byte for byte the one a host closed cleanly (then the full scan may
 * be skipped). The record is removed first, whatever it says, so it serves
 * one start only: a host that crashes after this leaves none.
 * @throws VaultError VLT-3004 when the disk fails to read the store (EIO), as the scan's
 */
export function takeKnownGood(storePath: string): boolean {
  const at = knownGoodPath(storePath);
  let said: Partial<Fingerprint>;
  try {
    said = JSON.parse(readFileSync(at, 'utf8')) as Partial<Fingerprint>;
  } catch {
    // None (the last host did not close cleanly), or unreadable: the full scan.
    rmSync(at, { force: true });
    return false;
  }
  try {
    rmSync(at);
    syncDir(dirname(storePath));
  } catch {
    // Still there: it could bless the next start too, after a crash of this one.
    return false;
  }
  let now: Fingerprint | null;
  try {
    now = fingerprint(storePath);
  } catch (err) {
    const fault = diskFault(err);
    if (fault !== null) throw readFailure(fault);
    return false;
  }
  return (
    now !== null &&
    now.bytes === said.bytes &&
    now.sha256 === said.sha256 &&
    now.txnid === said.txnid
  );
}
