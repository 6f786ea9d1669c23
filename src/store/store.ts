/**
 * The vault's LMDB store: schema, keys and synchronous write transactions.
 * The only importer of lmdb. It holds ciphertext and metadata only: entry names
 * and values are sealed before they arrive here, names are keyed hashes.
 *
 * Every write is committed and flushed to disk before the caller goes on: a
 * `transactionSync` (`write`), or, for the fills and reads that come in
 * bursts, a batched asynchronous transaction resolved only once flushed
 * (`writeDurable`). A reply the host sends after either describes durable
 * state.
 */
import { canon } from '../core/canon.js';
import { hash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { LOST_RATE_STATE, type Limits, type RateState } from '../core/policy.js';
import type { AuditAction } from '../core/audit.js';
import type { ChallengePurpose } from '../core/webauthn.js';
import { STORE_FILE } from '../core/protocol.js';
import { VaultError } from '../core/errors.js';
import type { KeyRange, Rows } from './engine.js';

/**
 * 2: per-entry grants (an agent or session holds the data keys of its scope,
 * sealed to its key pair, and a name index of its scope only), data-key
 * generations, owner-MACed agent and session records. 1 is migrated on the
 * owner's next unlock (src/host/keys/migrate.ts).
 */
export const SCHEMA_VERSION = 2;

export interface KdfRecord {
  readonly alg: 'argon2id13';
  readonly salt: Buffer;
  readonly ops: number;
  readonly mem: number;
}

export interface VaultHeader {
  readonly schema: number;
  readonly vaultId: Buffer;
  readonly kdf: KdfRecord;
  /** The root key wrapped by the owner key, and by the recovery key. */
  readonly rootByOwner: Buffer;
  readonly rootByRecovery: Buffer;
  /** Key of the keyed hashes that stand in for names in the owner's index; wrapped by the root key. */
  readonly indexKey: Buffer;
  /**
   * Schema 2: the key that MACs agent and session records and derives their
   * index keys; wrapped by the root key, so only the owner's passphrase (or
   * the recovery key) reaches it.
   */
  readonly macKey?: Buffer;
  /** Audit names are sealed to this public key; its secret key is wrapped by the root key. */
  readonly auditPublicKey: Buffer;
  readonly auditSecretKey: Buffer;
  /** Tier name -> tier key wrapped by the root key. */
  readonly tiers: Readonly<Record<string, Buffer>>;
  readonly created: number;
}

export interface EntryRecord {
  readonly id: string;
  readonly tier: string;
  /**
   * The data key's generation (schema 2): 1 at creation, one more at each
   * rotation. Every slot sealed by the data key names it, and each grant says
   * which generation it is for, so an entry put back from before a rotation
   * is told apart from a damaged one (VLT-3020).
   */
  readonly gen: number;
  /** The entry's data key, wrapped by its tier key. */
  readonly dataKey: Buffer;
  /** Sealed by the data key: the display name, the field names, the allowed hosts. */
  readonly name: Buffer;
  readonly meta: Buffer;
  readonly created: number;
  readonly updated: number;
}

export interface FieldRecord {
  readonly version: number;
  /** The generation of the data key that sealed it (schema 2). */
  readonly gen: number;
  /** Sealed by the entry's data key; slot = vault, entry, field, version. */
  readonly value: Buffer;
  readonly updated: number;
}

/** One entry's data key, sealed to an agent's or session's public key, for generation `gen`. */
export interface Grant {
  readonly gen: number;
  readonly box: Buffer;
}

/**
 * What an agent or session may open (schema 2), MACed by the owner: the data
 * key of each entry in its scope, and a name index of those entries only,
 * keyed by its own index key.
 */
export interface Grants {
  /** Entry id -> its data key sealed to this record's public key. */
  readonly grants: Readonly<Record<string, Grant>>;
  /** Keyed hash (hex) of an entry name under this record's index key -> entry id. */
  readonly index: Readonly<Record<string, string>>;
  /** This record's index key, sealed to its public key. */
  readonly indexKey: Buffer;
  /** Keyed hash under the vault's MAC key of everything but the rate state (host-written). */
  readonly mac: Buffer;
}

export interface AgentRecord extends Grants {
  readonly id: string;
  readonly name: string;
  readonly kind: 'ai' | 'script';
  /** Entry ids. */
  readonly scope: readonly string[];
  readonly limits: Limits;
  /**
   * Where the host charges reads and records violations and the lock: kept
   * in a record of its own (`rate/<id>`), so a fill rewrites that small
   * record and not this one (issue 28). An agent record of an older vault
   * still holds it here; Tx.agent() reads either, the rate record first.
   */
  readonly rate: RateState;
  /** KDF output of the token secret; compared in constant time. */
  readonly verifier: Buffer;
  readonly publicKey: Buffer;
  /** The agent's box secret key, wrapped by a key derived from its token. */
  readonly secretKey: Buffer;
  /** Schema 1 only: tier name -> tier key sealed to the agent (read by the migration). */
  readonly tierKeys?: Readonly<Record<string, Buffer>>;
  readonly created: number;
  readonly revoked: number | null;
}

/** An agent record as stored: its rate state in its own record, or (older vaults) here. */
type StoredAgent = Omit<AgentRecord, 'rate'> & { readonly rate?: RateState };

/**
 * A session token `run` minted for an agent: the same identity, limits and rate
 * state (those stay on the AgentRecord), a scope equal to or narrower than the
 * agent's, its own verifier and its own key pair, so neither the agent's token
 * nor the store alone opens it. Revoked when the supervised process exits,
 * refused after `expires` in any case.
 */
export interface SessionRecord extends Grants {
  readonly id: string;
  readonly agentId: string;
  /** Entry ids; a subset of the agent's scope when minted. */
  readonly scope: readonly string[];
  /**
   * Minted without --scope: the session's scope follows the agent's, so an
   * entry the owner adds to the agent is granted to it at once. Absent (older
   * records) reads as false: a session is never widened on a guess.
   */
  readonly follows?: boolean;
  readonly verifier: Buffer;
  readonly publicKey: Buffer;
  /** The session's box secret key, wrapped by a key derived from the session token. */
  readonly secretKey: Buffer;
  /** Schema 1 only. */
  readonly tierKeys?: Readonly<Record<string, Buffer>>;
  readonly created: number;
  readonly expires: number;
  readonly revoked: number | null;
}

/** An enrolled hardware key (WebAuthn credential). Public material only. */
export interface KeyRecord {
  /** The credential id, base64url. */
  readonly id: string;
  readonly name: string;
  /** The credential public key, PEM (SPKI). */
  readonly publicKey: string;
  /** The last signature counter accepted. */
  readonly counter: number;
  readonly created: number;
  readonly lastUsed: number | null;
}

/** A WebAuthn challenge the host issued: single use, until `expires`, for one purpose. */
export interface ChallengeRecord {
  /** Hex; names the challenge in the finishing request. */
  readonly id: string;
  /** The challenge bytes, base64url, as the browser echoes them in clientDataJSON. */
  readonly challenge: string;
  readonly purpose: ChallengePurpose;
  /** `http://localhost:<port>` of the page the ceremony runs on. */
  readonly origin: string;
  /** The WebAuthn user handle of an enrolment, base64url. */
  readonly userId: string | null;
  readonly name: string | null;
  readonly created: number;
  readonly expires: number;
}

export interface AuditRecord {
  readonly seq: number;
  readonly at: number;
  readonly action: AuditAction;
  readonly actor: string;
  readonly source: string;
  readonly outcome: string;
  readonly entryId: string | null;
  /** Entry name and field, sealed to the owner's audit key; null when none. */
  readonly sealed: Buffer | null;
  /**
   * The audit epoch's public key when `sealed` is under that epoch's key;
   * absent when `sealed` is a box sealed to the owner's audit key itself.
   */
  readonly epoch?: Buffer;
  readonly host: string | null;
  readonly subject: string | null;
  readonly prev: Buffer;
  readonly hash: Buffer;
}

/** Wrong owner passphrases (or recovery keys) since the last unlock, for the delay before the next try. */
export interface OwnerFailures {
  readonly count: number;
  /** When the last one was refused (ms). */
  readonly last: number;
}

export interface AuditHead {
  readonly seq: number;
  readonly hash: Buffer;
}

/**
 * The chain head as the owner's last command saw it, MACed with a key only the
 * owner's passphrase (or recovery key) reaches: records up to `seq` cannot be
 * rewritten or cut without `audit --verify` seeing it.
 */
export interface AuditAnchor extends AuditHead {
  readonly at: number;
  readonly mac: Buffer;
}

const K = {
  header: 'header',
  auditHead: 'audit-head',
  auditBase: 'audit-base',
  ownerFailures: 'owner-failures',
  auditAnchor: 'audit-anchor',
  rotatePending: 'rotate-pending',
  entry: (id: string) => `entry/${id}`,
  field: (entryId: string, fieldKey: string) => `field/${entryId}/${fieldKey}`,
  fieldPrefix: (entryId: string) => `field/${entryId}/`,
  name: (hash: string) => `name/${hash}`,
  agent: (id: string) => `agent/${id}`,
  rate: (agentId: string) => `rate/${agentId}`,
  agentName: (name: string) => `agent-name/${name}`,
  session: (id: string) => `session/${id}`,
  key: (id: string) => `key/${id}`,
  challenge: (id: string) => `challenge/${id}`,
  audit: (seq: number) => `audit/${String(seq).padStart(12, '0')}`,
};

/**
 * Every record but the audit records (hash-chained) has a checksum beside it,
 * `sum/<key>`: a hash of its canonical form, written in the same transaction.
 * It catches accidental damage (a flipped bit in a timestamp, a counter, a
 * public key) that no seal or MAC covers; `vault check` compares them. It is
 * not keyed: tampering is what the seals and MACs are for.
 */
const SUM_PREFIX = 'sum/';
/** Present once every record has its checksum (a vault from before them gets them on first open). */
const SUMS_MARKER = 'sums';

/** The checksum of a record's value (one-shot: a Hash object per record cost as much as the hashing). */
export function recordSum(value: unknown): Buffer {
  return hash('sha256', canon(value), 'buffer').subarray(0, 16);
}

/** Whether a store key carries a checksum of its own. */
function summed(key: string): boolean {
  return !key.startsWith('audit/') && !key.startsWith(SUM_PREFIX);
}

/** One record as `vault check` sees it: its key, its value, or why it cannot be read. */
export interface RawRecord {
  readonly key: string;
  readonly value: unknown;
  /** Why the value did not decode; undefined when it did. */
  readonly error?: string;
  /** Whether the stored checksum matches (null: the record takes none, or none is kept). */
  readonly sumOk: boolean | null;
}

/**
 * A write inside a transaction returns lmdb-js's promise of the commit; when
 * the commit fails it rejects too, besides the transaction itself (which
 * `write` and `writeDurable` report). Left alone, that rejection is unhandled
 * and ends the host, so it is caught here and dropped.
 */
function quiet(pending: unknown): void {
  if (pending instanceof Promise) pending.catch(() => {});
}

/**
 * Whether `err` is lmdb-js's second report of a failed batched commit (the
 * error carrying `commitError`), thrown or rejected where nobody can catch
 * it. The transaction that failed has already been refused to its caller
 * (writeDurable), so the process that meets this may go on.
 */
export function isFailedCommitEcho(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.message.startsWith('Commit failed') &&
    (err as { commitError?: unknown }).commitError instanceof Promise
  );
}

