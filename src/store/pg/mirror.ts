/**
 * A host's copy of a PostgreSQL vault's rows, kept in memory between
 * requests. It is only a cache: every transaction first brings it up to the
 * database's version (pg.ts), and a write transaction's changes are kept
 * aside (the undo log) until the database has committed them, so a refused
 * commit leaves the copy as the database has it.
 */
import { Packr } from 'msgpackr';
import type { KeyRange, Rows } from '../tx.js';
import { sealedKey, xorInto, xorRowTag, xorRowTagCanonical } from '../seal.js';
import { canonBytes } from './canon-bytes.js';
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

/** XORs into `digest` a row's share of the sealed digest, from its bytes (decoded for the tag only, not kept). */
export function xorTagOfRaw(
  digest: Buffer,
  sealKey: Buffer,
  key: string,
  raw: Buffer | undefined,
): void {
  // Most rows: their canonical form from their bytes, nothing decoded (canon-bytes.ts).
  const form = raw === undefined ? null : canonBytes(raw);
  if (form !== null) {
    xorRowTagCanonical(digest, sealKey, key, form);
    return;
  }
  let value: unknown;
  try {
    value = raw === undefined ? undefined : decodeRecord(raw);
  } catch {
    // A row that does not decode is no row the vault sealed.
    xorInto(digest, Buffer.alloc(32, 0xff));
    return;
  }
  xorRowTag(digest, sealKey, key, value);
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
    if (r.value !== null && sealedKey(r.key)) xorTagOfRaw(d, sealKey, r.key, r.value);
  }
  return d;
}

/**
 * Rows in pg-worker.ts `pack`'s form, `[key length u32][key][value length
 * u32][value]` each, as one buffer of its own (a load's page; the tests' rows).
 */
export function packRows(rows: readonly { key: string; value: Uint8Array | null }[]): Buffer {
  let size = 0;
  for (const r of rows) size += 8 + Buffer.byteLength(r.key) + (r.value?.length ?? 0);
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const r of rows) {
    const k = out.write(r.key, at + 4);
    out.writeUInt32BE(k, at);
    at += 4 + k;
    const v = r.value ?? new Uint8Array(0);
    out.writeUInt32BE(v.length, at);
    out.set(v, at + 4);
    at += 4 + v.length;
  }
  return out;
}

/**
 * The rows a host does not hold (issue 37): the audit chain's records and
 * the records' checksums, the most of a vault's rows (an import writes an
 * audit record per entry; each record has its checksum) and none of them
 * read to serve a request: read from the database when asked for (audit
 * listings, `vault check`, backups).
 */
const COLD = [
  ['audit/', 'audit0'],
  ['sum/', 'sum0'],
] as const;

/** Whether the row under `key` is one a host does not hold (COLD). */
export function coldKey(key: string): boolean {
  return key.startsWith('audit/') || key.startsWith('sum/');
}

/** Where a host reads the rows it does not hold: the database (pg.ts). */
export interface ColdRows {
  /**
   * The rows in [start, end) (all of them cold), in key order, at most
   * `limit`, as at the copy's version.
   */
  rows(start: string, end: string, limit: number): { key: string; value: Buffer }[];
}

/** Rows of a page a handle (a small integer) can name: the row's index in the low 16 bits. */
const PAGE_ROWS = 0x10000;

export class Mirror implements Rows {
  /** Sorted, as LMDB orders string keys (ASCII keys: code units and bytes agree). */
  private keys = new SortedKeys();
  /**
   * Each row's bytes: a row of the first load as a handle, a number (its
   * page in `pages`, its place there in `offsets`), not a Buffer object of
   * its own (issue 37: a Buffer view costs about 240 bytes of memory, more
   * than a row's bytes; 700,000 of them were 170 MB); a row written or
   * fetched since, as its Buffer.
   */
  private readonly raw = new Map<string, number | Buffer>();
  /** A first load's pages as they came (pg-worker.ts `pack`), while any of their rows is held. */
  private pages: (Buffer | null)[] = [];
  /** Per page, each row's value offset in it (at its length). */
  private offsets: (Uint32Array | null)[] = [];
  /** Per page, how many of its rows are still held: a page no row holds is let go. */
  private live: number[] = [];
  private readonly decoded = new Map<string, unknown>();
  /** The open transaction's writes of rows not held (COLD; null: removed), until its commit. */
  private readonly coldWrites = new Map<string, Buffer | null>();

  /** `cold`: where the rows not held are read; null: every row held (a copy of no database). */
  constructor(private readonly cold: ColdRows | null = null) {}

  private isCold(key: string): boolean {
    return this.cold !== null && coldKey(key);
  }
  /** The database version these rows are at; 0 before the first load. */
  version = 0;
  /**
   * While a write transaction runs: every write's key and the row before it,
   * in order, so a part of the transaction (one request of a group) can be
   * undone alone, and the whole of it at a failed commit.
   */
  private undo: [key: string, before: Buffer | null | undefined][] | null = null;
  /** The digest of the sealed records held (seal.ts), kept as each row changes, once asked for. */
  private digest: { key: Buffer; value: Buffer } | null = null;

