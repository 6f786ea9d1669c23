/**
 * A store as the host uses it, whichever engine holds the vault (open.ts
 * chooses): transactions (tx.ts) that are durable before they return, and
 * what only one engine can do, offered as optional capabilities. A caller
 * asks for a capability (`store.room?.check(...)`, `store.settle?.(at)`),
 * never for the engine by name: an engine without it has no such work.
 */
import type { Tx } from './tx.js';

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
