/**
 * The vault's schema, whichever engine holds it: the records a store keeps
 * and the keys they are kept under. It holds ciphertext and metadata only:
 * entry names and values are sealed before they arrive here, names are
 * keyed hashes. Transactions over these records are tx.ts.
 */
import { hash } from 'node:crypto';
import { canon } from '../core/canon.js';
/**
 * 2: per-entry grants (an agent or session holds the data keys of its scope,
 * sealed to its key pair, and a name index of its scope only), data-key
 * generations, owner-MACed agent and session records. 1 is migrated on the
 * owner's next unlock (src/host/keys/migrate.ts).
 */
export const SCHEMA_VERSION = 2;
export const K = {
    header: 'header',
    auditHead: 'audit-head',
    auditBase: 'audit-base',
    ownerFailures: 'owner-failures',
    auditAnchor: 'audit-anchor',
    rotatePending: 'rotate-pending',
    entry: (id) => `entry/${id}`,
    field: (entryId, fieldKey) => `field/${entryId}/${fieldKey}`,
    fieldPrefix: (entryId) => `field/${entryId}/`,
    name: (hash) => `name/${hash}`,
    agent: (id) => `agent/${id}`,
    rate: (agentId) => `rate/${agentId}`,
    agentName: (name) => `agent-name/${name}`,
    session: (id) => `session/${id}`,
    key: (id) => `key/${id}`,
    challenge: (id) => `challenge/${id}`,
    audit: (seq) => `audit/${String(seq).padStart(12, '0')}`,
};
/**
 * Every record but the audit records (hash-chained) has a checksum beside it,
 * `sum/<key>`: a hash of its canonical form, written in the same transaction.
 * It catches accidental damage (a flipped bit in a timestamp, a counter, a
 * public key) that no seal or MAC covers; `vault check` compares them. It is
 * not keyed: tampering is what the seals and MACs are for.
 */
export const SUM_PREFIX = 'sum/';
/** Present once every record has its checksum (a vault from before them gets them on first open). */
export const SUMS_MARKER = 'sums';
/** The checksum of a record's value (one-shot: a Hash object per record cost as much as the hashing). */
export function recordSum(value) {
    return hash('sha256', canon(value), 'buffer').subarray(0, 16);
}
/** Whether a store key carries a checksum of its own. */
export function summed(key) {
    // The sealed state (seal.ts) is MACed whole: no checksum of its own.
    return !key.startsWith('audit/') && !key.startsWith(SUM_PREFIX) && key !== 'state';
}
