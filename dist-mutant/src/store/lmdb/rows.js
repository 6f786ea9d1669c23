/**
 * A write inside a transaction returns lmdb-js's promise of the commit; when
 * the commit fails it rejects too, besides the transaction itself (which
 * `write` and `writeDurable` report). Left alone, that rejection is unhandled
 * and ends the host, so it is caught here and dropped.
 */
export function quiet(pending) {
    if (pending instanceof Promise)
        pending.catch(() => { });
}
/**
 * What DecodedRecords keeps, at most: records (the oldest go first), their
 * bytes in all, and the size of one (a larger one, a big field value, is
 * decoded at each read as before: keeping it would hold memory for little).
 */
const DECODED_KEPT = 2048;
const DECODED_BYTES = 32 * 1024 * 1024;
const DECODED_ONE = 1024 * 1024;
/**
 * Records as decoded, each kept with the bytes it was decoded from: a read
 * takes the bytes its own transaction sees (lmdb-js's getBinaryFast, no copy)
 * and returns the kept record only when they are the same bytes. So it sees
 * exactly what an uncached read would: a writing transaction its own write,
 * every other reader the committed record until the write commits, and a
 * write rolled back (a thrown transaction, an aborted child of lmdb-js's
 * batch) nothing of it; a write needs no invalidation, and no bookkeeping of
 * when a transaction settles. A hit costs a lookup and a compare, instead of
 * decoding (issue 28: about 15 us for an agent record, read twice per fill).
 *
 * Kept records are shared by every reader, so they are frozen: code that
 * changes one in place (instead of a changed copy) fails loudly. Buffers in
 * them cannot be frozen; nothing writes into a stored record's buffers.
 */
class DecodedRecords {
    db;
    kept = new Map();
    keptBytes = 0;
    decoder;
    constructor(db) {
        this.db = db;
        this.decoder = db.decoder;
    }
    get(key) {
        const bytes = this.db.getBinaryFast(key);
        if (bytes === undefined)
            return undefined;
        // lmdb-js reuses this buffer for its next read, and sets its `length` by
        // hand (the allocation is larger): compared and copied by that length.
        const n = bytes.length;
        const hit = this.kept.get(key);
        if (hit !== undefined && hit.bytes.length === n && hit.bytes.compare(bytes, 0, n) === 0)
            return hit.value;
        const own = Buffer.from(bytes.subarray(0, n));
        const value = this.decoder.decode(own);
        this.forget(key);
        if (typeof value !== 'object' || value === null || Buffer.isBuffer(value) || n > DECODED_ONE)
            return value;
        this.kept.set(key, { bytes: own, value: frozen(value) });
        this.keptBytes += n;
        for (const oldest of this.kept.keys()) {
            if (this.kept.size <= DECODED_KEPT && this.keptBytes <= DECODED_BYTES)
                break;
            this.forget(oldest);
        }
        return value;
    }
    forget(key) {
        const gone = this.kept.get(key);
        if (gone === undefined)
            return;
        this.kept.delete(key);
        this.keptBytes -= gone.bytes.length;
    }
}
/** `v` and everything in it frozen, but Buffers (which cannot be). */
function frozen(v) {
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || Object.isFrozen(v))
        return v;
    for (const member of Object.values(v))
        frozen(member);
    return Object.freeze(v);
}
/** One DecodedRecords per open store file, shared by all its transactions. */
const decodedOf = new WeakMap();
/** The rows of an LMDB transaction (lmdb/store.ts opens the only lmdb handles). */
export class LmdbRows {
    db;
    decoded;
    constructor(db) {
        this.db = db;
        let d = decodedOf.get(db);
        if (d === undefined)
            decodedOf.set(db, (d = new DecodedRecords(db)));
        this.decoded = d;
    }
    get(key) {
        return this.decoded.get(key);
    }
    getRange(range) {
        return this.db.getRange(range);
    }
    getKeys(range) {
        return this.db.getKeys(range);
    }
    put(key, value) {
        quiet(this.db.put(key, value));
    }
    remove(key) {
        quiet(this.db.remove(key));
    }
}
