/**
 * What every host operation receives: the vault directory, its store (opened
 * once the vault exists) and the clock. Injected, so tests can drive time.
 */
import { EventEmitter } from 'node:events';
import { statfsSync } from 'node:fs';
import { VaultError } from '../core/errors.js';
import { Store, type Tx, type VaultHeader } from '../store/store.js';
import { CallerCache } from './caller-cache.js';

/**
 * Writes stop while the file system has less than this free. lmdb-js aborts
 * the whole process when a commit meets ENOSPC (heap corruption in its native
 * write path; lmdb-js issue 40), so the host refuses cleanly before that.
 */
export const MIN_FREE_BYTES = 1024 * 1024;
/** What one audit record may take in a transaction, at most: a page of its own. */
export const RECORD_BYTES = 4096;

export class HostContext {
  private opened: Store | null = null;
  /** Emits 'commit' after every write transaction this host commits (for audit --follow). */
  readonly events = new EventEmitter();
  /** Authenticated callers' keys between requests (caller-cache.ts). */
  readonly callers: CallerCache;

  constructor(
    readonly dir: string,
    readonly now: () => number = Date.now,
  ) {
    this.callers = new CallerCache(now);
  }

  /** The store, opened on first use; VLT-3001 while no vault exists (and nothing is created). */
  store(): Store {
    if (this.opened === null) {
      if (!Store.exists(this.dir)) throw new VaultError('VLT-3001');
      try {
        this.opened = Store.open(this.dir);
      } catch (err) {
        // A store that cannot be opened for writing cannot take an audit record: refuse.
        throw new VaultError('VLT-3004', undefined, { cause: err });
      }
    }
    return this.opened;
  }

  /** Opens (creating) the store file: `vault create` only. */
  createStore(): Store {
    this.opened ??= Store.open(this.dir);
    return this.opened;
  }

  hasVault(): boolean {
    return Store.exists(this.dir) && this.store().read((tx) => tx.header()) !== null;
  }

  header(tx: Tx): VaultHeader {
    const h = tx.header();
    if (h === null) throw new VaultError('VLT-3001');
    return h;
  }

  /**
   * A write transaction whose failure to commit refuses the request: every
   * write carries an audit record, so a failed commit is VLT-3004 (fail closed).
   * `writes` is what the transaction may add at most (a page per record): the
   * reserve must hold after a large transaction too, not only before a small one.
   */
  commit<T>(fn: (tx: Tx) => T, writes = 0): T {
    const store = this.store();
    this.#roomLeft(writes);
    try {
      const out = store.write(fn);
      this.events.emit('commit');
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw err;
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  /**
   * `commit`, grouped: the transactions of every request that asks while a
   * commit is under way are committed as one (lmdb-js batches them, each a
   * child transaction, so one that throws is rolled back alone), with one
   * durable flush for all of them, and the flush runs off the event loop
   * beside the next group's work. Each promise settles only once its commit
   * is on disk, so whatever a transaction records (an audit record) is
   * durable before its caller goes on (releases a value). They run in the
   * order asked, each seeing the writes of those before it.
   */
  async commitGrouped<T>(fn: (tx: Tx) => T, writes = 0): Promise<T> {
    const store = this.store();
    this.#roomLeft(writes);
    try {
      const out = await store.writeDurable(fn);
      this.events.emit('commit');
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw err;
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  /**
   * @throws VaultError VLT-3004 when the file system is (nearly) full: the
   * reserve must still hold after a transaction that adds `writes` bytes.
   */
  #roomLeft(writes = 0): void {
    const fs = statfsSync(this.dir);
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES + writes) {
      throw new VaultError(
        'VLT-3004',
        'Audit record could not be written (disk full); access refused.',
      );
    }
  }

  async close(): Promise<void> {
    this.callers.clear();
    await this.opened?.close();
    this.opened = null;
  }
}
