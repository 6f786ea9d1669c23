/**
 * What every host operation receives: the vault directory, its store (opened
 * once the vault exists) and the clock. Injected, so tests can drive time.
 */
import { EventEmitter } from 'node:events';
import { statfsSync } from 'node:fs';
import { VaultError } from '../core/errors.js';
import { Store, type Tx, type VaultHeader } from '../store/store.js';

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

  constructor(
    readonly dir: string,
    readonly now: () => number = Date.now,
  ) {}

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
    const fs = statfsSync(this.dir);
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES + writes) {
      throw new VaultError(
        'VLT-3004',
        'Audit record could not be written (disk full); access refused.',
      );
    }
    try {
      const out = store.write(fn);
      this.events.emit('commit');
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw err;
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.opened?.close();
    this.opened = null;
  }
}