  /** Applies rows fetched from the database (null: deleted there). */
  apply(rows: readonly { key: string; value: Buffer | null }[], version: number): void {
    if (this.keys.size === 0 && this.digest === null && this.undo === null) {
      // A first load: every key set, then sorted once.
      this.loadPacked(packRows(rows.filter((r) => r.value !== null)), null, null);
      this.keys = SortedKeys.from([...this.raw.keys()]);
    } else for (const r of rows) if (!this.isCold(r.key)) this.setRaw(r.key, r.value);
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
    this.loadPacked(packRows(rows.filter((r) => r.value !== null)), sealKey, digest);
  }

  /** `loadPage` of a page as pg-worker.ts packed it: its rows held in it, by handle. */
  loadPacked(packed: Buffer, sealKey: Buffer | null, digest: Buffer | null = null): void {
    if (sealKey !== null && this.digest === null && this.raw.size === 0) {
      // The digest kept from the first page on, while the database reads the next.
      this.digest = { key: Buffer.from(sealKey), value: Buffer.alloc(32) };
    }
    const d = this.digest;
    // The page's share computed already (by the worker: `pageDigest`, of these rows, each once).
    if (d !== null && digest !== null) xorInto(d.value, digest);
    let page = -1;
    let offsets: number[] = [];
    const close = () => {
      if (page < 0) return;
      this.offsets[page] = Uint32Array.from(offsets);
      if (this.live[page] === 0) this.release(page);
    };
    for (let at = 0; at + 8 <= packed.length;) {
      if (page < 0 || offsets.length === PAGE_ROWS) {
        close();
        page = this.pages.length;
        offsets = [];
        this.pages.push(packed);
        this.offsets.push(null);
        this.live.push(0);
      }
      const k = packed.readUInt32BE(at);
      const key = packed.toString('utf8', at + 4, at + 4 + k);
      at += 4 + k;
      const value = at;
      at += 4 + packed.readUInt32BE(at);
      if (this.raw.has(key) || this.isCold(key)) continue;
      this.raw.set(key, page * PAGE_ROWS + offsets.length);
      offsets.push(value);
      this.live[page] = (this.live[page] as number) + 1;
      if (d !== null && digest === null && sealedKey(key)) {
        const bytes = packed.subarray(value + 4, value + 4 + packed.readUInt32BE(value));
        xorTagOfRaw(d.value, d.key, key, bytes);
      }
    }
    close();
  }

  /** A page no row holds any more: let go. */
  private release(page: number): void {
    this.pages[page] = null;
    this.offsets[page] = null;
  }

  /** The bytes of the row under `key` as held (a view of its page for a loaded row). */
  private bytes(key: string): Buffer | undefined {
    const held = this.raw.get(key);
    if (typeof held !== 'number') return held;
    const page = this.pages[held >>> 16] as Buffer;
    const at = (this.offsets[held >>> 16] as Uint32Array)[held & 0xffff] as number;
    return page.subarray(at + 4, at + 4 + page.readUInt32BE(at));
  }

  /** Sets what the map holds under `key`, a loaded row's page let go once none of its rows is held. */
  private hold(key: string, value: Buffer | null): void {
    const held = this.raw.get(key);
    if (typeof held === 'number') {
      const page = held >>> 16;
      const left = (this.live[page] as number) - 1;
      this.live[page] = left;
      if (left === 0) this.release(page);
    }
    if (value === null) this.raw.delete(key);
    else this.raw.set(key, value);
  }

  /** The first load is whole, at `version`: its keys sorted once. */
  loaded(version: number): void {
    this.keys = SortedKeys.from([...this.raw.keys()]);
    this.version = version;
  }

  private setRaw(key: string, value: Buffer | null): void {
    if (this.isCold(key)) {
      // Not sealed (seal.ts sealedKey): no share of the digest.
      this.coldWrites.set(key, value);
      return;
    }
    const d = this.digest !== null && sealedKey(key) ? this.digest : null;
    if (d !== null && this.raw.has(key)) xorTagOfRaw(d.value, d.key, key, this.bytes(key));
    this.changeRaw(key, value);
    if (d !== null && value !== null) xorTagOfRaw(d.value, d.key, key, this.bytes(key));
  }

  /** The digest of the sealed rows held (seal.ts), computed whole once, then kept. */
  sealedDigest(sealKey: Buffer): Buffer {
    if (this.digest === null || !this.digest.key.equals(sealKey)) {
      const value = Buffer.alloc(32);
      for (const key of this.keys)
        if (sealedKey(key)) xorTagOfRaw(value, sealKey, key, this.bytes(key));
      this.digest = { key: Buffer.from(sealKey), value };
    }
    return this.digest.value;
  }