/** The file-system errors a commit can meet, and what the refusal says of each. */
const WRITE_FAILURES: readonly (readonly [RegExp, string])[] = [
  [/EROFS|read-only file system/i, 'the vault’s file system is read-only (EROFS)'],
  [/ENOSPC|no space left|MDB_MAP_FULL/i, 'the vault’s file system is full (ENOSPC)'],
  [/EIO\b|input\/output error/i, 'the vault’s disk reported an I/O error (EIO)'],
  [/EACCES|EPERM|permission denied/i, 'the store file may not be written (EACCES)'],
];

/**
 * A failed commit as the refusal that names its cause (VLT-3004: every write
 * carries an audit record, so nothing is released), or null when the error is
 * not a file-system failure (damage, a handler's own error).
 */
function commitFailure(err: unknown, cause: unknown = err): VaultError | null {
  if (err instanceof VaultError) return null;
  const text = [cause, err]
    .map((e) =>
      e instanceof Error ? `${String((e as { code?: unknown }).code)} ${e.message}` : '',
    )
    .join(' ');
  const found = WRITE_FAILURES.find(([pattern]) => pattern.test(text));
  if (found === undefined && !/Commit failed/.test(text)) return null;
  const why = found?.[1] ?? 'the store could not commit';
  return new VaultError(
    'VLT-3004',
    `Audit record could not be written: ${why}; access refused until it can be.`,
    { cause: err },
  );
}

