/**
 * A host's copy of a PostgreSQL vault's rows, kept in memory between
 * requests. It is only a cache: every transaction first brings it up to the
 * database's version (pg.ts), and a write transaction's changes are kept
 * aside (the undo log) until the database has committed them, so a refused
 * commit leaves the copy as the database has it.
 */
import { Packr } from 'msgpackr';
import type { KeyRange, Rows } from '../tx.js';
import { rowTag, sealedKey, xorInto } from '../seal.js';
import { SortedKeys } from './sorted-keys.js';

/**
 * Plain MessagePack, every record self-contained: no shared structures (which
 * lmdb-js keeps in the store file itself), so each row decodes on its own, on
 * any host.
 */
const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeRecord(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeRecord(raw: Buffer): unknown {
  return packr.unpack(raw);
}

/**
 * How many decoded records a host keeps beside the encoded rows: the ones
 * its requests use again and again (agents, their rate records, the header),
 * not every row (issue 37: a decoded copy of each of 700,000 rows was most
 * of a host's 1.1 GB).
 */
const DECODED = 4096;

/** A row's share of the sealed digest, from its bytes (decoded for the tag only, not kept). */
function tagOfRaw(sealKey: Buffer, key: string, raw: Buffer | undefined): Buffer {
  try {
    return rowTag(sealKey, key, raw === undefined ? undefined : decodeRecord(raw));
  } catch {
    // A row that does not decode is no row the vault sealed.
    return Buffer.alloc(32, 0xff);
  }
}

/**
 * The sealed rows' share of the digest in one page of a first load, each
 * row once: computed in the worker thread beside the host's (pg-worker.ts).
 */
export function pageDigest(
  sealKey: Buffer,
  rows: readonly { key: string; value: Buffer | null }[],
): Buffer {
  const d = Buffer.alloc(32);
  for (const r of rows) {
    if (r.value !== null && sealedKey(r.key)) xorInto(d, tagOfRaw(sealKey, r.key, r.value));
  }
  return d;
}

export class Mirror implements Rows {
  /** Sorted, as LMDB orders string keys (ASCII keys: code units and bytes agree). */
  private keys = new SortedKeys();
  private readonly raw = new Map<string, Buffer>();
  private readonly decoded = new Map<string, unknown>();
  /** The database version these rows are at; 0 before the first load. */
  version = 0;
  /**
   * While a write transaction runs: every write's key and the row before it,
   * in order, so a part of the transaction (one request of a group) can be
   * undone alone, and the whole of it at a failed commit.
   */
  private undo: [key: string, before: Buffer | null][] | null = null;
  /** The digest of the sealed records held (seal.ts), kept as each row changes, once asked for. */
  private digest: { key: Buffer; value: Buffer } | null = null;

  /** Applies rows fetched from the database (null: deleted there). */
  apply(rows: readonly { key: string; value: Buffer | null }[], version: number): void {
    if (this.keys.size === 0 && this.digest === null && this.undo === null) {
      // A first load: every key set, then sorted once.
      for (const r of rows) if (r.value !== null) this.raw.set(r.key, r.value);
      this.keys = SortedKeys.from([...this.raw.keys()]);
    } else for (const r of rows) this.setRaw(r.key, r.value);
    this.version = version;
  }

  /**
   * One page of a first load (pg.ts `load`), in any order: set as it comes,
   * so no answer is held whole, the digest kept when the key is known; the
   * keys are sorted once at the end (`loaded`). Only into an empty copy.
   */
  loadPage(
    rows: readonly { key: string; value: Buffer | null }[],
    sealKey: Buffer | null,
    digest: Buffer | null = null,
  ): void {
    if (sealKey !== null && this.digest === null && this.raw.size === 0) {
      // The digest kept from the first page on, while the database reads the next.
      this.digest = { key: Buffer.from(sealKey), value: Buffer.alloc(32) };
    }
    const d = this.digest;
    // The page's share computed already (by the worker: `pageDigest`, of these rows, each once).
    if (d !== null && digest !== null) xorInto(d.value, digest);
    for (const r of rows) {
      if (r.value === null || this.raw.has(r.key)) continue;
      this.raw.set(r.key, r.value);
      if (d !== null && digest === null && sealedKey(r.key)) {
        xorInto(d.value, this.tagOf(d.key, r.key));
      }
    }
  }

  /** The first load is whole, at `version`: its keys sorted once. */
  loaded(version: number): void {
    this.keys = SortedKeys.from([...this.raw.keys()]);
    this.version = version;
  }

  private setRaw(key: string, value: Buffer | null): void {
    const d = this.digest !== null && sealedKey(key) ? this.digest : null;
    if (d !== null && this.raw.has(key)) xorInto(d.value, this.tagOf(d.key, key));
    this.changeRaw(key, value);
    if (d !== null && value !== null) xorInto(d.value, this.tagOf(d.key, key));
  }

  private tagOf(sealKey: Buffer, key: string): Buffer {
    return tagOfRaw(sealKey, key, this.raw.get(key));
  }

  /** The digest of the sealed rows held (seal.ts), computed whole once, then kept. */
  sealedDigest(sealKey: Buffer): Buffer {
    if (this.digest === null || !this.digest.key.equals(sealKey)) {
      const value = Buffer.alloc(32);
      for (const key of this.keys) if (sealedKey(key)) xorInto(value, this.tagOf(sealKey, key));
      this.digest = { key: Buffer.from(sealKey), value };
    }
    return this.digest.value;
  }

  private changeRaw(key: string, value: Buffer | null): void {
    this.decoded.delete(key);
    if (value === null) {
      if (this.raw.delete(key)) this.keys.delete(key);
      return;
    }
    if (!this.raw.has(key)) this.keys.insert(key);
    this.raw.set(key, value);
  }

  get(key: string): unknown {
    if (this.decoded.has(key)) return this.decoded.get(key);
    const raw = this.raw.get(key);
    if (raw === undefined) return undefined;
    const value = decodeRecord(raw);
    if (this.decoded.size >= DECODED) {
      // The oldest decoded goes first (a Map keeps insertion order).
      for (const old of this.decoded.keys()) {
        this.decoded.delete(old);
        break;
      }
    }
    this.decoded.set(key, value);
    return value;
  }

  /** A snapshot of the range, so a transaction may remove what it iterates. */
  getKeys(range: KeyRange): string[] {
    return this.keys.range(range.start, range.end, range.limit);
  }

  getRange(range: KeyRange): { key: string; value: unknown }[] {
    return this.getKeys(range).map((key) => ({ key, value: this.get(key) }));
  }

  put(key: string, value: unknown): void {
    this.remember(key);
    // Read back decoded from the bytes, as LMDB hands back a copy: never the caller's object.
    this.setRaw(key, encodeRecord(value));
  }

  remove(key: string): void {
    this.remember(key);
    this.setRaw(key, null);
  }

  private remember(key: string): void {
    if (this.undo === null) throw new Error('a write outside a write transaction');
    this.undo.push([key, this.raw.get(key) ?? null]);
  }

  /** Opens a write transaction: writes are allowed and remembered until commit or rollback. */
  begin(): void {
    this.undo = [];
  }

  /** A point of the open transaction to undo back to (`undoTo`). */
  mark(): number {
    return this.undo?.length ?? 0;
  }

  /** Undoes the writes made since `mark`, the rest of the transaction kept. */
  undoTo(mark: number): void {
    const undo = this.undo ?? [];
    while (undo.length > mark) {
      const [key, before] = undo.pop() as [string, Buffer | null];
      this.setRaw(key, before);
    }
  }

  /** The rows the open transaction changed, as they are now (null: removed). */
  changes(): { key: string; value: Buffer | null }[] {
    const first = new Map<string, Buffer | null>();
    for (const [key, before] of this.undo ?? []) if (!first.has(key)) first.set(key, before);
    const out: { key: string; value: Buffer | null }[] = [];
    for (const [key, before] of first) {
      const now = this.raw.get(key) ?? null;
      if (now === before || (now !== null && before !== null && now.equals(before))) continue;
      out.push({ key, value: now });
    }
    return out;
  }

  /** The database committed the changes as `version`. */
  commit(version: number): void {
    this.undo = null;
    this.version = version;
  }

  /** The transaction failed: every row it touched is put back. */
  rollback(): void {
    this.undoTo(0);
    this.undo = null;
  }

  /** Every row as stored (encoded), in key order: for copies and migrations. */
  *rawRows(): Iterable<{ key: string; value: Buffer }> {
    for (const key of this.keys) yield { key, value: this.raw.get(key) as Buffer };
  }

  get size(): number {
    return this.keys.size;
  }
}