  private changeRaw(key: string, value: Buffer | null): void {
    this.decoded.delete(key);
    if (value === null) {
      if (this.raw.has(key)) {
        this.hold(key, null);
        this.keys.delete(key);
      }
      return;
    }
    if (!this.raw.has(key)) this.keys.insert(key);
    this.hold(key, value);
  }

  /**
   * Rows not held that this transaction read (a range read, then each row
   * got: `vault check`), so each is read from the database once; let go at
   * the transaction's end (`forget`).
   */
  private coldRead = new Map<string, Buffer | null>();

  /** The transaction is over: the rows not held that it read are let go. */
  forget(): void {
    this.coldRead = new Map();
  }

  /** A row not held: as the open transaction wrote it, else as the database has it. */
  private coldBytes(key: string): Buffer | null {
    if (this.coldWrites.has(key)) return this.coldWrites.get(key) ?? null;
    const seen = this.coldRead.get(key);
    if (seen !== undefined) return seen;
    const [r] = (this.cold as ColdRows).rows(key, `${key}\u0000`, 1);
    const got = r?.key === key ? r.value : null;
    this.coldRead.set(key, got);
    return got;
  }

  /**
   * The rows not held in `range`, in key order: the database's, with the open
   * transaction's writes over them.
   */
  private coldRange(range: KeyRange): { key: string; value: Buffer }[] {
    if (this.cold === null) return [];
    const out: { key: string; value: Buffer }[] = [];
    for (const [from, to] of COLD) {
      const start = range.start !== undefined && range.start > from ? range.start : from;
      const end = range.end !== undefined && range.end < to ? range.end : to;
      if (start >= end) continue;
      const written = [...this.coldWrites].filter(([k]) => k >= start && k < end);
      const limit = (range.limit ?? Infinity) + written.length;
      const got = new Map(
        this.cold
          .rows(start, end, Number.isFinite(limit) ? limit : 0x7fffffff)
          .map((r) => [r.key, r.value]),
      );
      for (const [k, v] of got) this.coldRead.set(k, v);
      for (const [k, v] of written) {
        if (v === null) got.delete(k);
        else got.set(k, v);
      }
      for (const k of [...got.keys()].sort()) out.push({ key: k, value: got.get(k) as Buffer });
    }
    return out;
  }

  get(key: string): unknown {
    if (this.isCold(key)) {
      const raw = this.coldBytes(key);
      return raw === null ? undefined : decodeRecord(raw);
    }
    if (this.decoded.has(key)) return this.decoded.get(key);
    const raw = this.bytes(key);
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
    return this.getRange(range, false).map((r) => r.key);
  }

  getRange(range: KeyRange, values = true): { key: string; value: unknown }[] {
    const held = this.keys.range(range.start, range.end, range.limit);
    const cold = this.coldRange(range);
    const rows: { key: string; value: unknown }[] = held.map((key) => ({
      key,
      value: values ? this.get(key) : undefined,
    }));
    if (cold.length === 0) return rows;
    for (const r of cold)
      rows.push({ key: r.key, value: values ? decodeRecord(r.value) : undefined });
    rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return range.limit === undefined ? rows : rows.slice(0, range.limit);
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
    // A row not held is not read for this: its `before` is unknown (undefined).
    const before = this.isCold(key)
      ? this.coldWrites.has(key)
        ? this.coldWrites.get(key)
        : undefined
      : (this.bytes(key) ?? null);
    this.undo.push([key, before]);
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
      const [key, before] = undo.pop() as [string, Buffer | null | undefined];
      if (before === undefined) this.coldWrites.delete(key);
      else this.setRaw(key, before);
    }
  }

  /** The rows the open transaction changed, as they are now (null: removed). */
  changes(): { key: string; value: Buffer | null }[] {
    const first = new Map<string, Buffer | null | undefined>();
    for (const [key, before] of this.undo ?? []) if (!first.has(key)) first.set(key, before);
    const out: { key: string; value: Buffer | null }[] = [];
    for (const [key, before] of first) {
      if (this.isCold(key)) {
        // Not read before it was written: as written now, whatever the database had.
        const now = this.coldWrites.get(key);
        if (now !== undefined) out.push({ key, value: now });
        continue;
      }
      const now = this.bytes(key) ?? null;
      if (now === before || (now !== null && before != null && now.equals(before))) continue;
      out.push({ key, value: now });
    }
    return out;
  }

  /** The database committed the changes as `version`. */
  commit(version: number): void {
    this.undo = null;
    // Written: the database holds them now, and this copy does not.
    this.coldWrites.clear();
    this.version = version;
  }

  /** The transaction failed: every row it touched is put back. */
  rollback(): void {
    this.undoTo(0);
    this.undo = null;
    this.coldWrites.clear();
  }

  /** How many rows this copy holds (the rows not held left out). */
  get size(): number {
    return this.keys.size;
  }
}
