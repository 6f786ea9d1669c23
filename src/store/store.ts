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
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import type { Limits, RateState } from '../core/policy.js';
import type { AuditAction } from '../core/audit.js';
import type { ChallengePurpose } from '../core/webauthn.js';
import { STORE_FILE } from '../core/protocol.js';

/**
 * 2: per-entry grants (an agent or session holds the data keys of its scope,
 * sealed to its key pair, and a name index of its scope only), data-key
 * generations, owner-MACed agent and session records. 1 is migrated on the
 * owner's next unlock (src/host/migrate.ts).
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
  ownerFailures: 'owner-failures',
  auditAnchor: 'audit-anchor',
  rotatePending: 'rotate-pending',
  entry: (id: string) => `entry/${id}`,
  field: (entryId: string, fieldKey: string) => `field/${entryId}/${fieldKey}`,
  fieldPrefix: (entryId: string) => `field/${entryId}/`,
  name: (hash: string) => `name/${hash}`,
  agent: (id: string) => `agent/${id}`,
  agentName: (name: string) => `agent-name/${name}`,
  session: (id: string) => `session/${id}`,
  key: (id: string) => `key/${id}`,
  challenge: (id: string) => `challenge/${id}`,
  audit: (seq: number) => `audit/${String(seq).padStart(12, '0')}`,
};

/** Everything one transaction can read and write. */
export class Tx {
  constructor(private readonly db: RootDatabase) {}

  header(): VaultHeader | null {
    return (this.db.get(K.header) as VaultHeader | undefined) ?? null;
  }
  putHeader(h: VaultHeader): void {
    void this.db.put(K.header, h);
  }

  entry(id: string): EntryRecord | null {
    return (this.db.get(K.entry(id)) as EntryRecord | undefined) ?? null;
  }
  putEntry(e: EntryRecord): void {
    void this.db.put(K.entry(e.id), e);
  }
  entries(): EntryRecord[] {
    return [...this.db.getRange({ start: 'entry/', end: 'entry0' })].map(
      (r) => r.value as EntryRecord,
    );
  }
  removeEntry(id: string): void {
    void this.db.remove(K.entry(id));
    for (const { key } of this.db.getRange({ start: K.fieldPrefix(id), end: `field/${id}0` })) {
      void this.db.remove(key);
    }
  }

  field(entryId: string, fieldKey: string): FieldRecord | null {
    return (this.db.get(K.field(entryId, fieldKey)) as FieldRecord | undefined) ?? null;
  }
  putField(entryId: string, fieldKey: string, f: FieldRecord): void {
    void this.db.put(K.field(entryId, fieldKey), f);
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
    void this.db.remove(K.field(entryId, fieldKey));
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
    void this.db.put(K.name(hash), entryId);
  }
  removeName(hash: string): void {
    void this.db.remove(K.name(hash));
  }

  agent(id: string): AgentRecord | null {
    return (this.db.get(K.agent(id)) as AgentRecord | undefined) ?? null;
  }
  putAgent(a: AgentRecord): void {
    void this.db.put(K.agent(a.id), a);
  }
  agents(): AgentRecord[] {
    return [...this.db.getRange({ start: 'agent/', end: 'agent0' })].map(
      (r) => r.value as AgentRecord,
    );
  }
  agentIdByName(name: string): string | null {
    return (this.db.get(K.agentName(name)) as string | undefined) ?? null;
  }
  putAgentName(name: string, id: string): void {
    void this.db.put(K.agentName(name), id);
  }
  removeAgentName(name: string): void {
    void this.db.remove(K.agentName(name));
  }

  session(id: string): SessionRecord | null {
    return (this.db.get(K.session(id)) as SessionRecord | undefined) ?? null;
  }
  putSession(r: SessionRecord): void {
    void this.db.put(K.session(r.id), r);
  }
  sessions(): SessionRecord[] {
    return [...this.db.getRange({ start: 'session/', end: 'session0' })].map(
      (r) => r.value as SessionRecord,
    );
  }
  removeSession(id: string): void {
    void this.db.remove(K.session(id));
  }

