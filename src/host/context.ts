/**
 * What every host operation receives: the vault directory, its store (opened
 * once the vault exists) and the clock. Injected, so tests can drive time.
 */
import { EventEmitter } from 'node:events';
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../core/protocol.js';
import { VaultError, type ErrorCode } from '../core/errors.js';
import { Store } from '../store/lmdb/store.js';
import type { Tx } from '../store/tx.js';
import type { VaultHeader } from '../store/schema.js';
import type { VaultStore } from '../store/engine.js';
import { PgStore } from '../store/pg/pg.js';
import { configuredStore, recordStore } from '../store/location.js';
import { auditShape, damageCode } from './damage.js';
import { CallerCache } from './agent/caller-cache.js';
import { StoreReserve } from '../store/lmdb/reserve.js';

/**
 * Writes stop while the file system has less than this free. lmdb-js aborts
 * the whole process when a commit meets ENOSPC (heap corruption in its native
 * write path; lmdb-js issue 40), so the host refuses cleanly before that.
 */
export const MIN_FREE_BYTES = 1024 * 1024;
/** What one audit record may take in a transaction, at most: a page of its own. */
export const RECORD_BYTES = 4096;

const MiB = 1024 * 1024;

/**
 * How long the grouped path may go on from one statfs answer (ms), at most:
 * until the next commit settles in any case. The requests of one group then
 * ask the file system once, not each (a syscall per fill under load).
 */
const ROOM_KEPT_MS = 5;

function roomMessage(writes: number, free: number): string {
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  return `This write needs about ${mib(writes)}; the vault's file system has ${mib(Math.max(0, free - MIN_FREE_BYTES))} free beyond the ${mib(MIN_FREE_BYTES)} kept for audit records. Nothing was changed; free some space, or store a smaller value.`;
}

export class HostContext {
  private opened: VaultStore | null = null;
  /** While a restore swaps the store file, no request opens it. */
  private swapping = false;
  /** Set when the store could not be read whole at start (a damaged page): never opened here then. */
  damaged: string | null = null;
  /** Emits 'commit' after every write transaction this host commits (for audit --follow), 'close' before it closes. */
  readonly events = new EventEmitter();
  /** Authenticated callers' keys between requests (caller-cache.ts). */
  readonly callers: CallerCache;
  /**
   * The free bytes statfs last said, less what the grouped transactions
   * checked since may add; forgotten when any commit settles (#roomLeft).
   */
  #room: { free: number; at: number } | null = null;
  /** Disk blocks kept for the LMDB store's growth (store-reserve.ts), from its open on. */
  #reserve: StoreReserve | null = null;

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

