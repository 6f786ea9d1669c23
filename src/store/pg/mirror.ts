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

/** Binary search: the index of the first key >= `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class Mirror implements Rows {
  /** Sorted, as LMDB orders string keys (ASCII keys: code units and bytes agree). */
  private readonly keys: string[] = [];
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
    for (const r of rows) this.setRaw(r.key, r.value);
    this.version = version;
  }

  private setRaw(key: string, value: Buffer | null): void {
    const d = this.digest !== null && sealedKey(key) ? this.digest : null;
    if (d !== null && this.raw.has(key)) xorInto(d.value, this.tagOf(d.key, key));
    this.changeRaw(key, value);
    if (d !== null && value !== null) xorInto(d.value, this.tagOf(d.key, key));
  }

  private tagOf(sealKey: Buffer, key: string): Buffer {
    try {
      return rowTag(sealKey, key, this.get(key));
    } catch {
      // A row that does not decode is no row the vault sealed.
      return Buffer.alloc(32, 0xff);
    }
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
      if (!this.raw.delete(key)) return;
      const at = lowerBound(this.keys, key);
      if (this.keys[at] === key) this.keys.splice(at, 1);
      return;
    }
    if (!this.raw.has(key)) {
      const at = lowerBound(this.keys, key);
      this.keys.splice(at, 0, key);
    }
    this.raw.set(key, value);
  }

  get(key: string): unknown {
    if (this.decoded.has(key)) return this.decoded.get(key);
    const raw = this.raw.get(key);
    if (raw === undefined) return undefined;
    const value = decodeRecord(raw);
    this.decoded.set(key, value);
    return value;
  }

  /** A snapshot of the range, so a transaction may remove what it iterates. */
  getKeys(range: KeyRange): string[] {
    const from = range.start === undefined ? 0 : lowerBound(this.keys, range.start);
    const to = range.end === undefined ? this.keys.length : lowerBound(this.keys, range.end);
    const out = this.keys.slice(from, Math.max(from, to));
    return range.limit === undefined ? out : out.slice(0, range.limit);
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
    return this.keys.length;
  }
}
