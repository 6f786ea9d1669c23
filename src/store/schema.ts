/**
 * The vault's schema, whichever engine holds it: the records a store keeps
 * and the keys they are kept under. It holds ciphertext and metadata only:
 * entry names and values are sealed before they arrive here, names are
 * keyed hashes. Transactions over these records are tx.ts.
 */
import { hash } from 'node:crypto';
import { canon } from '../core/canon.js';
import type { Limits, RateState } from '../core/policy.js';
import type { AuditFacts } from '../core/audit.js';
import type { ChallengePurpose } from '../core/webauthn.js';

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
  /** The state key (store/seal.ts), wrapped by the root key; absent until the vault is sealed. */
  readonly stateKey?: Buffer;
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

/**
 * What an agent's record and a session's have alike (host/agent/token-holder.ts):
 * a token's verifier, a key pair whose secret key only the token unwraps, and
 * grants sealed to its public key.
 */
export interface TokenHolder extends Grants {
  /** KDF output of the token secret; compared in constant time. */
  readonly verifier: Buffer;
  readonly publicKey: Buffer;
  /** The box secret key, wrapped by a key derived from the token. */
  readonly secretKey: Buffer;
  /** The vault's state key (store/seal.ts), wrapped by the same token key: how a host learns it. */
  readonly stateKey?: Buffer;
  /** Schema 1 only: tier name -> tier key sealed to the holder (read by the migration). */
  readonly tierKeys?: Readonly<Record<string, Buffer>>;
  readonly created: number;
  readonly revoked: number | null;
}

export interface AgentRecord extends TokenHolder {
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
  /**
   * Request caveats (core/caveats.ts), by entry id: the rules a proxy request
   * must match for the host to fill that entry for this agent (and its `run`
   * sessions). Absent for an entry: no caveats. Under the owner's MAC.
   */
  readonly caveats?: Readonly<Record<string, readonly string[]>>;
}

/** An agent record as stored: its rate state in its own record, or (older vaults) here. */
export type StoredAgent = Omit<AgentRecord, 'rate'> & { readonly rate?: RateState };

/**
 * A session token `run` minted for an agent: the same identity, limits and rate
 * state (those stay on the AgentRecord), a scope equal to or narrower than the
 * agent's, its own verifier and its own key pair, so neither the agent's token
 * nor the store alone opens it. Revoked when the supervised process exits,
 * refused after `expires` in any case.
 */
export interface SessionRecord extends TokenHolder {
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
  readonly expires: number;
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

export interface AuditRecord extends AuditFacts {
  readonly entryId: string | null;
  /** Entry name and field, sealed to the owner's audit key; null when none. */
  readonly sealed: Buffer | null;
  /**
   * The audit epoch's public key when `sealed` is under that epoch's key;
   * absent when `sealed` is a box sealed to the owner's audit key itself.
   */
  readonly epoch?: Buffer;
  readonly prev: Buffer;
  readonly hash: Buffer;
  /** The sealed state's version its transaction wrote (store/seal.ts); covered by the hash. */
  readonly state?: number;
  /** Keyed by the hosts under the state key (not covered by the hash, which it MACs). */
  readonly mac?: Buffer;
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

export const K = {
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
export const SUM_PREFIX = 'sum/';
/** Present once every record has its checksum (a vault from before them gets them on first open). */
export const SUMS_MARKER = 'sums';

/** The checksum of a record's value (one-shot: a Hash object per record cost as much as the hashing). */
export function recordSum(value: unknown): Buffer {
  return hash('sha256', canon(value), 'buffer').subarray(0, 16);
}

/** Whether a store key carries a checksum of its own. */
export function summed(key: string): boolean {
  // The sealed state (seal.ts) is MACed whole: no checksum of its own.
  return !key.startsWith('audit/') && !key.startsWith(SUM_PREFIX) && key !== 'state';
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