  keys(): KeyRecord[] {
    return [...this.db.getRange({ start: 'key/', end: 'key0' })].map((r) => r.value as KeyRecord);
  }
  key(id: string): KeyRecord | null {
    return (this.db.get(K.key(id)) as KeyRecord | undefined) ?? null;
  }
  putKey(k: KeyRecord): void {
    void this.db.put(K.key(k.id), k);
  }
  removeKey(id: string): void {
    void this.db.remove(K.key(id));
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
    void this.db.put(K.challenge(c.id), c);
  }
  removeChallenge(id: string): void {
    void this.db.remove(K.challenge(id));
  }

  ownerFailures(): OwnerFailures {
    return (this.db.get(K.ownerFailures) as OwnerFailures | undefined) ?? { count: 0, last: 0 };
  }
  putOwnerFailures(f: OwnerFailures): void {
    void this.db.put(K.ownerFailures, f);
  }

  /** Entries an ended session held, to rotate at the owner's next command (the host has no owner key). */
  pendingRotation(): string[] {
    return (this.db.get(K.rotatePending) as string[] | undefined) ?? [];
  }
  putPendingRotation(ids: readonly string[]): void {
    if (ids.length === 0) void this.db.remove(K.rotatePending);
    else void this.db.put(K.rotatePending, [...ids]);
  }

  auditAnchor(): AuditAnchor | null {
    return (this.db.get(K.auditAnchor) as AuditAnchor | undefined) ?? null;
  }
  putAuditAnchor(a: AuditAnchor): void {
    void this.db.put(K.auditAnchor, a);
  }

  auditHead(): AuditHead | null {
    return (this.db.get(K.auditHead) as AuditHead | undefined) ?? null;
  }
  appendAudit(r: AuditRecord): void {
    void this.db.put(K.audit(r.seq), r);
    void this.db.put(K.auditHead, { seq: r.seq, hash: r.hash });
  }
  /** Rewrites one record in place: the schema migration's re-chaining only. */
  putAuditRecord(r: AuditRecord): void {
    void this.db.put(K.audit(r.seq), r);
  }
  putAuditHeadOnly(h: AuditHead): void {
    void this.db.put(K.auditHead, h);
  }
  audit(fromSeq = 1): AuditRecord[] {
    return [...this.db.getRange({ start: K.audit(fromSeq), end: 'audit0' })].map(
      (r) => r.value as AuditRecord,
    );
  }
}

export class Store {
  private constructor(
    private readonly db: RootDatabase,
    readonly path: string,
  ) {}

  /** Whether a store file exists in `dir`; checked before opening so a read never creates one. */
  static exists(dir: string): boolean {
    return existsSync(join(dir, STORE_FILE));
  }

  static open(dir: string): Store {
    const path = join(dir, STORE_FILE);
    const db = open({ path, encoding: 'msgpack', compression: false, cache: false });
    return new Store(db, path);
  }

  /** A consistent snapshot for reading. */
  read<T>(fn: (tx: Tx) => T): T {
    return fn(new Tx(this.db));
  }

  /**
   * One synchronous write transaction, flushed to disk before it returns.
   * Throwing inside `fn` aborts it: nothing is written.
   */
  write<T>(fn: (tx: Tx) => T): T {
    return this.db.transactionSync(() => fn(new Tx(this.db)));
  }

  /**
   * A write transaction queued with the others of this moment (lmdb-js
   * batches them into one LMDB transaction, each a child transaction of its
   * own, so one that throws is rolled back alone), resolved only once the
   * commit is flushed to disk. The flush runs off the event loop
   * (overlappingSync, lmdb-js's default here), beside the next batch's work,
   * instead of blocking it as `write` does.
   */
  async writeDurable<T>(fn: (tx: Tx) => T): Promise<T> {
    const db = this.db as unknown as {
      transactionAsync(action: () => T, asChild: boolean): Promise<T>;
    };
    const out = await db.transactionAsync(() => fn(new Tx(this.db)), true);
    await this.db.flushed;
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
