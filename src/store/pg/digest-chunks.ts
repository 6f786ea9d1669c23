/**
 * A team host's file of digest shares (issue 37, fourth step): most of a
 * cold start at 100,000 entries was the sealed digest (seal.ts), an HMAC of
 * every sealed row, the same rows at every start. The digest is an XOR of
 * per-row MACs, so a run of rows (a chunk) has a share, the XOR of its rows'
 * MACs: a pure function of the chunk's bytes and the state key. "The chunk
 * whose bytes hash to H has share S" stays true for good under that key; a
 * host keeps such records in a file of its own vault directory (beside
 * state.key), MACed under a key derived from the state key, and at its next
 * first load takes a chunk's share from it when the SHA-256 of the chunk's
 * bytes, as the load packed them, is one it holds: one native hash for a
 * chunk of about a thousand rows instead of their MACs.
 *
 * What it trusts, and why a rollback or a forgery gains nothing
 * (docs/threat-model.md): an entry is only ever looked up by the SHA-256 of
 * the bytes the host has in hand, so a row changed in the database changes
 * its chunk's hash and misses (its MACs computed as before); an older file
 * holds true records too (fewer of them); a file that fails its MAC is
 * ignored, and replaced after a load whose digest matched the sealed value.
 * The file is never written after a mismatch.
 *
 * Chunks end by content, not by count: after a row whose key's FNV-1a hash
 * is 0 modulo EDGE (or at a page's end, which the worker puts at such a row
 * where it can), so a row inserted, removed or moved (an update moves a row
 * in the table's order) changes its own chunk and maybe its neighbour's,
 * not every chunk after it.
 */
import {
  closeSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { equal, keyedHash, sha256Into } from '../../crypto/hash.js';
import { digestChunksKey } from '../../crypto/kdf.js';
import { wipe } from '../../crypto/aead.js';
import { sealedKey, STATE_KEY, stateHolds, xorInto, type StateRecord } from '../seal.js';
import { xorTagOfRaw } from './mirror.js';

/** The file, in the host's vault directory. */
export const DIGEST_CHUNKS_FILE = 'pg-digest-chunks';
/**
 * The file's first bytes; names the row tag (seal.ts 'row-v1') the shares
 * are XORs of: a change there is a new name, and old files are ignored.
 */
const MAGIC = Buffer.from('vault-cli digest chunks row-v1\n', 'ascii');
/** A chunk's record: the SHA-256 of its bytes, then its share. */
const ENTRY = 64;
/** Past this the file is not read (about 1.6 million chunks): a file grown by anyone else is not the host's. */
const MAX_FILE = 100 * 1024 * 1024;
/**
 * Rows a chunk on average (a power of two): at 100,000 entries (400,000 rows
 * held) about 400 chunks, a file of 26 KB; a row changed costs its chunk's
 * thousand MACs (about 6 ms), not the whole digest.
 */
export const EDGE = 1024;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Whether a chunk ends after the row under the key whose UTF-8 bytes are `buf[start, end)`. */
export function edgeAfterBytes(buf: Uint8Array, start: number, end: number): boolean {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (buf[i] as number), FNV_PRIME);
  return ((h >>> 0) & (EDGE - 1)) === 0;
}

/** `edgeAfterBytes` of a key as a string (the worker's rows): the same bytes, UTF-8. */
export function edgeAfterKey(key: string): boolean {
  let h = FNV_OFFSET;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) {
      const b = Buffer.from(key, 'utf8');
      return edgeAfterBytes(b, 0, b.length);
    }
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  return ((h >>> 0) & (EDGE - 1)) === 0;
}

/** Shares known, by the base64 of their chunk's SHA-256. */
export type ChunkShares = Map<string, Buffer>;

/** Records (hash, share) as one buffer of ENTRY-byte records (to the worker and back). */
export function sharesTable(known: ChunkShares): Uint8Array {
  const out = Buffer.alloc(known.size * ENTRY);
  let at = 0;
  for (const [h, s] of known) {
    out.write(h, at, 'base64');
    s.copy(out, at + 32);
    at += ENTRY;
  }
  return out;
}

