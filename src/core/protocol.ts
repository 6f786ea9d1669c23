/**
 * The wire contract between the thin client and the vault host: HTTP+JSON over
 * the host's Unix socket, `POST /v1/<op>` (the proxy's agent operations go
 * as frames on one upgraded connection instead: frames.ts). Secret values travel base64-encoded
 * so any bytes survive; a reply is `{ ok: true, result }` or
 * `{ ok: false, code, message }` and never echoes a secret.
 */
import type { Limits } from './policy.js';
import type { AuditView } from './audit.js';
import type { Out, Wire } from './decode.js';
import type { Requests } from './requests.js';
import type {
  CreationOptionsJSON,
  KeySummary,
  RequestOptionsJSON,
  UnlockSubject,
} from './webauthn.js';

export const PROTOCOL_VERSION = 'v1';
export const SOCKET_NAME = 'host.sock';
/** The store file in the vault directory; a client checks for it before starting a host. */
export const STORE_FILE = 'vault.mdb';
/** In the vault directory of a vault kept in PostgreSQL (team mode): which database (src/store/location.ts). */
export const STORE_CONFIG = 'store.json';
/**
 * Set on a host that a command started in the background: that command's pid.
 * Several commands that find no host each start one; the losers exit when they
 * see the winner, and one that finishes booting after its command was served
 * (even after `daemon stop`) sees the pid gone and exits instead of serving.
 */
export const SPAWNED_BY_ENV = 'VAULT_HOST_SPAWNED_BY';
/**
 * The host's lock file in the vault directory: the host that holds an
 * exclusive flock on it is the vault's one host, and the only one that binds
 * or removes the socket. A client checks that its peer holds it.
 */
export const LOCK_NAME = 'host.lock';

/**
 * Request fields that carry the owner's secret: the client checks the host
 * before it sends one, and the host lifts them out of the raw bytes as
 * wipeable Buffers before parsing (src/host/owner/secrets.ts).
 */
export const OWNER_SECRET_FIELDS = ['passphrase', 'newPassphrase', 'recoveryKey'] as const;
export type OwnerSecretField = (typeof OWNER_SECRET_FIELDS)[number];

export interface EntrySummary {
  readonly name: string;
  readonly tier: string;
  readonly fields: readonly {
    readonly name: string;
    readonly version: number;
    readonly updated: number;
    /** When a transcript sweep found this value (`vault-cli sweep`); absent once set anew. */
    readonly exposed?: number;
  }[];
  readonly hosts: readonly string[];
  readonly created: number;
}

export interface AgentSummary {
  /** The record's id: what `agent revoke --id` takes when the name no longer finds it. */
  readonly id: string;
  readonly name: string;
  readonly kind: 'ai' | 'script';
  /** `altered`: the record's owner MAC does not hold (changed outside vault-cli; VLT-3021 on any change). */
  readonly state: 'active' | 'violation' | 'locked' | 'revoked' | 'altered';
  readonly scope: readonly string[];
  readonly limits: Limits;
  readonly usage: { readonly minute: number; readonly hour: number };
  /** What the values-a-minute limit would release now (core/policy.ts). */
  readonly valuesLeft: number;
  readonly violations: readonly number[];
  readonly lockedAt: number | null;
  readonly created: number;
  /** Request caveats (`agent caveats`), by entry name; absent or empty: none. */
  readonly caveats?: readonly { readonly entry: string; readonly rules: readonly string[] }[];
}

export interface HostStatus {
  readonly pid: number;
  readonly vaultDir: string;
  readonly startedAt: number;
  readonly vault: boolean;
  /** `hardened`: the host runs as its own user with its socket in a directory of its own. */
  readonly mode: 'same-user' | 'hardened';
}

/** A value handed to the owner's `sweep` process, to look for in transcripts (base64). */
export interface SweepValue {
  readonly entry: string;
  readonly field: string;
  readonly value: string;
  /** Released to an agent in the window asked (else only stored). */
  readonly released: boolean;
}

/** What a backup holds. */
export interface BackupSummary {
  readonly path: string;
  readonly bytes: number;
  readonly entries: number;
  readonly agents: number;
  readonly auditRecords: number;
  /** The last audit record: its sequence number and hash (hex). */
  readonly head: { readonly seq: number; readonly hash: string } | null;
}

/** One kind of damage `vault check` found, and the record it affects. */
export interface CheckProblem {
  readonly code: string;
  /** The record: `header`, `entry <id>`, `field <id>/<field>`, `agent <name>`, `audit <seq>`, ... */
  readonly where: string;
  readonly message: string;
}