  /** Whether a store is there to open: an LMDB file, or a PostgreSQL store named. */
  storeExists(): boolean {
    return this.pgUrl() !== null || Store.exists(this.dir);
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
      const url = this.pgUrl();
      if (url !== null) {
        const pg = PgStore.open(url);
        pg.onForeignCommit(() => this.events.emit('commit'));
        this.opened = pg;
        return pg;
      }
      if (!Store.exists(this.dir)) throw new VaultError('VLT-3001');
      if (this.damaged !== null) {
        throw new VaultError(
          'VLT-3034',
          'A page of the store cannot be read (run `vault-cli vault check`; restore a backup).',
        );
      }
      try {
        this.opened = Store.open(this.dir);
        this.addSums(this.opened);
        this.#reserve = new StoreReserve(this.storePath);
      } catch (err) {
        // A store that cannot be opened for writing cannot take an audit record: refuse.
        throw new VaultError('VLT-3004', undefined, { cause: err });
      }
    }
    return this.opened;
  }

  /** A vault from before record checksums gets them on first open (see store.ts). */
  private addSums(store: VaultStore): void {
    try {
      if (store.read((tx) => tx.header() !== null && !tx.sumsKept())) {
        store.write((tx) => tx.addMissingSums());
      }
    } catch {
      // A store that cannot be written or read here: the request that needs it says so.
    }
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
    const url = this.pgUrl();
    if (url !== null) {
      const pg = PgStore.open(url);
      pg.create();
      this.opened = pg;
      pg.onForeignCommit(() => this.events.emit('commit'));
      pg.write((tx) => tx.addMissingSums());
      return pg;
    }
    if (this.opened === null) {
      this.opened = Store.open(this.dir);
      // A new store keeps checksums from its first record.
      this.opened.write((tx) => tx.addMissingSums());
      this.#reserve = new StoreReserve(this.storePath);
    }
    return this.opened;
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
    this.#roomLeft(writes, true);
    try {
      const out = store.write(fn);
      this.events.emit('commit');
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw this.#fullDisk(err);
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
    this.#roomLeft(writes, false);
    try {
      const out = await store.writeDurable(fn);
      this.#room = null;
      this.events.emit('commit');
      return out;
    } catch (err) {
      this.#room = null;
      if (err instanceof VaultError) throw this.#fullDisk(err);
      // As in commit(): damage the store shows is named, not called a failed audit write.
      const damage = this.explain(err);
      if (damage !== null) throw new VaultError(damage, undefined, { cause: err });
      throw new VaultError('VLT-3004', undefined, { cause: err });
    }
  }

  /**
   * A commit that failed with EIO on a file system with no room left ran out
   * of space: LMDB reports a short write as EIO. Said as a full disk, which
   * the owner can fix, rather than a disk error, which sends them to replace it.
   */
  #fullDisk(err: VaultError): VaultError {
    if (err.code !== 'VLT-3004' || !/\(EIO\)/.test(err.message)) return err;
    try {
      const fs = statfsSync(this.dir);
      if (fs.bavail * fs.bsize >= MIN_FREE_BYTES) return err;
    } catch {
      return err;
    }
    return new VaultError(
      'VLT-3004',
      'Audit record could not be written: the vault’s file system is full (ENOSPC); access refused until it has room.',
      { cause: err },
    );
  }

  /**
   * @throws VaultError VLT-3004 when the file system is (nearly) full: the
   * reserve must still hold after a transaction that adds `writes` bytes.
   */
  #roomLeft(writes: number, own: boolean): void {
    // The database's disk is the database's to watch: a full one refuses the commit (VLT-3040).
    if (this.opened?.engine === 'postgresql') return;
    const free = own ? this.#freeNow() : this.#freeForGroup(Math.max(writes, RECORD_BYTES));
    // An owner write that would itself cross the reserve is refused as too
    // large, not as a full disk: every other request still fits, and must.
    if (own && free >= MIN_FREE_BYTES + RECORD_BYTES && free < MIN_FREE_BYTES + writes) {
      throw new VaultError('VLT-3013', roomMessage(writes, free));
    }
    if (free < MIN_FREE_BYTES + writes) {
      throw new VaultError(
        'VLT-3004',
        'Audit record could not be written (disk full); access refused.',
      );
    }
  }

  /** What statfs says now; an owner's write asks afresh (and a commit follows, so nothing is kept). */
  #freeNow(): number {
    this.#room = null;
    return this.#freeWithReserve();
  }

  /**
   * The file system's free bytes, and the store file's own reserve past its
   * end (store-reserve.ts), topped up first when it is half used and there
   * is room for it.
   */
  #freeWithReserve(): number {
    const fs = statfsSync(this.dir);
    const free = fs.bavail * fs.bsize;
    return free + (this.#reserve?.left(free) ?? 0);
  }

  /**
   * The room a grouped transaction is judged by: the last statfs answer, kept
   * while no commit has settled since and for ROOM_KEPT_MS at most, less
   * `charge` for each transaction judged by it before (none of which has
   * committed yet, so a fresh statfs would not have counted them either).
   */
  #freeForGroup(charge: number): number {
    const now = performance.now();
    if (this.#room === null || now - this.#room.at > ROOM_KEPT_MS) {
      this.#room = { free: this.#freeWithReserve(), at: now };
    }
    const free = this.#room.free;
    this.#room.free -= charge;
    return free;
  }

  async close(): Promise<void> {
    this.callers.clear();
    // Listeners write what they still hold (refusal-audit.ts counts) while the store is open.
    this.events.emit('close');
    if (this.opened !== null && this.damaged === null && this.opened.engine === 'lmdb') {
      try {
        const at = this.now();
        if (this.opened.read((tx) => tx.header() !== null)) {
          // Twice: see Tx.settle().
          this.opened.write((tx) => tx.settle(at));
          this.opened.write((tx) => tx.settle(at));
        }
      } catch {
        // A store that cannot be written now (read-only, full): closed as it is.
      }
    }
    await this.opened?.close();
    this.opened = null;
    this.#reserve = null;
  }
}
