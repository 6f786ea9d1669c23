/**
 * A store as the host uses it, whichever engine holds the vault (open.ts
 * chooses): transactions (tx.ts) that are durable before they return, and
 * what only one engine can do, offered as optional capabilities. A caller
 * asks for a capability (`store.room?.check(...)`, `store.settle?.(at)`),
 * never for the engine by name: an engine without it has no such work.
 */
import type { VaultError } from '../core/errors.js';
import type { Tx } from './tx.js';

/**
 * What one audit record may take in a transaction, at most: a page of its
 * own. Callers state what a transaction may add in these (StoreRoom.check).
 */
export const RECORD_BYTES = 4096;

/**
 * The file system's room for a store the host grows on its own disk (LMDB,
 * with its reserve: lmdb/room.ts). A PostgreSQL database watches its own
 * disk, and refuses a commit it has no room for (VLT-3040).
 */
export interface StoreRoom {
  /**
   * Whether a transaction that adds `writes` bytes may run: `own`, an owner's
   * write, asks the file system afresh; a grouped one may use the answer the
   * others of its group had.
   * @throws VaultError VLT-3004 (disk full) or VLT-3013 (an owner's write larger than the room left)
   */
  check(writes: number, own: boolean): void;
  /** A grouped commit settled: the next one asks the file system afresh. */
  settled(): void;
  /** A refused commit as the owner can act on it: an EIO on a full disk is said as a full disk. */
  explain(err: VaultError): VaultError;
}

/** The store as the host uses it, on either engine. */
export interface VaultStore {
  /** Where it is, for messages: the LMDB file, or the database URL without secrets. */
  readonly path: string;
  /** One consistent view, current as of the call (pg/pg.ts: checked against the database's version). */
  read<T>(fn: (tx: Tx) => T): T;
  /**
   * `read`, where the engine may answer from a copy it has no reason to think
   * stale (PostgreSQL: LISTEN has announced no other host's commit since it
   * was brought up to date, pg/pg.ts `current`), with no round trip. Only for
   * a check that a write transaction makes again before anything is released
   * (the caller cache's check of a kept token). Absent: `read`.
   */
  readCached?<T>(fn: (tx: Tx) => T): T;
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
  /**
   * Calls `stuck` once the store can no longer be used in this process and
   * no reopening in it will end (LMDB: lmdb-js's write lock held for ever
   * after a failed commit, lmdb/recover.ts), naming why; the process must
   * then end without closing it. Absent where that cannot happen.
   */
  onStuck?(stuck: (why: string) => void): void;
  close(): Promise<void>;
  /**
   * Gives the store the state key (seal.ts): every transaction from now on
   * keeps the sealed state and keys the audit records it appends.
   */
  sealWith(key: Buffer): void;
  /** Where the host must keep room on the disk itself (LMDB); absent where the engine does. */
  readonly room?: StoreRoom;
  /**
   * Records a clean close at `at`, where the engine gains by it (LMDB: both
   * meta pages then point at the same data, Tx.settle); absent elsewhere.
   * @throws what the write meets (a read-only or full disk): the store is closed as it is.
   */
  settle?(at: number): void;
}
