/**
 * What every host operation receives: the vault directory, its store (opened
 * once the vault exists) and the clock. Injected, so tests can drive time.
 */
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../core/protocol.js';
import { VaultError, type ErrorCode } from '../core/errors.js';
import type { Tx } from '../store/tx.js';
import type { VaultHeader } from '../store/schema.js';
import type { VaultStore } from '../store/engine.js';
import { storePlace, type StorePlace } from '../store/open.js';
import { configuredStore, recordStore } from '../store/location.js';
import { auditShape, damageCode } from './damage.js';
import { CallerCache } from './agent/caller-cache.js';

/** The vault's state key as this host holds it (store/seal.ts), in its own directory only. */
export const STATE_KEY_FILE = 'state.key';

export class HostContext {
  private opened: VaultStore | null = null;
  /** The state key once an owner command or a token has given it; kept in the directory (0600). */
  private stateKey: Buffer | null = null;
  /** While a restore swaps the store file, no request opens it. */
  private swapping = false;
  /** Set when the store could not be read whole at start (a damaged page): never opened here then. */
  damaged: string | null = null;
  /**
   * Set while the disk fails to read the store at start (EIO: a fault of the
   * disk, not damage): every use refused with it (VLT-3004 naming the fault),
   * and the start-up scan run again (`rescan`) until it reads whole.
   */
  scanFault: VaultError | null = null;
  /** Runs the start-up scan again (the host sets it; at most one at a time, not more than once a second). */
  rescan: () => void = () => {};
  /**
   * Emits 'commit' after every write transaction this host commits (for audit
   * --follow), 'close' before it closes, 'stuck' (why) when the store can no
   * longer be used or closed in this process (VaultStore.onStuck).
   */
  readonly events = new EventEmitter();
  /** Authenticated callers' keys between requests (caller-cache.ts). */
  readonly callers: CallerCache;
  constructor(
    readonly dir: string,
    readonly now: () => number = Date.now,
    /** A PostgreSQL store the host was started with (VAULT_STORE_URL); else the directory's config says. */
    private readonly storeUrl: string | null = null,
  ) {
    this.callers = new CallerCache(now);
  }

  /** The PostgreSQL store's URL when the vault is in one (team mode), else null (LMDB). */
  pgUrl(): string | null {
    return this.storeUrl ?? configuredStore(this.dir);
  }

  /** Where the vault's store is, and what its engine offers (src/store/open.ts). */
  place(): StorePlace {
    return storePlace(this.dir, this.pgUrl());
  }

  /** Whether a store is there to open: an LMDB file, or a PostgreSQL store named. */
  storeExists(): boolean {
    return this.place().exists();
  }

  /**
   * Puts the vault in the PostgreSQL store at `url` from now on (`vault create
   * --store`, `vault migrate`), or back in the directory's LMDB file (null).
   */
  async useStore(url: string | null): Promise<void> {
    await this.close();
    recordStore(this.dir, url);
  }

  /** The store, opened on first use; VLT-3001 while no vault exists (and nothing is created). */
  store(): VaultStore {
    if (this.swapping) {
      throw new VaultError('VLT-3005', 'The vault is being restored; try again in a moment.');
    }
    if (this.opened === null) {
      const place = this.place();
      if (!place.exists()) throw new VaultError('VLT-3001');
      if (this.damaged !== null) {
        throw new VaultError(
          'VLT-3034',
          'A page of the store cannot be read (run `vault-cli vault check`; restore a backup).',
        );
      }
      if (this.scanFault !== null) {
        this.rescan();
        throw this.scanFault;
      }
      try {
        this.opened = place.open();
      } catch (err) {
        // A store that cannot be opened for writing cannot take an audit record:
        // refuse (naming the fault when the store says it: a disk that fails reads).
        if (err instanceof VaultError && err.code === 'VLT-3004') throw err;
        throw new VaultError('VLT-3004', undefined, { cause: err });
      }
      this.opened.onForeignCommit(() => this.events.emit('commit'));
      this.opened.onStuck?.((why) => this.events.emit('stuck', why));
      const key = this.heldStateKey();
      if (key !== null) this.opened.sealWith(key);
    }
    return this.opened;
  }

  /** The state key this host holds (from its directory once an earlier run learned it), or null. */
  heldStateKey(): Buffer | null {
    if (this.stateKey === null) {
      try {
        const raw = readFileSync(join(this.dir, STATE_KEY_FILE));
        if (raw.length === 32) this.stateKey = raw;
      } catch {
        // None yet.
      }
    }
    return this.stateKey;
  }