export interface CheckReport {
  readonly records: number;
  readonly entries: number;
  readonly agents: number;
  readonly auditRecords: number;
  readonly problems: readonly CheckProblem[];
}

/** An owner session: when it ends at the latest, and its idle timeout. */
export interface OwnerSessionView {
  readonly expires: number;
  readonly idleMs: number;
}

/** What a restore would roll back against the current vault. */
export interface RestorePreview {
  readonly backup: BackupSummary;
  /** Agents revoked (or absent) now that are live in the backup. */
  readonly revivedAgents: readonly string[];
  /** Agents locked now that are not locked in the backup. */
  readonly liftedLocks: readonly string[];
  /** Entries whose data key was rotated (or value set) since the backup: name when readable, else id. */
  readonly undoneRotations: readonly string[];
  /** Entries that exist now but not in the backup. */
  readonly lostEntries: readonly string[];
  /** Audit records in the current vault that the backup does not hold. */
  readonly lostAuditRecords: number;
  readonly currentAuditRecords: number;
  /** False when there is no current vault, or it is too damaged to compare. */
  readonly currentReadable: boolean;
}

/**
 * Every operation's result. Its request is defined once, in requests.ts, where
 * the host's decoder for it lives; `Ops` joins the two.
 */
export interface Results {
  status: HostStatus;
  /** Stops the host: the owner's passphrase, from any caller (an agent could otherwise stop it and squat its socket). */
  shutdown: Record<string, never>;
  whoami: { agent: string };
  read: { value: string };
  /** Several references at once, all or nothing: render, and the proxy's header fills. */
  resolve: { values: string[] };
  /**
   * A signal counted as a violation of the caller's own limits: `recorded` (a
   * first), `lockdown` (the second: it locked the agent), `locked` (the agent
   * was locked already; nothing was recorded).
   */
  report: { outcome: 'recorded' | 'lockdown' | 'locked' };
  /** An AWS SigV4 signature made in the host: the headers to put over the surrogate's. */
  sign: { authorization: string; date: string; sessionToken: string | null };
  /** authorized_keys lines, in the order named. */
  'ssh.keys': { keys: string[] };
  /** An SSH signature blob, base64; the key never leaves the host. */
  'ssh.sign': { signature: string };
  'vault.create': { recoveryKey: string };
  /** A new root key (and recovery key, returned once); the passphrase stays. */
  'vault.rekey': { recoveryKey: string };
  'vault.passwd': Record<string, never>;
  /** A consistent snapshot of the store, written atomically to `path` (absolute). */
  'vault.backup': BackupSummary;
  /** Reads every record and verifies every seal, MAC, index binding and the audit chain. */
  'vault.check': CheckReport;
  /**
   * Restores a backup: without `confirm`, only the preview (what would be
   * rolled back); with it, the swap, kept aside until verified.
   */
  'vault.restore': { preview: RestorePreview; restored: boolean; keptAside: string | null };
  /** The vault moved to the other engine (`vault migrate`), read back record by record. */
  'vault.migrate': { records: number; from: string; to: string };
  'entry.set': { created: boolean; version: number };
  'entry.rm': Record<string, never>;
  'entry.show': EntrySummary;
  /** The owner's own look at one value (base64), audited as `reveal` before it is sent. */
  'entry.reveal': { value: string; version: number };
  'entry.ls': { entries: EntrySummary[] };
  /** Binds an entry to the hosts the proxy may send it to; an empty list lifts the binding. */
  'entry.hosts': EntrySummary;
  /** Names, as the request gave them: created, set on an existing entry (--overwrite), left as they were. */
  'entry.import': { created: string[]; updated: string[]; skipped: string[] };
  'agent.add': { token: string };
  'agent.ls': { agents: AgentSummary[] };
  'agent.show': AgentSummary;
  'agent.scope': AgentSummary;
  'agent.limits': AgentSummary;
  'agent.lock': AgentSummary;
  'agent.caveats': AgentSummary;
  'agent.group': AgentSummary;
  /** Entries the agent held whose rotation failed after the revocation (it is revoked all the same). */
  'agent.revoke': { unrotated: { entry: string; code: string }[] };
  /**
   * `run`: a session token for an agent, equal or narrower scope, at most 12
   * hours. With `sandbox`, the host also serves the session on a socket of its
   * own that answers only agent operations for this token (`socket`, a path
   * `run` binds into the sandbox); `sandboxed` is recorded in the audit either way.
   */
  'session.start': { token: string; expires: number; socket?: string };
  /**
   * Streams one line, then holds the connection: the session ends when the
   * connection does (`run` died, even by SIGKILL). A host that restarts ends
   * every session, since no hold outlives it.
   */
  'session.hold': Record<string, never>;
  /** Revokes the session token presented; an agent's own token is left alone. */
  'session.end': Record<string, never>;
  /**
   * Streams `{"watching":true}`, then `{"changed":true}` whenever an entry the
   * token may read among those named changes; ends when the token can read nothing more.
   */
  watch: Record<string, never>;
  /**
   * Hardware keys: enrolment runs begin -> the browser's create() -> finish.
   * Once a key is enrolled, begin answers with a `vouch` for an enrolled key's
   * get() first, and key.vouch with the creation options.
   */
  'key.begin':
    | { challengeId: string; options: CreationOptionsJSON }
    | { challengeId: string; vouch: RequestOptionsJSON };
  'key.vouch': { challengeId: string; options: CreationOptionsJSON };
  'key.finish': KeySummary;
  'key.ls': { keys: KeySummary[] };
  'key.rm': Record<string, never>;
  /** Lifting a lockdown: begin -> the browser's get() -> finish. The key is the owner's proof. */
  'unlock.begin':
    | { challengeId: string; options: RequestOptionsJSON; agent: UnlockSubject }
    | { notLocked: true };
  'unlock.finish': { name: string };
  'audit.list': { records: AuditView[] };
  /** The caller's terminal's owner session, if it has one: asked before any prompt, with no passphrase. */
  'owner.session': { session: OwnerSessionView | null };
  /** Opens an owner session for the caller's terminal (src/host/owner/unlock.ts). */
  'owner.unlock': OwnerSessionView & { terminal: string };
  /** Ends the caller's terminal's owner session. */
  'owner.lock': { ended: boolean };
  /** A confirmation's challenge: `what` names the request, as the page shows it. */
  'owner.confirm': { challengeId: string; options: RequestOptionsJSON; what: string };
  /**
   * `sweep`: the values released since `since` (ms) and, with `stored`, every
   * stored value, for the owner's own process to look for in transcripts;
   * audited as one `sweep` record before they leave.
   */
  'sweep.values': {
    values: SweepValue[];
    /** The vault's audit public key (base64): `--backup` seals each file's key to it. */
    backupKey: string;
    /** Whether the host keeps the owner key for this process (`hold`): later requests may omit the passphrase. */
    held: boolean;
  };
  /** Opens a sweep backup's file key (sealed to the audit key), audited; for `sweep --open-backup`. */
  'sweep.unseal': { key: string };
  /** Marks fields a sweep found as exposed, until each is set anew. */
  'sweep.mark': { marked: number; held: boolean };
  /** Streams AuditView records as JSON lines as they are committed; the reply never ends by itself. */
  'audit.follow': Record<string, never>;
  /** Moves the records before `before` (ms) into a sealed archive file at `path`. */
  'audit.archive': { archived: number; firstSeq: number; lastSeq: number; kept: number };
  'audit.verify': {
    records: number;
    brokenAt: number | null;
    /** Records verified in the archive, with --archive. */
    archived?: number;
    /** The first sequence number verified (after archived records). */
    from?: number;
    /** The last record the owner's anchor vouches for (0: none), and when it was made. */
    anchored: number;
    anchoredAt: number | null;
    /** Records after the anchor: chained, but not vouched for. */
    unanchored: number;
    /** Why the anchor does not hold (a rewrite or cut before it), or null. */
    anchorProblem: string | null;
    /** Why the sealed state does not hold (a rollback, an audit record not keyed), or null. */
    sealProblem?: string | null;
  };
}

export type Op = keyof Results;

/**
 * Every operation has exactly one request definition and every definition an
 * operation: checked here (not in requests.ts, which would make the two files
 * import each other).
 */
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const REQUESTS_MATCH_OPS: Exactly<keyof Requests, Op> = true;

/** Every operation, its request (what a client sends) and its result. */
export type Ops = {
  [O in Op]: { req: Wire<Requests[O]>; res: Results[O] };
};

/** An operation's request as the host holds it after decoding. */
export type Decoded<O extends Op> = Out<Requests[O]>;

/**
 * The audit anchor an owner's command left, as its client remembers it (the
 * vault's id, the anchored record's sequence number and hash, hex). Sent back
 * with each owner request, so the host can refuse a log cut back before it.
 */
export interface AnchorRef {
  readonly vault: string;
  readonly seq: number;
  readonly hash: string;
}

export type Reply<O extends Op> =
  | {
      readonly ok: true;
      readonly result: Ops[O]['res'];
      /** An owner command's: the audit head it anchored. */
      readonly anchor?: AnchorRef;
    }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      /** For a request of several references: which ones failed, by index, and why. */
      readonly problems?: readonly { readonly index: number; readonly code: string }[];
    };