/**
 * lmdb-js rejects a failed batched commit twice: the transaction's promise
 * with "Commit failed", and later `commitError`, a second promise carrying the
 * file system's error, that nobody awaits: left alone, its rejection is
 * unhandled and ends the host. It is awaited here (briefly: it settles in the
 * same write-thread callback) for the cause it names.
 */
async function commitCause(err: unknown): Promise<unknown> {
  const second = (err as { commitError?: unknown } | null)?.commitError;
  if (!(second instanceof Promise)) return err;
  const settled = second.then(
    () => err,
    (cause: unknown) => cause,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<unknown>((r) => (timer = setTimeout(() => r(err), 2000)));
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
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
  private readonly kept = new Map<string, { bytes: Buffer; value: unknown }>();
  private keptBytes = 0;
  private readonly decoder: { decode(bytes: Buffer): unknown };

  constructor(private readonly db: RootDatabase) {
    this.decoder = (db as unknown as { decoder: { decode(bytes: Buffer): unknown } }).decoder;
  }

  get(key: string): unknown {
    const bytes = this.db.getBinaryFast(key);
    if (bytes === undefined) return undefined;
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
      if (this.kept.size <= DECODED_KEPT && this.keptBytes <= DECODED_BYTES) break;
      this.forget(oldest);
    }
    return value;
  }

  private forget(key: string): void {
    const gone = this.kept.get(key);
    if (gone === undefined) return;
    this.kept.delete(key);
    this.keptBytes -= gone.bytes.length;
  }
}

/** `v` and everything in it frozen, but Buffers (which cannot be). */
function frozen<T>(v: T): T {
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || Object.isFrozen(v)) return v;
  for (const member of Object.values(v)) frozen(member);
  return Object.freeze(v);
}