  /**
   * Takes the vault's state key, from the owner's unlock (`owner`: the root
   * key opened it, so it replaces any other) or a token's own record; false
   * when a token's differs from the one held (one of the two is not the
   * vault's: the caller refuses).
   */
  learnStateKey(key: Buffer, owner = false): boolean {
    const held = this.heldStateKey();
    if (held !== null && (held.equals(key) || !owner)) return held.equals(key);
    this.stateKey = Buffer.from(key);
    try {
      writeFileSync(join(this.dir, STATE_KEY_FILE), key, { mode: 0o600 });
    } catch {
      // Held for this run; learned again from the next owner command or token.
    }
    this.opened?.sealWith(key);
    return true;
  }

  /**
   * The damage code for an error no path expected: a store error (VLT-3034),
   * or, when a record of the open store fails its checksum or does not decode,
   * that damage (a malformed record makes code fail in ways it cannot name);
   * null when the store is sound and the error is a bug (VLT-3007).
   */
  explain(err: unknown): ErrorCode | null {
    const direct = damageCode(err);
    if (direct !== null || this.opened === null) return direct;
    try {
      const records = this.opened.read((tx) => tx.rawRecords());
      if (records.some((r) => r.error !== undefined)) return 'VLT-3034';
      const audit = records.filter((r) => r.key.startsWith('audit/')).map((r) => r.value);
      if (!audit.every(auditShape)) return 'VLT-3033';
      if (records.some((r) => r.sumOk === false)) {
        return records.some((r) => r.key === 'header' && r.sumOk === false)
          ? 'VLT-3030'
          : 'VLT-3035';
      }
      return null;
    } catch (again) {
      return damageCode(again) ?? 'VLT-3034';
    }
  }

  get storePath(): string {
    return join(this.dir, STORE_FILE);
  }

  /** Opens (creating) the store file, or the PostgreSQL store's tables: `vault create` only. */
  createStore(): VaultStore {
    const made = this.place().create(this.opened);
    if (made !== this.opened) {
      made.onForeignCommit(() => this.events.emit('commit'));
      made.onStuck?.((why) => this.events.emit('stuck', why));
    }
    this.opened = made;
    return made;
  }

  hasVault(): boolean {
    if (!this.storeExists()) return false;
    try {
      return this.store().read((tx) => tx.header()) !== null;
    } catch (err) {
      // A database with no store yet holds no vault; one that does not answer
      // is taken to hold it (its requests refuse with VLT-3040).
      if (err instanceof VaultError && err.code === 'VLT-3041') return false;
      if (err instanceof VaultError && err.code === 'VLT-3040') return true;
      throw err;
    }
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
    store.room?.check(writes, true);
    try {
      const out = store.write((tx) => {
        tx.requireStateKey();
        return fn(tx);
      });
      this.events.emit('commit');
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw store.room?.explain(err) ?? err;
      // A record that does not decode, or a damaged store, is damage, not a failed audit write.
      const damage = this.explain(err);
      if (damage !== null) throw new VaultError(damage, undefined, { cause: err });
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  /**
   * Closes the store, runs `swap` (which renames store files; synchronous, so
   * no request runs in between), and lets the next use open whatever is then
   * in place. For `vault restore`.
   */
  async swapStore(swap: () => void): Promise<void> {
    this.swapping = true;
    try {
      await this.close();
      swap();
    } finally {
      this.swapping = false;
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
    store.room?.check(writes, false);
    try {
      const out = await store.writeDurable((tx) => {
        tx.requireStateKey();
        return fn(tx);
      });
      store.room?.settled();
      this.events.emit('commit');
      return out;
    } catch (err) {
      store.room?.settled();
      if (err instanceof VaultError) throw store.room?.explain(err) ?? err;
      // As in commit(): damage the store shows is named, not called a failed audit write.
      const damage = this.explain(err);
      if (damage !== null) throw new VaultError(damage, undefined, { cause: err });
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  async close(): Promise<void> {
    this.callers.clear();
    // Listeners write what they still hold (refusal-audit.ts counts) while the store is open.
    this.events.emit('close');
    if (this.opened !== null && this.damaged === null) {
      try {
        this.opened.settle?.(this.now());
      } catch {
        // A store that cannot be written now (read-only, full): closed as it is.
      }
    }
    await this.opened?.close();
    this.opened = null;
  }
}
