import { slot } from '../../crypto/aead.js';
import { EpochOpener, SealEpoch } from '../../crypto/audit-seal.js';
import { openSealed } from '../../crypto/box.js';
import { equal } from '../../crypto/hash.js';
/**
 * An epoch ends after this many records, or this long after it started,
 * whichever comes first; and every host process starts with none. A memory
 * dump of the host opens the names of the current epoch's records (the host
 * sealed them, so it had seen them): these bound how many, and how far back.
 * Starting an epoch costs about what one record's sealed box did (an X25519
 * key pair and a DH), so at 1,024 records it is under a tenth of a
 * microsecond a record under load, and at one epoch a minute nothing when
 * idle.
 */
export const EPOCH_RECORDS = 1024;
export const EPOCH_MS = 60_000;
/**
 * The host's current epoch. Module state, not the host context's: a host is
 * one process, and appendAudit is called inside transactions all over the
 * host, none of which carries a context. A new process starts a new epoch.
 */
let epoch = null;
let epochTimer = null;
/** Ends the current epoch now (its key zeroed); the next record starts another. */
export function endAuditEpoch() {
    epoch?.wipe();
    epoch = null;
    if (epochTimer !== null)
        clearTimeout(epochTimer);
    epochTimer = null;
}
/** The epoch to seal a record of time `now` under, to `recipient`; a new one past the bounds. */
function epochFor(recipient, now) {
    if (epoch !== null &&
        (epoch.wiped ||
            epoch.sealed >= EPOCH_RECORDS ||
            now < epoch.started ||
            now - epoch.started >= EPOCH_MS ||
            // `vault restore` or a vault made anew under a running host.
            !equal(epoch.recipient, recipient))) {
        endAuditEpoch();
    }
    if (epoch === null) {
        epoch = SealEpoch.start(recipient, now);
        // Wiped on time even when no record comes to end it (the clock above may be a test's).
        epochTimer = setTimeout(endAuditEpoch, EPOCH_MS);
        epochTimer.unref();
    }
    return epoch;
}
/** A record's sealed names are bound to its place in the chain: moved to another record, they fail. */
function namesSlot(seq) {
    return slot('audit-names', seq);
}
/**
 * `e`'s names sealed for record `seq`, under the current epoch's key, with
 * that epoch's public key; null when the event names nothing.
 */
export function sealNames(auditPublicKey, seq, e) {
    if (e.entry === null && e.field === null && e.entryId === null)
        return null;
    const sealer = epochFor(auditPublicKey, e.at);
    const names = Buffer.from(JSON.stringify({ entry: e.entry, field: e.field, entryId: e.entryId }));
    return { sealed: sealer.seal(names, namesSlot(seq)), epoch: sealer.publicKey };
}
/**
 * A record's sealed names, opened; null when it has none, or they do not
 * open (another key's, altered, moved, or a record not shaped like one).
 */
function openOne(r, keys, opener) {
    try {
        if (!Buffer.isBuffer(r.sealed))
            return null;
        if (r.epoch === undefined)
            return openSealed(keys, r.sealed);
        return Buffer.isBuffer(r.epoch) ? opener.open(r.epoch, r.sealed, namesSlot(r.seq)) : null;
    }
    catch {
        return null;
    }
}
/**
 * Runs `fn` with a function that opens records' names (null: none, or they
 * do not open); each epoch's key is derived once, and wiped when `fn` returns.
 */
export function withNames(keys, fn) {
    const opener = new EpochOpener(keys);
    try {
        return fn((r) => openOne(r, keys, opener));
    }
    finally {
        opener.wipe();
    }
}
/** The sequence numbers of the records whose sealed names do not open with the owner's audit key. */
export function unopenedNames(records, keys) {
    return withNames(keys, (open) => records.filter((r) => r.sealed !== null && open(r) === null).map((r) => r.seq));
}