/** One DecodedRecords per open store file, shared by all its transactions. */
const decodedOf = new WeakMap<RootDatabase, DecodedRecords>();

/** The rows of an LMDB transaction (store.ts holds the only lmdb handle). */
class LmdbRows implements Rows {
  private readonly decoded: DecodedRecords;
  constructor(private readonly db: RootDatabase) {
    let d = decodedOf.get(db);
    if (d === undefined) decodedOf.set(db, (d = new DecodedRecords(db)));
    this.decoded = d;
  }
  get(key: string): unknown {
    return this.decoded.get(key);
  }
  getRange(range: KeyRange): Iterable<{ key: unknown; value: unknown }> {
    return this.db.getRange(range);
  }
  getKeys(range: KeyRange): Iterable<unknown> {
    return this.db.getKeys(range);
  }
  put(key: string, value: unknown): void {
    quiet(this.db.put(key, value));
  }
  remove(key: string): void {
    quiet(this.db.remove(key));
  }
}

/**
 * Everything one transaction can read and write, over either engine's rows
 * (engine.ts): the schema lives here once, whichever engine holds it.
 */
export class Tx {
  private readonly db: Rows;
  constructor(rows: Rows | RootDatabase) {
    this.db = 'transactionSync' in rows ? new LmdbRows(rows) : rows;
  }

  private set(key: string, value: unknown): void {
    this.db.put(key, value);
    if (summed(key)) this.db.put(SUM_PREFIX + key, recordSum(value));
  }

  private del(key: string): void {
    this.db.remove(key);
    if (summed(key)) this.db.remove(SUM_PREFIX + key);
  }

  /**
   * Records that the host closed the store cleanly at `at`. Written twice in
   * a row (two transactions of the same content), so both of LMDB's meta
   * pages point at the same data: a damaged transaction id that made LMDB
   * pick the older meta page then loses nothing, where it would otherwise
   * roll the store back one transaction without a trace.
   */
  settle(at: number): void {
    this.set('settled', { at });
  }

  /** Whether every record has its checksum; false for a vault from before them. */
  sumsKept(): boolean {
    return this.db.get(SUMS_MARKER) === 1;
  }

  /**
   * Gives every record a checksum, once, for a vault from before them. A store
   * that has some checksums but lost its marker is damaged: left as it is, so
   * `vault check` reports it instead of blessing the damage.
   */
  addMissingSums(): boolean {
    if (this.sumsKept()) return false;
    for (const _ of this.db.getKeys({ start: SUM_PREFIX, end: 'sum0', limit: 1 })) return false;
    for (const { key, value } of this.db.getRange({})) {
      if (typeof key === 'string' && summed(key)) {
        this.db.put(SUM_PREFIX + key, recordSum(value));
      }
    }
    this.set(SUMS_MARKER, 1);
    return true;
  }

  /**
   * Every record, each read on its own so one that does not decode does not
   * hide the rest; with whether its checksum holds. For `vault check`.
   */
  rawRecords(): RawRecord[] {
    const out: RawRecord[] = [];
    const sums = new Map<string, unknown>();
    const keys: string[] = [];
    let previous = '';
    const disorder: string[] = [];
    for (const k of this.db.getKeys({})) {
      const key = typeof k === 'string' ? k : `<non-text key ${JSON.stringify(k)}>`;
      // Keys come in order unless a page is damaged; a range read would then miss records.
      if (typeof k === 'string') {
        if (k <= previous) disorder.push(k);
        previous = k;
      }
      if (key.startsWith(SUM_PREFIX)) {
        try {
          sums.set(key.slice(SUM_PREFIX.length), this.db.get(k as string));
        } catch {
          sums.set(key.slice(SUM_PREFIX.length), null);
        }
      } else keys.push(key);
    }
    // Kept once the marker is there, or any checksum is (a lost marker is damage, not a licence).
    const kept = this.sumsKept() || sums.size > 0;
    for (const key of keys) {
      let value: unknown;
      let error: string | undefined;
      try {
        value = this.db.get(key);
      } catch (err) {
        error = err instanceof Error ? err.name : 'unreadable';
      }
      let sumOk: boolean | null = null;
      if (summed(key) && kept) {
        const sum = sums.get(key);
        sumOk = error === undefined && Buffer.isBuffer(sum) && recordSum(value).equals(sum);
      }
      sums.delete(key);
      out.push({ key, value, sumOk, ...(error === undefined ? {} : { error }) });
    }
    for (const key of disorder) {
      out.push({ key, value: undefined, sumOk: null, error: 'out of order' });
    }
    // A checksum whose record is gone: a record lost (or its key damaged).
    for (const key of sums.keys())
      out.push({ key: SUM_PREFIX + key, value: undefined, sumOk: false, error: 'orphan' });
    return out;
  }

