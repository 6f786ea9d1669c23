/**
 * A host's copy of a PostgreSQL vault's rows, kept in memory between
 * requests. It is only a cache: every transaction first brings it up to the
 * database's version (pg.ts), and a write transaction's changes are kept
 * aside (the undo log) until the database has committed them, so a refused
 * commit leaves the copy as the database has it.
 */
import { Packr } from 'msgpackr';
import { rowTag, sealedKey, xorInto } from '../seal.js';
import { SortedKeys } from './sorted-keys.js';
/**
 * Plain MessagePack, every record self-contained: no shared structures (which
 * lmdb-js keeps in the store file itself), so each row decodes on its own, on
 * any host.
 */
const packr = new Packr({ useRecords: false, moreTypes: false });
export function encodeRecord(value) {
    return packr.pack(value);
}
export function decodeRecord(raw) {
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
function tagOfRaw(sealKey, key, raw) {
    try {
        return rowTag(sealKey, key, raw === undefined ? undefined : decodeRecord(raw));
    }
    catch {
        // A row that does not decode is no row the vault sealed.
        return Buffer.alloc(32, 0xff);
    }
}
/**
 * The sealed rows' share of the digest in one page of a first load, each
 * row once: computed in the worker thread beside the host's (pg-worker.ts).
 */
export function pageDigest(sealKey, rows) {
    const d = Buffer.alloc(32);
    for (const r of rows) {
        if (r.value !== null && sealedKey(r.key))
            xorInto(d, tagOfRaw(sealKey, r.key, r.value));
    }
    return d;
}
/**
 * Rows in pg-worker.ts `pack`'s form, `[key length u32][key][value length
 * u32][value]` each, as one buffer of its own (a load's page; the tests' rows).
 */
export function packRows(rows) {
    let size = 0;
    for (const r of rows)
        size += 8 + Buffer.byteLength(r.key) + (r.value?.length ?? 0);
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
];
/** Whether the row under `key` is one a host does not hold (COLD). */
export function coldKey(key) {
    return key.startsWith('audit/') || key.startsWith('sum/');
}
/** Rows of a page a handle (a small integer) can name: the row's index in the low 16 bits. */
const PAGE_ROWS = 0x10000;
export class Mirror {
    cold;
    /** Sorted, as LMDB orders string keys (ASCII keys: code units and bytes agree). */
    keys = new SortedKeys();
    /**
     * Each row's bytes: a row of the first load as a handle, a number (its
     * page in `pages`, its place there in `offsets`), not a Buffer object of
     * its own (issue 37: a Buffer view costs about 240 bytes of memory, more
     * than a row's bytes; 700,000 of them were 170 MB); a row written or
     * fetched since, as its Buffer.
     */
    raw = new Map();
    /** A first load's pages as they came (pg-worker.ts `pack`), while any of their rows is held. */
    pages = [];
    /** Per page, each row's value offset in it (at its length). */
    offsets = [];
    /** Per page, how many of its rows are still held: a page no row holds is let go. */
    live = [];
    decoded = new Map();
    /** The open transaction's writes of rows not held (COLD; null: removed), until its commit. */
    coldWrites = new Map();
    /** `cold`: where the rows not held are read; null: every row held (a copy of no database). */
    constructor(cold = null) {
        this.cold = cold;
    }
    isCold(key) {
        return this.cold !== null && coldKey(key);
    }
    /** The database version these rows are at; 0 before the first load. */
    version = 0;
    /**
     * While a write transaction runs: every write's key and the row before it,
     * in order, so a part of the transaction (one request of a group) can be
     * undone alone, and the whole of it at a failed commit.
     */
    undo = null;
    /** The digest of the sealed records held (seal.ts), kept as each row changes, once asked for. */
    digest = null;
    /** Applies rows fetched from the database (null: deleted there). */
    apply(rows, version) {
        if (this.keys.size === 0 && this.digest === null && this.undo === null) {
            // A first load: every key set, then sorted once.
            this.loadPacked(packRows(rows.filter((r) => r.value !== null)), null, null);
            this.keys = SortedKeys.from([...this.raw.keys()]);
        }
        else
            for (const r of rows)
                if (!this.isCold(r.key))
                    this.setRaw(r.key, r.value);
        this.version = version;
    }
    /**
     * One page of a first load (pg.ts `load`), in any order: set as it comes,
     * so no answer is held whole, the digest kept when the key is known; the
     * keys are sorted once at the end (`loaded`). Only into an empty copy.
     */
    loadPage(rows, sealKey, digest = null) {
        this.loadPacked(packRows(rows.filter((r) => r.value !== null)), sealKey, digest);
    }
    /** `loadPage` of a page as pg-worker.ts packed it: its rows held in it, by handle. */
    loadPacked(packed, sealKey, digest = null) {
        if (sealKey !== null && this.digest === null && this.raw.size === 0) {
            // The digest kept from the first page on, while the database reads the next.
            this.digest = { key: Buffer.from(sealKey), value: Buffer.alloc(32) };
        }
        const d = this.digest;
        // The page's share computed already (by the worker: `pageDigest`, of these rows, each once).
        if (d !== null && digest !== null)
            xorInto(d.value, digest);
        let page = -1;
        let offsets = [];
        const close = () => {
            if (page < 0)
                return;
            this.offsets[page] = Uint32Array.from(offsets);
            if (this.live[page] === 0)
                this.release(page);
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
            if (this.raw.has(key) || this.isCold(key))
                continue;
            this.raw.set(key, page * PAGE_ROWS + offsets.length);
            offsets.push(value);
            this.live[page] = this.live[page] + 1;
            if (d !== null && digest === null && sealedKey(key)) {
                const bytes = packed.subarray(value + 4, value + 4 + packed.readUInt32BE(value));
                xorInto(d.value, tagOfRaw(d.key, key, bytes));
            }
        }
        close();
    }
    /** A page no row holds any more: let go. */
    release(page) {
        this.pages[page] = null;
        this.offsets[page] = null;
    }
    /** The bytes of the row under `key` as held (a view of its page for a loaded row). */
    bytes(key) {
        const held = this.raw.get(key);
        if (typeof held !== 'number')
            return held;
        const page = this.pages[held >>> 16];
        const at = this.offsets[held >>> 16][held & 0xffff];
        return page.subarray(at + 4, at + 4 + page.readUInt32BE(at));
    }
    /** Sets what the map holds under `key`, a loaded row's page let go once none of its rows is held. */
    hold(key, value) {
        const held = this.raw.get(key);
        if (typeof held === 'number') {
            const page = held >>> 16;
            const left = this.live[page] - 1;
            this.live[page] = left;
            if (left === 0)
                this.release(page);
        }
        if (value === null)
            this.raw.delete(key);
        else
            this.raw.set(key, value);
    }
    /** The first load is whole, at `version`: its keys sorted once. */
    loaded(version) {
        this.keys = SortedKeys.from([...this.raw.keys()]);
        this.version = version;
    }
    setRaw(key, value) {
        if (this.isCold(key)) {
            // Not sealed (seal.ts sealedKey): no share of the digest.
            this.coldWrites.set(key, value);
            return;
        }
        const d = this.digest !== null && sealedKey(key) ? this.digest : null;
        if (d !== null && this.raw.has(key))
            xorInto(d.value, this.tagOf(d.key, key));
        this.changeRaw(key, value);
        if (d !== null && value !== null)
            xorInto(d.value, this.tagOf(d.key, key));
    }
    tagOf(sealKey, key) {
        return tagOfRaw(sealKey, key, this.bytes(key));
    }
    /** The digest of the sealed rows held (seal.ts), computed whole once, then kept. */
    sealedDigest(sealKey) {
        if (this.digest === null || !this.digest.key.equals(sealKey)) {
            const value = Buffer.alloc(32);
            for (const key of this.keys)
                if (sealedKey(key))
                    xorInto(value, this.tagOf(sealKey, key));
            this.digest = { key: Buffer.from(sealKey), value };
        }
        return this.digest.value;
    }
    changeRaw(key, value) {
        this.decoded.delete(key);
        if (value === null) {
            if (this.raw.has(key)) {
                this.hold(key, null);
                this.keys.delete(key);
            }
            return;
        }
        if (!this.raw.has(key))
            this.keys.insert(key);
        this.hold(key, value);
    }
    /**
     * Rows not held that this transaction read (a range read, then each row
     * got: `vault check`), so each is read from the database once; let go at
     * the transaction's end (`forget`).
     */
    coldRead = new Map();
    /** The transaction is over: the rows not held that it read are let go. */
    forget() {
        this.coldRead = new Map();
    }
    /** A row not held: as the open transaction wrote it, else as the database has it. */
    coldBytes(key) {
        if (this.coldWrites.has(key))
            return this.coldWrites.get(key) ?? null;
        const seen = this.coldRead.get(key);
        if (seen !== undefined)
            return seen;
        const [r] = this.cold.rows(key, `${key}\u0000`, 1);
        const got = r?.key === key ? r.value : null;
        this.coldRead.set(key, got);
        return got;
    }
    /**
     * The rows not held in `range`, in key order: the database's, with the open
     * transaction's writes over them.
     */
    coldRange(range) {
        if (this.cold === null)
            return [];
        const out = [];
        for (const [from, to] of COLD) {
            const start = range.start !== undefined && range.start > from ? range.start : from;
            const end = range.end !== undefined && range.end < to ? range.end : to;
            if (start >= end)
                continue;
            const written = [...this.coldWrites].filter(([k]) => k >= start && k < end);
            const limit = (range.limit ?? Infinity) + written.length;
            const got = new Map(this.cold
                .rows(start, end, Number.isFinite(limit) ? limit : 0x7fffffff)
                .map((r) => [r.key, r.value]));
            for (const [k, v] of got)
                this.coldRead.set(k, v);
            for (const [k, v] of written) {
                if (v === null)
                    got.delete(k);
                else
                    got.set(k, v);
            }
            for (const k of [...got.keys()].sort())
                out.push({ key: k, value: got.get(k) });
        }
        return out;
    }
    get(key) {
        if (this.isCold(key)) {
            const raw = this.coldBytes(key);
            return raw === null ? undefined : decodeRecord(raw);
        }
        if (this.decoded.has(key))
            return this.decoded.get(key);
        const raw = this.bytes(key);
        if (raw === undefined)
            return undefined;
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
    getKeys(range) {
        return this.getRange(range, false).map((r) => r.key);
    }
    getRange(range, values = true) {
        const held = this.keys.range(range.start, range.end, range.limit);
        const cold = this.coldRange(range);
        const rows = held.map((key) => ({
            key,
            value: values ? this.get(key) : undefined,
        }));
        if (cold.length === 0)
            return rows;
        for (const r of cold)
            rows.push({ key: r.key, value: values ? decodeRecord(r.value) : undefined });
        rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        return range.limit === undefined ? rows : rows.slice(0, range.limit);
    }
    put(key, value) {
        this.remember(key);
        // Read back decoded from the bytes, as LMDB hands back a copy: never the caller's object.
        this.setRaw(key, encodeRecord(value));
    }
    remove(key) {
        this.remember(key);
        this.setRaw(key, null);
    }
    remember(key) {
        if (this.undo === null)
            throw new Error('a write outside a write transaction');
        // A row not held is not read for this: its `before` is unknown (undefined).
        const before = this.isCold(key)
            ? this.coldWrites.has(key)
                ? this.coldWrites.get(key)
                : undefined
            : (this.bytes(key) ?? null);
        this.undo.push([key, before]);
    }
    /** Opens a write transaction: writes are allowed and remembered until commit or rollback. */
    begin() {
        this.undo = [];
    }
    /** A point of the open transaction to undo back to (`undoTo`). */
    mark() {
        return this.undo?.length ?? 0;
    }
    /** Undoes the writes made since `mark`, the rest of the transaction kept. */
    undoTo(mark) {
        const undo = this.undo ?? [];
        while (undo.length > mark) {
            const [key, before] = undo.pop();
            if (before === undefined)
                this.coldWrites.delete(key);
            else
                this.setRaw(key, before);
        }
    }
    /** The rows the open transaction changed, as they are now (null: removed). */
    changes() {
        const first = new Map();
        for (const [key, before] of this.undo ?? [])
            if (!first.has(key))
                first.set(key, before);
        const out = [];
        for (const [key, before] of first) {
            if (this.isCold(key)) {
                // Not read before it was written: as written now, whatever the database had.
                const now = this.coldWrites.get(key);
                if (now !== undefined)
                    out.push({ key, value: now });
                continue;
            }
            const now = this.bytes(key) ?? null;
            if (now === before || (now !== null && before != null && now.equals(before)))
                continue;
            out.push({ key, value: now });
        }
        return out;
    }
    /** The database committed the changes as `version`. */
    commit(version) {
        this.undo = null;
        // Written: the database holds them now, and this copy does not.
        this.coldWrites.clear();
        this.version = version;
    }
    /** The transaction failed: every row it touched is put back. */
    rollback() {
        this.undoTo(0);
        this.undo = null;
        this.coldWrites.clear();
    }
    /** How many rows this copy holds (the rows not held left out). */
    get size() {
        return this.keys.size;
    }
}
