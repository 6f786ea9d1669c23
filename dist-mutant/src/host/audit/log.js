import { equal, keyedHash } from '../../crypto/hash.js';
import { sealNames, withNames } from './names.js';
const GENESIS = Buffer.alloc(32);
export function recordHash(r) {
    const fields = [
        r.seq,
        r.at,
        r.action,
        r.actor,
        r.source,
        r.outcome,
        r.entryId ?? '',
        r.sealed ?? Buffer.alloc(0),
        r.host ?? '',
        r.subject ?? '',
    ];
    // A record of the old form hashes as it always did; removing or adding `epoch` changes the hash.
    // So does removing `state` (store/seal.ts): the version a record names is in its hash.
    if (r.state !== undefined) {
        return keyedHash(null, 'audit-v3', ...fields, r.epoch ?? Buffer.alloc(0), r.state, r.prev);
    }
    return r.epoch === undefined
        ? keyedHash(null, 'audit-v1', ...fields, r.prev)
        : keyedHash(null, 'audit-v2', ...fields, r.epoch, r.prev);
}
/** Appends one event inside the caller's write transaction. */
export function appendAudit(tx, header, e) {
    const head = tx.auditHead();
    const seq = (head?.seq ?? 0) + 1;
    const names = sealNames(header.auditPublicKey, seq, e);
    // The sealed state's version this transaction writes: the chain vouches for it.
    const version = tx.stateVersion();
    const base = {
        seq,
        at: e.at,
        action: e.action,
        actor: e.actor,
        source: e.source,
        outcome: e.outcome,
        // Sealed with the name (schema 2): an id in clear would link records to entries.
        entryId: null,
        sealed: names?.sealed ?? null,
        host: e.host,
        subject: e.subject,
        prev: head?.hash ?? GENESIS,
        ...(names === null ? {} : { epoch: names.epoch }),
        ...(version === null ? {} : { state: version }),
    };
    const record = { ...base, hash: recordHash(base) };
    tx.appendAudit(record);
    return record;
}
/** The records with their names opened by the owner's audit key. */
export function viewAudit(records, keys) {
    return withNames(keys, (open) => records.map((r) => {
        let entry = null;
        let field = null;
        const opened = open(r);
        if (opened !== null) {
            const parsed = JSON.parse(opened.toString('utf8'));
            entry = parsed.entry;
            field = parsed.field;
        }
        return {
            seq: r.seq,
            at: r.at,
            action: r.action,
            actor: r.actor,
            source: r.source,
            outcome: r.outcome,
            entry,
            field,
            host: r.host,
            subject: r.subject,
        };
    }));
}
/** Whether a record links to `prev` and hashes to its hash; false for one not shaped like a record. */
function linkHolds(r, prev) {
    try {
        return equal(r.prev, prev) && equal(r.hash, recordHash(r));
    }
    catch {
        return false;
    }
}
/**
 * The sequence number of the first record whose chain link does not hold, or
 * null when the whole chain verifies: from `start` (the record before the
 * first one, archived) or from the genesis.
 */
export function brokenLink(records, headHash, start = null) {
    let prev = start?.hash ?? GENESIS;
    let seq = start?.seq ?? 0;
    for (const r of records) {
        seq++;
        if (r.seq !== seq || !linkHolds(r, prev))
            return seq;
        prev = r.hash;
    }
    if (headHash !== null && !equal(prev, headHash))
        return seq + 1;
    return null;
}
function anchorMac(key, vaultId, a) {
    return keyedHash(key, 'audit-anchor-v1', vaultId, a.seq, a.hash, a.at);
}
/**
 * MACs the current chain head, inside the caller's write transaction; nothing
 * when it is anchored already. The owner vouches only for records that extend
 * what it vouched for last time: when the previous anchor's MAC fails, or the
 * anchored record is gone, changed or re-chained, or a record after it does not
 * link, the old anchor stays, so `audit --verify` goes on reporting the
 * rewrite. (Otherwise the owner's next command, `audit --verify` itself
 * included, would vouch for a rewritten log.) `previousKey` is the key that
 * made the previous anchor, when it differs (`vault rekey`).
 * @returns whether the head is anchored now.
 */
