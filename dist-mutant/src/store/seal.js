/**
 * The sealed state (issue 36): a MAC, under a key no database holder has, of
 * the set of records that decide access, bound to a vault-wide version.
 *
 * Per-record MACs cannot find a rollback: a record copied back from earlier
 * is a genuine record and its MAC checks. So the `state` record holds a
 * digest of the whole set (every checksummed record: agents, rate and lock
 * state, sessions, grants, names, entries and fields, keys, the header), the XOR of a keyed tag of each (its key and its checksum),
 * with a version one higher at every transaction that changes the set, all
 * MACed. A transaction updates the digest for the records it writes (two
 * tags each: the record before and after) and nothing else, so a write
 * costs a few keyed hashes, whatever the vault's size. A record changed,
 * removed or put back by anyone without the key leaves the set and the
 * digest apart; each audit record names the version its transaction wrote,
 * so a state record rolled back with its records is older than the chain.
 * The key reaches a host from the owner's unlock, or from an agent's or
 * session's own record wrapped under its token, never from the database.
 */
import { createHash, hash } from 'node:crypto';
import { recordSum, summed } from './schema.js';
/** The store key of the sealed state. */
export const STATE_KEY = 'state';
/**
 * Whether the record under `key` is in the sealed set: every checksummed
 * record but the host's clean-close mark and the audit chain's own head,
 * base and anchor (the chain has its links, its keyed records and the
 * owner's anchor; a cut after the anchor is the anchor memory's to find).
 */
export function sealedKey(key) {
    return summed(key) && key !== 'settled' && !key.startsWith('audit-');
}
/** SHA-256's block: HMAC's pads are one block each. */
const BLOCK = 64;
/** The few keys in use (the state key, a test's): their pads, each one block. */
const padded = new Map();
/**
 * HMAC-SHA256 as RFC 2104 builds it, from the key's pads kept, in two
 * one-shot hashes: createHmac checks its key's type anew at every call (Node
 * 24, this machine: 17 µs a MAC), and hash states copied for each MAC took
 * a dozen calls into C++ (issue 37: the digest of 300,000 sealed rows is
 * most of a cold team host's start). Same output as createHmac
 * (test/unit/seal.test.ts).
 */
function padsOf(key) {
    const id = key.toString('latin1');
    let p = padded.get(id);
    if (p === undefined) {
        const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
        const ipad = Buffer.alloc(BLOCK, 0x36);
        const opad = Buffer.alloc(BLOCK + 32, 0x5c);
        for (let i = 0; i < k.length; i++) {
            ipad[i] = ipad[i] ^ k[i];
            opad[i] = opad[i] ^ k[i];
        }
        p = { ipad, opad };
        if (padded.size >= 8) {
            for (const old of padded.values()) {
                old.ipad.fill(0);
                old.opad.fill(0);
            }
            padded.clear();
        }
        padded.set(id, p);
    }
    return p;
}
/** Where a MAC's inner message is laid out (its pad, then each part with its length). */
let scratch = Buffer.alloc(BLOCK + 1024);
function hmac(key, ...parts) {
    const p = padsOf(key);
    const bytes = parts.map((part) => (Buffer.isBuffer(part) ? part : Buffer.from(String(part))));
    const size = bytes.reduce((n, b) => n + 4 + b.length, BLOCK);
    if (size > scratch.length)
        scratch = Buffer.alloc(size);
    p.ipad.copy(scratch, 0);
    let at = BLOCK;
    for (const b of bytes) {
        scratch.writeUInt32BE(b.length, at);
        b.copy(scratch, at + 4);
        at += 4 + b.length;
    }
    const inner = hash('sha256', scratch.subarray(0, at), 'buffer');
    scratch.fill(0, 0, at);
    // The outer pad's block with the inner hash after it (a copy: pads are shared).
    const outer = Buffer.from(p.opad);
    inner.copy(outer, BLOCK);
    return hash('sha256', outer, 'buffer');
}
/** One record's share of the digest. */
export function rowTag(key, rowKey, value) {
    return hmac(key, 'row-v1', rowKey, recordSum(value));
}
export function xorInto(into, tag) {
    for (let i = 0; i < into.length; i++)
        into[i] = into[i] ^ tag[i];
}
export function stateMac(key, s) {
    return hmac(key, 'state-v1', s.version, s.digest, s.keyedFrom);
}
/** The MAC that keys one audit record (its hash covers the version it names). */
export function auditKeyMac(key, seq, hash) {
    return hmac(key, 'audit-key-v1', seq, hash);
}
/** The digest of a set of records, computed whole. */
export function digestOf(key, rows) {
    const d = Buffer.alloc(32);
    for (const r of rows) {
        if (typeof r.key === 'string' && sealedKey(r.key))
            xorInto(d, rowTag(key, r.key, r.value));
    }
    return d;
}
/** The state record's MAC checks under `key`. */
export function stateHolds(key, s) {
    if (s === undefined || !Buffer.isBuffer(s.mac) || !Buffer.isBuffer(s.digest))
        return false;
    return stateMac(key, s).equals(s.mac);
}