  /** Every record as stored, checksums included, in key order: a copy between engines. */
  allRecords(): { key: string; value: unknown }[] {
    return [...this.db.getRange({})].map((r) => ({ key: String(r.key), value: r.value }));
  }

  /**
   * Makes the store hold exactly `records` (from allRecords of another store):
   * `vault migrate`, a PostgreSQL backup and restore. Checksums come with them.
   */
  replaceAll(records: readonly { key: string; value: unknown }[]): void {
    const keep = new Set(records.map((r) => r.key));
    for (const k of [...this.db.getKeys({})]) {
      if (!keep.has(String(k))) this.db.remove(String(k));
    }
    for (const r of records) this.db.put(r.key, r.value);
  }

  header(): VaultHeader | null {
    return (this.db.get(K.header) as VaultHeader | undefined) ?? null;
  }
  putHeader(h: VaultHeader): void {
    this.set(K.header, h);
  }

  entry(id: string): EntryRecord | null {
    return (this.db.get(K.entry(id)) as EntryRecord | undefined) ?? null;
  }
  putEntry(e: EntryRecord): void {
    this.set(K.entry(e.id), e);
  }
  entries(): EntryRecord[] {
    return [...this.db.getRange({ start: 'entry/', end: 'entry0' })].map(
      (r) => r.value as EntryRecord,
    );
  }
  removeEntry(id: string): void {
    this.del(K.entry(id));
    for (const { key } of this.db.getRange({ start: K.fieldPrefix(id), end: `field/${id}0` })) {
      this.del(String(key));
    }
  }

  field(entryId: string, fieldKey: string): FieldRecord | null {
    return (this.db.get(K.field(entryId, fieldKey)) as FieldRecord | undefined) ?? null;
  }
  putField(entryId: string, fieldKey: string, f: FieldRecord): void {
    this.set(K.field(entryId, fieldKey), f);
  }
  /** Every field record of an entry with its store key (for checks and tests of what the store holds). */
  fieldRecords(entryId: string): { key: string; record: FieldRecord }[] {
    return [...this.db.getRange({ start: K.fieldPrefix(entryId), end: `field/${entryId}0` })].map(
      (r) => ({
        key: String(r.key).slice(K.fieldPrefix(entryId).length),
        record: r.value as FieldRecord,
      }),
    );
  }
  removeField(entryId: string, fieldKey: string): void {
    this.del(K.field(entryId, fieldKey));
  }

  entryIdByName(hash: string): string | null {
    return (this.db.get(K.name(hash)) as string | undefined) ?? null;
  }
  /** Every row of the owner's name index. */
  nameRows(): { hash: string; entryId: string }[] {
    return [...this.db.getRange({ start: 'name/', end: 'name0' })].map((r) => ({
      hash: String(r.key).slice('name/'.length),
      entryId: r.value as string,
    }));
  }
  putName(hash: string, entryId: string): void {
    this.set(K.name(hash), entryId);
  }
  removeName(hash: string): void {
    this.del(K.name(hash));
  }