export function anchorAudit(tx, vaultId, key, now, previousKey = key) {
    const head = tx.auditHead();
    if (head === null)
        return false;
    const prev = tx.auditAnchor();
    if (prev !== null) {
        if (prev.seq === head.seq && equal(prev.hash, head.hash))
            return true;
        if (!equal(prev.mac, anchorMac(previousKey, vaultId, prev)))
            return false;
        let after;
        const base = tx.auditBase();
        if (base !== null && prev.seq <= base.seq) {
            // The anchored record was archived: it must be the one the chain now starts after.
            if (prev.seq !== base.seq || !equal(prev.hash, base.hash))
                return false;
            after = tx.audit(base.seq + 1);
        }
        else {
            const [first, ...rest] = tx.audit(prev.seq);
            if (first === undefined ||
                first.seq !== prev.seq ||
                !equal(first.hash, prev.hash) ||
                !equal(first.hash, recordHash(first))) {
                return false;
            }
            after = rest;
        }
        if (!links(after, prev, head))
            return false;
    }
    const a = { seq: head.seq, hash: head.hash, at: now };
    tx.putAuditAnchor({ ...a, mac: anchorMac(key, vaultId, a) });
    return true;
}
/** Whether `records` follow `start` link by link, unchanged, up to `head`. */
function links(records, start, head) {
    let prev = start;
    for (const r of records) {
        if (r.seq !== prev.seq + 1 || !equal(r.prev, prev.hash) || !equal(r.hash, recordHash(r))) {
            return false;
        }
        prev = r;
    }
    return prev.seq === head.seq && equal(prev.hash, head.hash);
}
/**
 * The chain checked from its start, and against the owner's anchor: a record
 * changed, removed or re-chained at or before the anchored one, or a log cut
 * shorter than it, fails, whatever the rest of the chain says. `start` is
 * where the chain begins when older records were archived (`audit archive`);
 * an anchor on an archived record holds only when the records given (archives
 * first, then the store's) still reach back to it.
 */
export function verifyAudit(records, headHash, anchor, key, vaultId, start = null) {
    const brokenAt = brokenLink(records, headHash, start);
    return {
        records: records.length,
        brokenAt,
        ...anchorVerdict(records, anchor, key, vaultId, start),
    };
}
/** What the owner's anchor says of `records` (which follow `start`): the anchor half of verifyAudit. */
export function anchorVerdict(records, anchor, key, vaultId, start = null) {
    const before = start?.seq ?? 0;
    const last = before + records.length;
    const anchoredAt = anchor?.at ?? null;
    if (anchor === null) {
        return {
            anchoredAt,
            anchored: 0,
            unanchored: records.length,
            anchorProblem: last > 0 ? 'no anchor: the owner’s anchor was removed' : null,
        };
    }
    const { mac, ...rest } = anchor;
    if (!Buffer.isBuffer(mac) || !equal(mac, anchorMac(key, vaultId, rest))) {
        return {
            anchoredAt,
            anchored: 0,
            unanchored: records.length,
            anchorProblem: 'the anchor is not the owner’s',
        };
    }
    const unanchored = Math.max(0, last - anchor.seq);
    if (anchor.seq > last) {
        return {
            anchoredAt,
            anchored: anchor.seq,
            unanchored: 0,
            anchorProblem: `the log was cut: anchored record ${anchor.seq} is missing`,
        };
    }
    // The anchored record is the one the chain starts after (the last archived one).
    const at = anchor.seq === before ? start : records[anchor.seq - before - 1];
    if (at === undefined || at === null) {
        return {
            anchoredAt,
            anchored: anchor.seq,
            unanchored,
            anchorProblem: `anchored record ${anchor.seq} is archived: verify with the --archive file that holds it`,
        };
    }
    if (at.seq !== anchor.seq || !equal(at.hash, anchor.hash)) {
        return {
            anchoredAt,
            anchored: anchor.seq,
            unanchored,
            anchorProblem: `record ${anchor.seq} is not the one the owner anchored: the log before it was rewritten`,
        };
    }
    return { anchoredAt, anchored: anchor.seq, unanchored, anchorProblem: null };
}
/**
 * The head the owner's anchor vouches for, when the anchor is on the head
 * (the command just made it); null otherwise.
 */
export function anchoredHead(tx, vaultId) {
    const a = tx.auditAnchor();
    const head = tx.auditHead();
    if (a === null || head === null || a.seq !== head.seq || !equal(a.hash, head.hash))
        return null;
    return { vault: vaultId.toString('hex'), seq: a.seq, hash: a.hash.toString('hex') };
}
/**
 * Whether the store's anchor is older than the one the owner's last command
 * left (`seen`, remembered by its client). The anchor's MAC covers (seq, hash,
 * at) and nothing newer: a same-user agent that saved an earlier anchor can
 * put it back and cut the log to it, and the anchor then holds. Only the
 * owner's memory of the last one shows it. (An anchor removed, or one that is
 * not the owner's, `audit --verify` reports by itself.) Returns what is
 * wrong, or null.
 */
export function rememberedAnchorProblem(tx, vaultId, seen) {
    // A vault made anew at the same place: the memory is of another vault.
    if (seen.vault !== vaultId.toString('hex'))
        return null;
    const anchor = tx.auditAnchor();
    if (anchor === null || anchor.seq >= seen.seq)
        return null;
    const [r] = tx.audit(seen.seq);
    const fate = r === undefined || r.seq !== seen.seq
        ? `the log now ends at record ${tx.auditHead()?.seq ?? 0}: records were erased`
        : equal(r.hash, Buffer.from(seen.hash, 'hex'))
            ? 'an older anchor was put back'
            : `record ${seen.seq} is now another one: the log was cut back and written again`;
    return `the store's anchor is at record ${anchor.seq}, older than record ${seen.seq} the owner's last command anchored, and ${fate}`;
}