export function sharesOf(table: Uint8Array): ChunkShares {
  const b = Buffer.from(table.buffer, table.byteOffset, table.byteLength);
  const known: ChunkShares = new Map();
  for (let at = 0; at + ENTRY <= b.length; at += ENTRY) {
    known.set(b.toString('base64', at, at + 32), Buffer.from(b.subarray(at + 32, at + ENTRY)));
  }
  return known;
}

export interface PageShare {
  /** The page's sealed rows' share of the digest. */
  readonly share: Buffer;
  /** Each chunk of the page: (hash, share), ENTRY bytes each. */
  readonly chunks: Buffer;
  /** Chunks whose share came from `known`, and chunks whose rows' MACs were computed. */
  readonly reused: number;
  readonly computed: number;
}

/**
 * The share of the sealed rows of `packed[start, end)` (whole rows), each
 * MAC computed; from `rows[from...]` when the caller has them as objects
 * (the worker: no key string or view made again per row).
 */
function chunkShare(
  packed: Buffer,
  key: Buffer,
  [start, end]: [number, number],
  out: Buffer,
  rows: readonly { key: string; value: Uint8Array | null }[] | null,
  from: number,
): void {
  for (let at = start, i = from; at < end; i++) {
    const k = packed.readUInt32BE(at);
    const v = at + 4 + k;
    const n = packed.readUInt32BE(v);
    const r = rows?.[i];
    if (r !== undefined) {
      if (r.value !== null && sealedKey(r.key)) xorTagOfRaw(out, key, r.key, r.value as Buffer);
    } else {
      const rowKey = packed.toString('utf8', at + 4, at + 4 + k);
      if (sealedKey(rowKey)) xorTagOfRaw(out, key, rowKey, packed.subarray(v + 4, v + 4 + n));
    }
    at = v + 4 + n;
  }
}

/**
 * A page's share of the sealed digest (rows packed as pg-worker.ts packs
 * them), chunk by chunk: a chunk whose SHA-256 `known` holds gives its share
 * from there, any other has its rows' MACs computed (mirror.ts, as a load
 * without this file does). The page's end ends a chunk.
 */
export function pageShare(
  packed: Buffer,
  key: Buffer,
  known: ChunkShares | null,
  rows: readonly { key: string; value: Uint8Array | null }[] | null = null,
): PageShare {
  const share = Buffer.alloc(32);
  const chunks: Buffer[] = [];
  const hash = Buffer.alloc(32);
  let reused = 0;
  let computed = 0;
  let start = 0;
  let first = 0;
  for (let at = 0, i = 0; at + 8 <= packed.length;) {
    i++;
    const k = packed.readUInt32BE(at);
    const edge = edgeAfterBytes(packed, at + 4, at + 4 + k);
    at += 4 + k;
    at += 4 + packed.readUInt32BE(at);
    if (!edge && at + 8 <= packed.length) continue;
    // The rows' bytes with their lengths: where one row ends and the next begins is in what is hashed.
    sha256Into(hash, packed.subarray(start, at));
    const entry = Buffer.alloc(ENTRY);
    hash.copy(entry);
    const s = entry.subarray(32);
    const got = known?.get(hash.toString('base64'));
    if (got !== undefined) {
      got.copy(s);
      reused++;
    } else {
      chunkShare(packed, key, [start, at], s, rows, first);
      computed++;
    }
    xorInto(share, s);
    chunks.push(entry);
    start = at;
    first = i;
  }
  return { share, chunks: Buffer.concat(chunks), reused, computed };
}

/** The file's MAC: its key derived from the state key for this alone, wiped at once. */
function macOf(stateKey: Buffer, body: Buffer): Buffer {
  const key = digestChunksKey(stateKey);
  try {
    return keyedHash(key, 'digest-chunks-v1', body);
  } finally {
    wipe(key);
  }
}