  /** The agent record with its rate state (see AgentRecord.rate). */
  agent(id: string): AgentRecord | null {
    const stored = this.db.get(K.agent(id)) as StoredAgent | undefined;
    return stored === undefined ? null : this.withRate(id, stored);
  }
  /**
   * Writes the agent record and its rate record, the rate taken out of the
   * first. A revoked agent keeps no rate state: its token opens nothing.
   */
  putAgent(a: AgentRecord): void {
    const { rate, ...stored } = a;
    this.set(K.agent(a.id), stored);
    if (a.revoked === null) this.set(K.rate(a.id), rate);
    else this.del(K.rate(a.id));
  }
  /**
   * Writes an agent's rate state alone (a charge, a violation, a lock): its
   * own small record, not the agent record. An agent record of an older
   * vault that still holds a rate state loses it here, once, so a rate
   * record lost later reads as lost (LOST_RATE_STATE), never as that old state.
   */
  putRate(agentId: string, rate: RateState): void {
    this.set(K.rate(agentId), rate);
    const stored = this.db.get(K.agent(agentId)) as StoredAgent | undefined;
    if (stored?.rate !== undefined) {
      this.set(
        K.agent(agentId),
        Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'rate')),
      );
    }
  }
  agents(): AgentRecord[] {
    return [...this.db.getRange({ start: 'agent/', end: 'agent0' })].map((r) =>
      this.withRate(String(r.key).slice('agent/'.length), r.value as StoredAgent),
    );
  }
  /** The rate record, else (an older vault) the agent record's own, else lost. */
  private withRate(id: string, stored: StoredAgent): AgentRecord {
    const rate = this.db.get(K.rate(id)) as RateState | undefined;
    return { ...stored, rate: rate ?? stored.rate ?? LOST_RATE_STATE };
  }
  agentIdByName(name: string): string | null {
    return (this.db.get(K.agentName(name)) as string | undefined) ?? null;
  }
  putAgentName(name: string, id: string): void {
    this.set(K.agentName(name), id);
  }
  removeAgentName(name: string): void {
    this.del(K.agentName(name));
  }

  session(id: string): SessionRecord | null {
    return (this.db.get(K.session(id)) as SessionRecord | undefined) ?? null;
  }
  putSession(r: SessionRecord): void {
    this.set(K.session(r.id), r);
  }
  sessions(): SessionRecord[] {
    return [...this.db.getRange({ start: 'session/', end: 'session0' })].map(
      (r) => r.value as SessionRecord,
    );
  }
  removeSession(id: string): void {
    this.del(K.session(id));
  }

  keys(): KeyRecord[] {
    return [...this.db.getRange({ start: 'key/', end: 'key0' })].map((r) => r.value as KeyRecord);
  }
  key(id: string): KeyRecord | null {
    return (this.db.get(K.key(id)) as KeyRecord | undefined) ?? null;
  }
  putKey(k: KeyRecord): void {
    this.set(K.key(k.id), k);
  }
  removeKey(id: string): void {
    this.del(K.key(id));
  }

  challenges(): ChallengeRecord[] {
    return [...this.db.getRange({ start: 'challenge/', end: 'challenge0' })].map(
      (r) => r.value as ChallengeRecord,
    );
  }
  challenge(id: string): ChallengeRecord | null {
    return (this.db.get(K.challenge(id)) as ChallengeRecord | undefined) ?? null;
  }
  putChallenge(c: ChallengeRecord): void {
    this.set(K.challenge(c.id), c);
  }
  removeChallenge(id: string): void {
    this.del(K.challenge(id));
  }

  ownerFailures(): OwnerFailures {
    return (this.db.get(K.ownerFailures) as OwnerFailures | undefined) ?? { count: 0, last: 0 };
  }
  putOwnerFailures(f: OwnerFailures): void {
    this.set(K.ownerFailures, f);
  }

  /** Entries an ended session held, to rotate at the owner's next command (the host has no owner key). */
  pendingRotation(): string[] {
    return (this.db.get(K.rotatePending) as string[] | undefined) ?? [];
  }
  putPendingRotation(ids: readonly string[]): void {
    if (ids.length === 0) this.del(K.rotatePending);
    else this.set(K.rotatePending, [...ids]);
  }

  auditAnchor(): AuditAnchor | null {
    return (this.db.get(K.auditAnchor) as AuditAnchor | undefined) ?? null;
  }
  putAuditAnchor(a: AuditAnchor): void {
    this.set(K.auditAnchor, a);
  }

  auditHead(): AuditHead | null {
    return (this.db.get(K.auditHead) as AuditHead | undefined) ?? null;
  }
  appendAudit(r: AuditRecord): void {
    // Audit records carry their own hash chain; the head carries a checksum.
    this.set(K.audit(r.seq), r);
    this.set(K.auditHead, { seq: r.seq, hash: r.hash });
  }
  /** The last record moved to an archive (`audit archive`): the chain in the store starts after it. */
  auditBase(): AuditHead | null {
    return (this.db.get(K.auditBase) as AuditHead | undefined) ?? null;
  }
  /** Removes the records up to `base.seq` (archived) and says where the chain now starts. */
  pruneAudit(base: AuditHead): void {
    for (const key of [...this.db.getKeys({ start: 'audit/', end: K.audit(base.seq + 1) })]) {
      this.db.remove(String(key));
    }
    this.set(K.auditBase, { seq: base.seq, hash: base.hash });
  }
  /** Rewrites one record in place: the schema migration's re-chaining only. */
  putAuditRecord(r: AuditRecord): void {
    this.db.put(K.audit(r.seq), r);
  }
  putAuditHeadOnly(h: AuditHead): void {
    this.set(K.auditHead, h);
  }
  audit(fromSeq = 1): AuditRecord[] {
    return [...this.db.getRange({ start: K.audit(fromSeq), end: 'audit0' })].map(
      (r) => r.value as AuditRecord,
    );
  }
}

/** The store as the host uses it, on either engine (LMDB: Store below; PostgreSQL: pg.ts). */
/** The store as the host uses it, on either engine. */
export interface VaultStore {
  readonly engine: 'lmdb' | 'postgresql';
  /** Where it is, for messages: the LMDB file, or the database URL without secrets. */
  readonly path: string;
  /** One consistent view, current as of the call (pg.ts: checked against the database's version). */
  read<T>(fn: (tx: Tx) => T): T;
  /**
   * One write transaction, durable before it returns; `fn` throwing aborts it.
   * @throws VaultError VLT-3004 (LMDB) or VLT-3040 (PostgreSQL) when it cannot commit.
   */
  write<T>(fn: (tx: Tx) => T): T;
  /** `write`, possibly grouped with others of the moment; settles once durable. */
  writeDurable<T>(fn: (tx: Tx) => T): Promise<T>;
  /** A consistent copy as an LMDB store file at `path` (the one backup format). */
  backup(path: string): Promise<void>;
  /**
   * Calls `wake` when another host may have committed (PostgreSQL's NOTIFY):
   * a hint to look again, never a decision. LMDB has one host: never called.
   */
  onForeignCommit(wake: () => void): void;
  close(): Promise<void>;
}

