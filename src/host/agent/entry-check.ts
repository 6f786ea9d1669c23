/**
 * The check step of the access path (access.ts) for one entry and one
 * reference: the caller's grant opened, the entry's sealed name and meta
 * against what was asked, the field's record, its version and generation,
 * the TOTP seed rule and the host binding. What it opens of an entry is kept
 * against the record object the store handed out, for the next request.
 */
import { requestAllowed } from '../../core/caveats.js';
import type { ErrorCode } from '../../core/errors.js';
import {
  SSH_FORWARD_BINDING,
  SSH_KEY_FIELD,
  SSH_PUBLIC_FIELD,
  TOTP_FIELD,
} from '../../core/names.js';
import { KEY_BYTES } from '../../crypto/aead.js';
import { equal } from '../../crypto/hash.js';
import type { EntryRecord, FieldRecord, Grant, VaultHeader } from '../../store/schema.js';
import type { Tx } from '../../store/tx.js';
import { normalHost } from '../entries/entries.js';
import { oauthRecords, oauthRole, type OAuthRecords } from '../entries/oauth.js';
import { fieldHash, openMeta, openName, type EntryMeta } from '../keys/grants.js';
import type { AgentSession } from './authenticate.js';

/** A reference to one field of one entry, as the caller wrote it. */
export interface FieldRef {
  readonly entry: string;
  readonly field: string;
  /**
   * A field the request does without when the entry has none (an AWS key
   * pair's session token): no VLT-2044, no value, not named in the audit.
   */
  readonly optional?: boolean;
}

/** What the released values are for: the audit action and, for a fill, where it goes. */
export type Purpose =
  | { readonly kind: 'get' }
  | { readonly kind: 'totp' }
  | {
      readonly kind: 'fill';
      readonly host: string | null;
      /** The proxy request the value goes into (absent for a render): for request caveats. */
      readonly request?: { readonly method: string; readonly target: string };
    }
  /** The public keys `vault-cli ssh-agent` lists (ssh.ts): audited, not charged to the limits. */
  | { readonly kind: 'ssh_public' }
  /** An SSH signature (ssh.ts): the server's host key, if shown, and what the binds showed. */
  | {
      readonly kind: 'ssh';
      /** The fingerprint of the host key the session is bound to; null: no session-bind. */
      readonly server: string | null;
      /** The session came through a forwarded agent (`ssh -A`). */
      readonly forwarded: boolean;
      /** A session-bind that did not verify, or data for another session: refused so. */
      readonly problem: ErrorCode | null;
    };

/** What check() found for one entry of a request, kept for its other fields. */
export type EntryCheck =
  { code: ErrorCode } | { dataKey: Buffer; meta: EntryMeta; fields: FieldKeys };

/** Field names to their store keys under one data key (fieldHash), as far as asked. */
type FieldKeys = Map<string, string>;
/** Field keys kept per opened entry: a caller naming many fields that do not exist keeps none of them. */
const FIELD_KEYS_KEPT = 16;

/**
 * What an entry record's sealed name and meta open to with one data key, kept
 * against the record object the store handed out. The store hands out the
 * same (frozen) object only while a transaction sees the same bytes
 * (src/store/lmdb/rows.ts DecodedRecords): an entry renamed, re-bound to other hosts,
 * rotated or re-granted is another object, opened afresh. And only for a key
 * equal to the one it was opened with (compared in constant time), in the
 * same vault (header): opening the same record's bytes with the same key gives
 * the same name and meta, so a hit is what opening again would give. Every
 * caller whose grant opens this generation holds the same data key, so one
 * opening serves them all (keyed by the key buffer's identity, as before,
 * it served only the last caller: with 20 agents taking turns, a miss nearly
 * every time, issue 37). A caller with another key (a damaged grant) opens
 * afresh and takes the place. Every rule that uses it (name equality,
 * versions, host binding) is still judged per request. What it holds (an
 * entry's name and meta) the host opens on every read anyway; the key it is
 * compared against is the buffer of the caller that opened it, which the
 * caller cache holds (and zeroes when it drops the caller: then nothing
 * matches it, and the next caller opens afresh); no key is kept that the
 * caller cache does not hold already.
 */
interface OpenedEntry {
  readonly dataKey: Buffer;
  readonly header: VaultHeader;
  readonly name: string | null;
  readonly meta: EntryMeta | null;
  readonly fields: FieldKeys;
}
const openedEntries = new WeakMap<EntryRecord, OpenedEntry>();

function openEntry(header: VaultHeader, dataKey: Buffer, entry: EntryRecord): OpenedEntry {
  const kept = openedEntries.get(entry);
  if (
    kept !== undefined &&
    kept.header === header &&
    (kept.dataKey === dataKey || equal(kept.dataKey, dataKey))
  )
    return kept;
  const name = openName(header, dataKey, entry);
  const meta = name === null ? null : openMeta(header, dataKey, entry);
  const opened = {
    dataKey,
    header,
    name,
    meta: meta === null ? null : frozenMeta(meta),
    fields: new Map(),
  };
  openedEntries.set(entry, opened);
  return opened;
}

function frozenMeta(m: EntryMeta): EntryMeta {
  Object.freeze(m.fields);
  Object.freeze(m.versions);
  Object.freeze(m.hosts);
  if (m.exposed !== undefined) Object.freeze(m.exposed);
  return Object.freeze(m);
}

