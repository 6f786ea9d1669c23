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
import { canon } from '../core/canon.js';
import { sha256Into } from '../crypto/hash.js';
import { HmacSha256 } from '../crypto/hmac-sha256.js';
import { summed } from './schema.js';

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

/** The few keys in use (the state key, a test's), the last used first, each with its MAC's pads. */
const padded: { key: Buffer; mac: HmacSha256 }[] = [];

function sameKey(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The MAC under `key`, its pads hashed once (hmac-sha256.ts: issue 37, the
 * digest of 300,000 sealed rows is most of a cold team host's start). Found
 * again by the key's content: a caller may reuse its buffer.
 */
function padsOf(key: Buffer): HmacSha256 {
  for (let i = 0; i < padded.length; i++) {
    const p = padded[i] as { key: Buffer; mac: HmacSha256 };
    if (sameKey(p.key, key)) {
      if (i > 0) padded.unshift(...padded.splice(i, 1));
      return p.mac;
    }
  }
  const p = { key: Buffer.from(key), mac: new HmacSha256(key) };
  padded.unshift(p);
  for (const old of padded.splice(8)) {
    old.key.fill(0);
    old.mac.wipe();
  }
  return p.mac;
}

/** Appends one part, its length first (u32, big-endian), at `at` of the message; the end. */
function part(p: HmacSha256, at: number, x: string | number | Buffer): number {
  if (Buffer.isBuffer(x)) {
    p.room(at + 4 + x.length, at);
    p.msg.writeUInt32BE(x.length, at);
    x.copy(p.msg, at + 4);
    return at + 4 + x.length;
  }
  const text = typeof x === 'string' ? x : String(x);
  // UTF-8 takes at most 3 bytes a UTF-16 unit.
  p.room(at + 4 + 3 * text.length, at);
  const n = p.msg.write(text, at + 4);
  p.msg.writeUInt32BE(n, at);
  return at + 4 + n;
}

/** HMAC-SHA256 under `key` of the parts, each after its length. */
function hmac(key: Buffer, ...parts: (string | number | Buffer)[]): Buffer {
  const p = padsOf(key);
  let at = 0;
  for (const x of parts) at = part(p, at, x);
  return Buffer.from(p.mac(at));
}

/** Where a record's canonical form is written to be hashed (its checksum). */
let canonical = Buffer.alloc(4096);
const sum = Buffer.alloc(32);

/**
 * XORs into `digest` one record's share of the digest: the HMAC of
 * ('row-v1', its key, its checksum), the checksum schema.ts `recordSum`
 * (SHA-256 of the canonical form, its first 16 bytes).
 */
export function xorRowTag(digest: Buffer, key: Buffer, rowKey: string, value: unknown): void {
  const text = canon(value);
  if (3 * text.length > canonical.length) canonical = Buffer.alloc(3 * text.length);
  xorRowTagCanonical(digest, key, rowKey, canonical.subarray(0, canonical.write(text)));
}

/** `xorRowTag` of the record whose canonical form (core/canon.ts), as UTF-8, is `form`. */
export function xorRowTagCanonical(
  digest: Buffer,
  key: Buffer,
  rowKey: string,
  form: Uint8Array,
): void {
  sha256Into(sum, form);
  xorRowTagOfSum(digest, key, rowKey, sum);
}

/**
 * `xorRowTag` of the record whose checksum (schema.ts recordSum: the first 16
 * bytes of `sum`) is known already: a write computes it for the checksum
 * record anyway (tx.ts set), so the record is not made canonical and hashed
 * twice.
 */
export function xorRowTagOfSum(digest: Buffer, key: Buffer, rowKey: string, sum: Uint8Array): void {
  const p = padsOf(key);
  let at = part(p, 0, 'row-v1');
  at = part(p, at, rowKey);
  p.room(at + 20, at);
  p.msg.writeUInt32BE(16, at);
  for (let i = 0; i < 16; i++) p.msg[at + 4 + i] = sum[i] as number;
  const tag = p.mac(at + 20);
  for (let i = 0; i < 32; i++) digest[i] = (digest[i] as number) ^ (tag[i] as number);
}

/** One record's share of the digest. */
export function rowTag(key: Buffer, rowKey: string, value: unknown): Buffer {
  const tag = Buffer.alloc(32);
  xorRowTag(tag, key, rowKey, value);
  return tag;
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