/**
 * Records (or pages) per transaction of `vault check`'s write probe: about
 * what the host's own transactions write. One transaction over a whole
 * compacted copy (a backup) freed so many pages that LMDB crashed saving the
 * free-page list (mdb_freelist_save, SIGSEGV): a crash of the probe itself,
 * on a sound store, which the host's transactions never come near.
 */
const PROBE_CHUNK = 64;

/** A write waiting for the end of its turn of the event loop (Store.writeDurable). */
interface Queued {
  readonly fn: (tx: Tx) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export class Store implements VaultStore {
  readonly engine = 'lmdb' as const;
  private constructor(
    private readonly db: RootDatabase,
    readonly path: string,
  ) {}

  /** Whether a store file exists in `dir`; checked before opening so a read never creates one. */
  static exists(dir: string): boolean {
    return existsSync(join(dir, STORE_FILE));
  }

  static open(dir: string): Store {
    return Store.openFile(join(dir, STORE_FILE));
  }

  /** Opens a store file by its path (a backup being inspected or restored). */
  static openFile(path: string, readOnly = false): Store {
    const db = open({ path, encoding: 'msgpack', compression: false, cache: false, readOnly });
    return new Store(db, path);
  }

  /** A scratch copy for `vault check`'s write probe: nothing in it needs to reach the disk. */
  static openScratch(path: string): Store {
    const db = open({ path, encoding: 'msgpack', compression: false, cache: false, noSync: true });
    return new Store(db, path);
  }

  /**
   * A consistent copy of the store at `path` (a new file), compacted, while
   * writers go on: LMDB's own copy (mdb_env_copy2 with MDB_CP_COMPACT) reads
   * one snapshot, so the copy never holds half a transaction.
   */
  async backup(path: string): Promise<void> {
    await this.db.backup(path, true);
  }

  /**
   * A consistent copy of the store at `path`, page for page as they are (not
   * compacted, free pages and all): what `vault check`'s write probe writes into.
   */
  async copyPages(path: string): Promise<void> {
    await this.db.backup(path, false);
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * allocates and frees pages (a record of a few KiB, put then removed), so a
   * damaged free-page list shows on the copy, not in the host.
   */
  scratchWrite(i: number): void {
    this.db.transactionSync(() => {
      quiet(this.db.put(`scratch/${i}`, Buffer.alloc(8192, i)));
      if (i > 0) quiet(this.db.remove(`scratch/${i - 1}`));
    });
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * writes into every leaf page, as the host's writes would (a key inserted
   * just after each key, then removed; each record put back as it was). A
   * damaged page that reads survive can still crash an insert into it, and
   * a host appends an audit record with nearly every request.
   */
  probeWrites(): void {
    const keys = [...this.db.getKeys({})].filter((k): k is string => typeof k === 'string');
    for (let at = 0; at < keys.length; at += PROBE_CHUNK)
      this.#probeKeys(keys.slice(at, at + PROBE_CHUNK));
  }

  #probeKeys(keys: readonly string[]): void {
    this.db.transactionSync(() => {
      for (const k of keys) {
        quiet(this.db.put(`${k}\u0000`, 0));
        quiet(this.db.remove(`${k}\u0000`));
        let value: unknown;
        try {
          value = this.db.get(k);
        } catch {
          continue;
        }
        if (value !== undefined) quiet(this.db.put(k, value));
      }
    });
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * takes a page for each page the file has (a value of one overflow page
   * each), so every page the free-page list names is handed out and written
   * once: a damaged list (a page past the end, a page in use) fails or
   * crashes here instead of in the host, whose small writes reach each part
   * of the list only by chance. Then they are freed again.
   */
  drainFreePages(): void {
    // The pages not in either tree are the free ones: take that many and a margin
    // (a clean, compact store drains in a few pages; a file never needs more than its size).
    const st = this.db.getStats() as {
      lastPageNumber: number;
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
      free: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    };
    const used = (t: {
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
    }) => t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages;
    const free = st.lastPageNumber + 1 - 2 - used(st) - used(st.free);
    const pages = Math.min(Math.max(free, 0) + 64, Math.ceil(statSync(this.path).size / 4096) + 8);
    // Over half a page: a value of its own overflow page, taken one page at a time.
    const value = Buffer.alloc(3000, 0xa5);
    // Taken in one transaction, so every page of the list is handed out (pages
    // freed meanwhile are not); freed again in host-sized ones (see PROBE_CHUNK).
    this.db.transactionSync(() => {
      for (let i = 0; i < pages; i++) quiet(this.db.put(`scratch/drain/${i}`, value));
    });
    for (let at = 0; at < pages; at += PROBE_CHUNK) {
      this.db.transactionSync(() => {
        for (let i = at; i < Math.min(pages, at + PROBE_CHUNK); i++)
          quiet(this.db.remove(`scratch/drain/${i}`));
      });
    }
  }

  /** How many bytes LMDB's newer meta page says the store uses (its last page's end). */
  claimedBytes(): number {
    const st = this.db.getStats() as { lastPageNumber: number; pageSize: number };
    return (st.lastPageNumber + 1) * st.pageSize;
  }

  /** The size of the store file in bytes. */
  bytes(): number {
    return statSync(this.path).size;
  }

  /**
   * Reads on lmdb-js's shared read transaction; no transaction of its own is
   * begun. That is one snapshot only while `fn` runs synchronously: lmdb-js
   * renews the shared transaction after a write this process commits (at
   * once for `write`, a microtask or callback later for the others) and on a
   * timer (setTimeout 0), none of which can run inside synchronous code that
   * writes nothing. So `fn` must neither await nor write (no caller does).
   */
  read<T>(fn: (tx: Tx) => T): T {
    return fn(new Tx(this.db));
  }

  /**
   * One synchronous write transaction, flushed to disk before it returns.
   * Throwing inside `fn` aborts it: nothing is written.
   */
  write<T>(fn: (tx: Tx) => T): T {
    try {
      return this.db.transactionSync(() => fn(new Tx(this.db)));
    } catch (err) {
      throw commitFailure(err) ?? err;
    }
  }

  /**
   * A write transaction grouped with the others of this moment, resolved only
   * once it is flushed to disk. Two ways, chosen per turn of the event loop:
   *
   * - Alone (the only write asked in this turn, none in flight): one
   *   `transactionSync` on the main thread, flushed before it returns. No
   *   thread hand-offs: lmdb-js's batched path goes main -> write thread ->
   *   main (the callback runs there) -> write thread (commit) -> main
   *   (committed) -> main (flushed), each a wake-up of another thread, which
   *   is most of a lone write's latency on a loaded machine (issue 28).
   * - Otherwise, lmdb-js's batched asynchronous transactions (each a child
   *   transaction of its batch, so one that throws is rolled back alone),
   *   flushed off the event loop (overlappingSync) beside the next batch's
   *   work, and gathering the writes that come meanwhile: under load, fewer
   *   flushes and no loop blocked on the disk. Measured against one
   *   transactionSync per turn for every write (bench/commit.ts, and the
   *   host under bench/proxy.ts): that spent less CPU over all threads per
   *   write but filled fewer requests per second, since its fdatasync stops
   *   the loop and its groups end with the turn.
   *
   * Once a batched write is in flight, later writes join the batching until
   * every one of them has flushed, so under steady load the loop is not
   * blocked on the disk; a lone write blocks it only while nothing else waits.
   */
  writeDurable<T>(fn: (tx: Tx) => T): Promise<T> {
    if (this.#batched > 0) return this.#writeBatched(fn);
    return new Promise<T>((resolve, reject) => {
      this.#turn.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.#turn.length === 1) setImmediate(() => this.#endTurn());
    });
  }

  /** Writes asked in this turn of the event loop, while none was batched. */
  #turn: Queued[] = [];
  /** Batched writes handed to lmdb-js and not yet flushed (or failed). */
  #batched = 0;

  #endTurn(): void {
    const turn = this.#turn;
    this.#turn = [];
    const [lone] = turn;
    if (turn.length === 1 && lone !== undefined && this.#batched === 0) {
      let out: unknown;
      try {
        out = this.write(lone.fn);
      } catch (err) {
        lone.reject(err);
        return;
      }
      lone.resolve(out);
      return;
    }
    for (const q of turn) this.#writeBatched(q.fn).then(q.resolve, q.reject);
  }

  async #writeBatched<T>(fn: (tx: Tx) => T): Promise<T> {
    const db = this.db as unknown as {
      transactionAsync(action: () => T, asChild: boolean): Promise<T>;
    };
    this.#batched++;
    try {
      const committed = db.transactionAsync(() => fn(new Tx(this.db)), true);
      // lmdb-js's `flushed` is the flush of the batch being queued when its
      // `then` is called. Asked now, that is the batch this transaction just
      // joined; asked once the commit resolves, it is the batch the next
      // requests queued meanwhile, one whole commit later. (lmdb-js 3.5 marks
      // a transaction committed only once mdb_txn_commit, its overlapping
      // sync included, has returned, so both settle in the same callback;
      // the flush is awaited so the rule does not rest on that.) A failed
      // commit never flushes: this promise then stays pending, unawaited.
      const flushed = new Promise<void>((resolve) => {
        void this.db.flushed.then(() => resolve());
      });
      const out = await committed;
      await flushed;
      return out;
    } catch (err) {
      throw commitFailure(err, await commitCause(err)) ?? err;
    } finally {
      this.#batched--;
    }
  }

  onForeignCommit(): void {
    // One host per LMDB store: no other commits to hear of.
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