/**
 * The entry half of check(): the grant opened, its generation, the sealed name
 * equal to the name asked for, the meta opened. Once per entry and name in a
 * request, however many of its fields are asked for.
 */
export function checkEntry(
  session: AgentSession,
  header: VaultHeader,
  entry: EntryRecord,
  grant: Grant,
  name: string,
): EntryCheck {
  if (entry.gen !== grant.gen) return { code: 'VLT-3020' };
  const dataKey = session.unseal(grant.box);
  if (dataKey === null || dataKey.length !== KEY_BYTES) return { code: 'VLT-3003' };
  const opened = openEntry(header, dataKey, entry);
  if (opened.name === null) return { code: 'VLT-3003' };
  if (opened.name !== name) return { code: 'VLT-3022' };
  if (opened.meta === null) return { code: 'VLT-3003' };
  return { dataKey, meta: opened.meta, fields: opened.fields };
}

/** The store key of `field` under the entry's data key, kept with the opened entry. */
function fieldKey(
  checked: { dataKey: Buffer; fields: FieldKeys },
  entryId: string,
  field: string,
): string {
  const kept = checked.fields.get(field);
  if (kept !== undefined) return kept;
  const key = fieldHash(checked.dataKey, entryId, field);
  if (checked.fields.size < FIELD_KEYS_KEPT) checked.fields.set(field, key);
  return key;
}

/**
 * One reference checked against the caller's grant, inside the transaction:
 * its data key opened from the grant, the entry's sealed name equal to the name
 * asked for (a swapped index row leads elsewhere: VLT-3022), the generations
 * and the field's version as the sealed meta says (an older record: VLT-3020),
 * a totp seed refused (VLT-2052), and for a fill the host binding.
 */
export function check(
  tx: Tx,
  entry: EntryRecord,
  checked: EntryCheck,
  ref: FieldRef,
  /** For a fill, its host and request; `caveats`: the agent's for this entry, if any. */
  on: { purpose: Purpose; host: string | null; caveats: readonly string[] | undefined },
): { code: ErrorCode } | { record: FieldRecord; dataKey: Buffer; oauth?: OAuthRecords } {
  if ('code' in checked) return checked;
  const { dataKey, meta } = checked;
  const { purpose, host } = on;
  // An OAuth entry's refresh token and client secret never leave the host; its
  // access token is obtained with them (oauth.ts): checked as its refresh token.
  const role = oauthRole(meta, ref.field);
  if (role === 'held') return { code: 'VLT-2064' };
  const stored = role === 'access' ? 'refresh_token' : ref.field;
  const record = tx.field(entry.id, fieldKey(checked, entry.id, stored));
  if (record === null) return { code: 'VLT-2044' };
  if (record.gen !== entry.gen || record.version < (meta.versions[stored] ?? 0))
    return { code: 'VLT-3020' };
  // A one-time-password seed never leaves the host: only `totp` uses it, for a code.
  if (ref.field === TOTP_FIELD && purpose.kind !== 'totp') return { code: 'VLT-2052' };
  // An SSH private key never leaves the host either: only a signature made with it does.
  if ((ref.field === SSH_KEY_FIELD) !== (purpose.kind === 'ssh')) return { code: 'VLT-2065' };
  if (purpose.kind === 'ssh_public' && ref.field !== SSH_PUBLIC_FIELD) return { code: 'VLT-2065' };
  if (purpose.kind === 'ssh') {
    const code = sshRefusal(meta.hosts, purpose);
    return code === null ? { record, dataKey } : { code };
  }
  if (host !== null && meta.hosts.length > 0 && !meta.hosts.includes(normalHost(host)))
    return { code: 'VLT-2045' };
  const caveat = caveatRefusal(on.caveats, purpose);
  if (caveat !== null) return { code: caveat };
  if (role !== 'access') return { record, dataKey };
  const oauth = oauthRecords(tx, entry, (f) => fieldKey(checked, entry.id, f));
  for (const [f, r] of Object.entries(oauth))
    if (r.gen !== entry.gen || r.version < (meta.versions[f] ?? 0)) return { code: 'VLT-3020' };
  return { record, dataKey, oauth };
}

/**
 * Check, the agent's request caveats for the entry (core/caveats.ts), if it
 * has any: released only into a proxy request they allow (VLT-2060, counted
 * as a violation), never to `get` or a render (VLT-2061).
 */
export function caveatRefusal(
  rules: readonly string[] | undefined,
  purpose: Purpose,
): ErrorCode | null {
  if (rules === undefined) return null;
  if (purpose.kind !== 'fill' || purpose.request === undefined) return 'VLT-2061';
  const { method, target } = purpose.request;
  return requestAllowed(rules, method, target) ? null : 'VLT-2060';
}

/**
 * An SSH signature against the entry's binding: a session-bind that failed
 * (VLT-2068), a forwarded agent where the binding does not allow one
 * (VLT-2066), a bound entry asked to sign for a server whose host key is not
 * bound, or for no server shown (VLT-2045, counted as a violation).
 */
function sshRefusal(hosts: readonly string[], p: Purpose & { kind: 'ssh' }): ErrorCode | null {
  if (p.problem !== null) return p.problem;
  if (p.forwarded && !hosts.includes(SSH_FORWARD_BINDING)) return 'VLT-2066';
  const keys = hosts.filter((h) => h !== SSH_FORWARD_BINDING);
  if (keys.length > 0 && (p.server === null || !keys.includes(p.server))) return 'VLT-2045';
  return null;
}
