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
import { createHmac } from 'node:crypto';
import { recordSum, summed } from './schema.js';

/** The store key of the sealed state. */
export const STATE_KEY = 'state';

export interface StateRecord {
  /** One more at every transaction that changes a sealed record or appends an audit record. */
  readonly version: number;
  /** XOR of rowTag over every sealed record. */
  readonly digest: Buffer;
  /** The first audit record keyed under the state key: every later one must be. */
  readonly keyedFrom: number;
  readonly mac: Buffer;
}

/**
 * Whether the record under `key` is in the sealed set: every checksummed
 * record but the host's clean-close mark and the audit chain's own head,
 * base and anchor (the chain has its links, its keyed records and the
 * owner's anchor; a cut after the anchor is the anchor memory's to find).
 */
export function sealedKey(key: string): boolean {
  return summed(key) && key !== 'settled' && !key.startsWith('audit-');
}

function hmac(key: Buffer, ...parts: (string | number | Buffer)[]): Buffer {
  const h = createHmac('sha256', key);
  for (const p of parts) {
    const b = Buffer.isBuffer(p) ? p : Buffer.from(String(p));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    h.update(len).update(b);
  }
  return h.digest();
}

/** One record's share of the digest. */
export function rowTag(key: Buffer, rowKey: string, value: unknown): Buffer {
  return hmac(key, 'row-v1', rowKey, recordSum(value));
}

export function xorInto(into: Buffer, tag: Buffer): void {
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as number) ^ (tag[i] as number);
}

export function stateMac(key: Buffer, s: Omit<StateRecord, 'mac'>): Buffer {
  return hmac(key, 'state-v1', s.version, s.digest, s.keyedFrom);
}

/** The MAC that keys one audit record (its hash covers the version it names). */
export function auditKeyMac(key: Buffer, seq: number, hash: Buffer): Buffer {
  return hmac(key, 'audit-key-v1', seq, hash);
}

/** The digest of a set of records, computed whole. */
export function digestOf(key: Buffer, rows: Iterable<{ key: unknown; value: unknown }>): Buffer {
  const d = Buffer.alloc(32);
  for (const r of rows) {
    if (typeof r.key === 'string' && sealedKey(r.key)) xorInto(d, rowTag(key, r.key, r.value));
  }
  return d;
}

/** The state record's MAC checks under `key`. */
export function stateHolds(key: Buffer, s: StateRecord | undefined): s is StateRecord {
  if (s === undefined || !Buffer.isBuffer(s.mac) || !Buffer.isBuffer(s.digest)) return false;
  return stateMac(key, s).equals(s.mac);
}
