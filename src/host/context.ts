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

export class HostContext {
  private opened: Store | null = null;
  /** Emits 'commit' after every write transaction this host commits (for audit --follow). */
  readonly events = new EventEmitter();
  /** Authenticated callers' keys between requests (caller-cache.ts). */
  readonly callers: CallerCache;
  /** Write transactions waiting for the next group commit. */
  #queued: { fn: (tx: Tx) => unknown; done: (err: unknown, out?: unknown) => void }[] = [];

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
   */
  commit<T>(fn: (tx: Tx) => T): T {
    const store = this.store();
    const fs = statfsSync(this.dir);
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES) {
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

  /**
   * `commit`, grouped: the transactions of every request that asks in the
   * same turn of the event loop are committed as one, with one durable flush
   * for all of them (the flush is most of a commit's cost). Each promise
   * settles only once that commit is on disk, so whatever a transaction
   * records (an audit record) is durable before its caller goes on (releases
   * a value). They run in the order asked, each seeing the writes of those
   * before it. If one throws, the group is rolled back and each runs again
   * in a commit of its own, so one request's failure is never another's.
   */
  commitGrouped<T>(fn: (tx: Tx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({
        fn,
        done: (err, out) => (err === null ? resolve(out as T) : reject(err)),
      });
      if (this.#queued.length === 1) setImmediate(() => this.#commitQueued());
    });
  }

  #commitQueued(): void {
    const group = this.#queued;
    this.#queued = [];
    if (group.length > 1) {
      let outs: unknown[] | null = null;
      try {
        outs = this.commit((tx) => group.map((g) => g.fn(tx)));
      } catch {
        outs = null;
      }
      if (outs !== null) {
        group.forEach((g, i) => g.done(null, outs[i]));
        return;
      }
    }
    for (const g of group) {
      let out: unknown;
      try {
        out = this.commit(g.fn);
      } catch (err) {
        g.done(err ?? new Error('commit failed'));
        continue;
      }
      g.done(null, out);
    }
  }

  async close(): Promise<void> {
    this.callers.clear();
    await this.opened?.close();
    this.opened = null;
  }
}
