/** Telling damage in the store from a bug: used by every host path that reads it. */
import { VaultError } from '../core/errors.js';
/**
 * The code for an error a store read threw: a record that does not decode or
 * a page LMDB refuses is damage (VLT-3034), not an internal error; anything
 * else is null.
 */
export function damageCode(err) {
    if (err instanceof VaultError)
        return null;
    if (!(err instanceof Error))
        return null;
    // LMDB's own word for a damaged page; not its write failures (ENOSPC, EACCES: VLT-3004).
    if (/MDB_(CORRUPTED|PAGE_NOTFOUND|INVALID|VERSION_MISMATCH|BAD_VALSIZE)/.test(err.message)) {
        return 'VLT-3034';
    }
    // A value that does not decode, met on lmdb-js's read path.
    const stack = err.stack ?? '';
    if (/node_modules\/(msgpackr\/|lmdb\/read\.js)/.test(stack))
        return 'VLT-3034';
    return null;
}
const obj = (v) => typeof v === 'object' && v !== null;
const buf = (v) => Buffer.isBuffer(v);
const int = (v) => typeof v === 'number' && Number.isInteger(v);
const AUDIT_KEYS = 'action,actor,at,entryId,hash,host,outcome,prev,sealed,seq,source,subject';
/** A record whose names are sealed under an audit epoch's key also carries that epoch's public key. */
const EPOCH_AUDIT_KEYS = 'action,actor,at,entryId,epoch,hash,host,outcome,prev,sealed,seq,source,subject';
const textOrNull = (v) => v === null || typeof v === 'string';
/** Exactly the fields of an audit record, each of its type (the chain's hash reads a missing one as empty). */
export function auditShape(a) {
    if (!obj(a))
        return false;
    // A sealed vault's records (store/seal.ts) name their version and carry the hosts' key.
    const keys = Object.keys(a)
        .filter((k) => !((k === 'state' && int(a.state)) || (k === 'mac' && buf(a.mac))))
        .sort()
        .join(',');
    return ((keys === AUDIT_KEYS || (keys === EPOCH_AUDIT_KEYS && buf(a.epoch) && buf(a.sealed))) &&
        int(a.seq) &&
        typeof a.at === 'number' &&
        typeof a.action === 'string' &&
        typeof a.actor === 'string' &&
        typeof a.source === 'string' &&
        typeof a.outcome === 'string' &&
        textOrNull(a.entryId) &&
        (a.sealed === null || buf(a.sealed)) &&
        textOrNull(a.host) &&
        textOrNull(a.subject) &&
        buf(a.prev) &&
        buf(a.hash));
}