/** The shares the host's file holds, or none when there is no file or it fails its MAC. */
export function readShares(dir: string, stateKey: Buffer): ChunkShares {
  const path = join(dir, DIGEST_CHUNKS_FILE);
  let raw: Buffer;
  try {
    if (statSync(path).size > MAX_FILE) return new Map();
    raw = readFileSync(path);
  } catch {
    return new Map();
  }
  const body = raw.subarray(0, raw.length - 32);
  const count = (body.length - MAGIC.length - 4) / ENTRY;
  if (
    raw.length < MAGIC.length + 4 + 32 ||
    !body.subarray(0, MAGIC.length).equals(MAGIC) ||
    body.readUInt32BE(MAGIC.length) !== count ||
    !equal(macOf(stateKey, body), raw.subarray(body.length))
  ) {
    return new Map();
  }
  return sharesOf(body.subarray(MAGIC.length + 4));
}

/**
 * Writes the file anew with `chunks` (ENTRY-byte records: the chunks of the
 * load just checked), atomically: a temporary file, 0600, renamed over it.
 * Not flushed: a file cut short by a crash fails its MAC and is ignored.
 */
export function writeShares(dir: string, stateKey: Buffer, chunks: readonly Buffer[]): void {
  const known: ChunkShares = new Map();
  for (const c of chunks) {
    for (let at = 0; at + ENTRY <= c.length; at += ENTRY) {
      known.set(c.toString('base64', at, at + 32), c.subarray(at + 32, at + ENTRY));
    }
  }
  const count = Buffer.alloc(4);
  count.writeUInt32BE(known.size);
  const body = Buffer.concat([MAGIC, count, sharesTable(known)]);
  const path = join(dir, DIGEST_CHUNKS_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  rmSync(temp, { force: true });
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, body);
    writeSync(fd, macOf(stateKey, body));
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/** What the worker's reply to a load says of a page's share (pg-worker.ts). */
interface WorkerShare {
  readonly digest?: Uint8Array | null;
  readonly chunks?: Uint8Array;
  readonly reused?: number;
  readonly computed?: number;
}

/**
 * One first load's use of the file: the shares read at its start, the
 * chunks of every page as they come (the worker's and the host's own), the
 * file written at its end if the digest matched the sealed value.
 */
export class LoadShares {
  readonly known: ChunkShares;
  private readonly chunks: Buffer[] = [];
  readonly stats = { reused: 0, computed: 0 };

  /** `dir`: the host's vault directory (null: no file; every share computed). */
  constructor(
    private readonly dir: string | null,
    private readonly key: Buffer,
  ) {
    // The derivation takes a state key's 32 bytes: a test's other key has no file.
    this.known = dir !== null && key.length === 32 ? readShares(dir, key) : new Map();
  }

  /** The shares known, for the worker (`sharesOf` there). */
  table(): Uint8Array {
    return sharesTable(this.known);
  }

  /** A page's share: the worker's, when it took it (its reply), else taken here. */
  share(packed: Buffer, worker: WorkerShare): Buffer {
    const page =
      worker.digest && worker.chunks
        ? { ...worker, share: worker.digest, chunks: worker.chunks }
        : pageShare(packed, this.key, this.known);
    const c = page.chunks;
    this.chunks.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
    this.stats.reused += page.reused ?? 0;
    this.stats.computed += page.computed ?? 0;
    return Buffer.from(page.share);
  }

  /**
   * The load is whole: when `digest` (its digest) is the one the state
   * record, MACed under the key, seals, the file is written with this load's
   * chunks (those not met are dropped); never otherwise. A file that cannot
   * be written costs the next start its MACs, nothing else.
   */
  finish(copy: { sealedDigest(key: Buffer): Buffer; get(key: string): unknown }): {
    reused: number;
    computed: number;
  } {
    if (this.dir === null || this.key.length !== 32) return this.stats;
    try {
      const s = copy.get(STATE_KEY) as StateRecord | undefined;
      if (stateHolds(this.key, s) && s.digest.equals(copy.sealedDigest(this.key))) {
        writeShares(this.dir, this.key, this.chunks);
      }
    } catch {
      // Not written: the next start computes the MACs this one could not record.
    }
    return this.stats;
  }
}
