/**
 * The vault's LMDB store: one host's store file, opened through lmdb-js (the
 * only importer of lmdb, with rows.ts).
 *
 * Every write is committed and flushed to disk before the caller goes on: a
 * `transactionSync` (`write`), or, for the fills and reads that come in
 * bursts, a batched asynchronous transaction resolved only once flushed
 * (`writeDurable`). A reply the host sends after either describes durable
 * state.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { asBinary, open, type RootDatabase } from 'lmdb';
import { STORE_FILE } from '../../core/protocol.js';
import type { VaultStore } from '../engine.js';
import { Tx } from '../tx.js';
import { VaultError } from '../../core/errors.js';
import { commitCause, commitFailure, diskFault, readFailure } from './failures.js';
import { guardFlushError } from './flush-error.js';
import { rememberClean } from './known-good.js';
import { envUsable, Recovery, STUCK_MS, waitFor, within } from './recover.js';
import { DiskRoom } from './room.js';
import { DROP_EVERY, ResidentPages } from './resident.js';
import { LmdbRows, quiet } from './rows.js';

/**
 * Records (or pages) per transaction of `vault check`'s write probe: about
 * what the host's own transactions write. One transaction over a whole
 * compacted copy (a backup) freed so many pages that LMDB crashed saving the
 * free-page list (mdb_freelist_save, SIGSEGV): a crash of the probe itself,
 * on a sound store, which the host's transactions never come near.
 */
const PROBE_CHUNK = 64;

/**
 * Reads the file's first 64 KiB (its two meta pages, at any page size LMDB
 * uses) through read(2) before LMDB opens it. A read the disk fails there
 * (EIO) crashes lmdb-js's open: a failed mdb_env_open frees its environment's
 * context twice (lmdb-js 3.5.6, EnvWrap::openEnv), SIGSEGV. Here it is the
 * refusal that names it (VLT-3004). A file not there yet is LMDB's to create.
 * @throws VaultError VLT-3004 when the disk fails the read
 */
function readMetaPages(path: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    readSync(fd, Buffer.alloc(65536), 0, 65536, 0);
  } catch (err) {
    const fault = diskFault(err);
    if (fault !== null) throw readFailure(fault);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** A write waiting for the end of its turn of the event loop (Store.writeDurable). */
interface Queued {
  readonly fn: (tx: Tx) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export class Store implements VaultStore {
  /** The room the host keeps for this file's growth (room.ts), once it serves it (keepRoom). */
  room: DiskRoom | undefined;
  /** The host's own store: its mapped pages kept out of the resident set beyond those in use (keepRoom). */
  #resident: ResidentPages | undefined;
  /**
   * Whether an LMDB call failed here (a commit, a read, a record that did not
   * decode): then its close is not remembered as clean (known-good.ts), and
   * the next start scans the store in full.
   */
  #faulted = false;
  /**
   * When this process last wrote the file (ms since the epoch, taken once a
   * commit is flushed): a file changed later than that was changed by
   * another, and its close is not remembered as clean.
   */
  #wroteAt = Date.now();

  private constructor(
    private db: RootDatabase,
    readonly path: string,
    /** Opens this file anew: after a failed meta-page write (recover.ts). */
    private readonly reopen: () => RootDatabase = () => db,
  ) {}

  /** Set while the environment is unusable and being reopened (recover.ts). */
  readonly #recovery = new Recovery(
    () => this.#replace(),
    (why) => this.#giveUp(why),
  );
  /** Told when the environment cannot be reopened in this process (onStuck). */
  #stuck: (why: string) => void = () => {};

  onStuck(stuck: (why: string) => void): void {
    this.#stuck = stuck;
  }

  /** Reopens the environment; false when lmdb-js's close did not end in time (recover.ts STUCK_MS). */
  async #replace(): Promise<boolean> {
    const closed = await within(STUCK_MS, async () => {
      await waitFor(() => this.#batched === 0 && this.#turn.length === 0);
      try {
        await this.db.close();
      } catch {
        // An environment LMDB marked fatal: closed as far as it goes.
      }
    });
    if (!closed) return false;
    this.db = this.reopen();
    return true;
  }

  /** Tells the host, once, that this store is stuck (recover.ts): it is then never used again here. */
  #giveUp(why: string): void {
    const stuck = this.#stuck;
    this.#stuck = () => {};
    stuck(why);
  }

  /** After a failed commit or read: whether LMDB's environment is now unusable (then it is reopened). */
  #afterFailure(err: unknown): VaultError | null {
    return this.#recovery.check(err, () => envUsable(this.db));
  }

  /** Whether a store file exists in `dir`; checked before opening so a read never creates one. */
  static exists(dir: string): boolean {
    return existsSync(join(dir, STORE_FILE));
  }

  static open(dir: string): Store {
    return Store.openFile(join(dir, STORE_FILE));
  }

  /** Opens a store file by its path (a backup being inspected or restored). */
  static openFile(path: string, readOnly = false): Store {
    const opener = () => {
      guardFlushError();
      readMetaPages(path);
      return open({ path, encoding: 'msgpack', compression: false, cache: false, readOnly });
    };
    return new Store(opener(), path, opener);
  }

  /** A scratch copy for `vault check`'s write probe: nothing in it needs to reach the disk. */
  static openScratch(path: string): Store {
    guardFlushError();
    const db = open({ path, encoding: 'msgpack', compression: false, cache: false, noSync: true });
    return new Store(db, path);
  }

  /**
   * A consistent copy of the store at `path` (a new file), compacted, while
   * writers go on: LMDB's own copy (mdb_env_copy2 with MDB_CP_COMPACT) reads
   * one snapshot, so the copy never holds half a transaction.
   */
  async backup(path: string): Promise<void> {
    try {
      await this.db.backup(path, true);
    } finally {
      // It read every page through the map.
      this.#resident?.touched(DROP_EVERY);
    }
  }

  /**
   * A consistent copy of the store at `path`, page for page as they are (not
   * compacted, free pages and all): what `vault check`'s write probe writes into.
   */
  async copyPages(path: string): Promise<void> {
    try {
      await this.db.backup(path, false);
    } finally {
      this.#resident?.touched(DROP_EVERY);
    }
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * allocates and frees pages (a record of a few KiB, put then removed), so a
   * damaged free-page list shows on the copy, not in the host.
   */
  scratchWrite(i: number): void {
    this.db.transactionSync(() => {
      quiet(this.db.put(`scratch/${i}`, Buffer.alloc(8192, i)));
      if (i > 0) quiet(this.db.remove(`scratch/${i - 1}`));
    });
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * writes into every leaf page, as the host's writes would (a key inserted
   * just after each key, then removed; each record put back as it was). A
   * damaged page that reads survive can still crash an insert into it, and
   * a host appends an audit record with nearly every request.
   */
  probeWrites(): void {
    const keys = [...this.db.getKeys({})].filter((k): k is string => typeof k === 'string');
    for (let at = 0; at < keys.length; at += PROBE_CHUNK)
      this.#probeKeys(keys.slice(at, at + PROBE_CHUNK));
  }

  #probeKeys(keys: readonly string[]): void {
    this.db.transactionSync(() => {
      for (const k of keys) {
        quiet(this.db.put(`${k}\u0000`, 0));
        quiet(this.db.remove(`${k}\u0000`));
        // Put back as the very bytes it holds (no decoding and encoding
        // again), so the copy reads the same after the probe, byte for byte.
        let bytes: Buffer | undefined;
        try {
          bytes = this.db.getBinary(k);
        } catch {
          continue;
        }
        if (bytes !== undefined) quiet(this.db.put(k, asBinary(bytes)));
      }
    });
  }

  /**
   * For `vault check`, on a scratch copy only: one write transaction that
   * takes a page for each page the file has (a value of one overflow page
   * each), so every page the free-page list names is handed out and written
   * once: a damaged list (a page past the end, a page in use) fails or
   * crashes here instead of in the host, whose small writes reach each part
   * of the list only by chance. Then they are freed again.
   */
  drainFreePages(): void {
    // The pages not in either tree are the free ones: take that many and a margin
    // (a clean, compact store drains in a few pages; a file never needs more than its size).
    const st = this.db.getStats() as {
      lastPageNumber: number;
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
      free: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    };
    const used = (t: {
      treeBranchPageCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
    }) => t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages;
    const free = st.lastPageNumber + 1 - 2 - used(st) - used(st.free);
    const pages = Math.min(Math.max(free, 0) + 64, Math.ceil(statSync(this.path).size / 4096) + 8);
    // Over half a page: a value of its own overflow page, taken one page at a time.
    const value = Buffer.alloc(3000, 0xa5);
    // Taken in one transaction, so every page of the list is handed out (pages
    // freed meanwhile are not); freed again in host-sized ones (see PROBE_CHUNK).
    this.db.transactionSync(() => {
      for (let i = 0; i < pages; i++) quiet(this.db.put(`scratch/drain/${i}`, value));
    });
    for (let at = 0; at < pages; at += PROBE_CHUNK) {
      this.db.transactionSync(() => {
        for (let i = at; i < Math.min(pages, at + PROBE_CHUNK); i++)
          quiet(this.db.remove(`scratch/drain/${i}`));
      });
    }
  }

  /**
   * For `vault check`'s child (scan-worker.ts): every record read by its key,
   * as the host's reads find it (the key's search through the tree, then its
   * value's pages), its bytes not decoded: how many; with `copy` (a probed
   * copy, its own `scratch/` records left out), a digest of every key and
   * value too, to tell whether it reads the same after writes.
   */
  readRaw(copy = false): { records: number; digest: string } {
    const h = copy ? createHash('sha256') : null;
    let records = 0;
    for (const k of this.db.getKeys({})) {
      if (copy && typeof k === 'string' && k.startsWith('scratch/')) continue;
      let bytes: Buffer | undefined;
      try {
        bytes = this.db.getBinaryFast(k as string);
      } catch {
        // As `vault check` reads it: one record that fails to read does not hide the rest.
        bytes = Buffer.from('<unreadable>');
      }
      records++;
      if (h === null) continue;
      // lmdb-js reuses the buffer and sets its `length` by hand (rows.ts): read by that length.
      const n = bytes?.length ?? -1;
      h.update(`${typeof k === 'string' ? k : JSON.stringify(k)}\u0000${n}\u0000`);
      if (bytes !== undefined) h.update(bytes.subarray(0, n));
    }
    return { records, digest: h?.digest('hex') ?? '' };
  }

  /** How many bytes LMDB's newer meta page says the store uses (its last page's end). */
  claimedBytes(): number {
    const st = this.db.getStats() as { lastPageNumber: number; pageSize: number };
    return (st.lastPageNumber + 1) * st.pageSize;
  }

  /** The size of the store file in bytes. */
  bytes(): number {
    return statSync(this.path).size;
  }

  /** The state key (seal.ts) once the host holds it. */
  private sealKey: Buffer | null = null;

  sealWith(key: Buffer): void {
    this.sealKey = Buffer.from(key);
  }

  /**
   * Reads on lmdb-js's shared read transaction; no transaction of its own is
   * begun. That is one snapshot only while `fn` runs synchronously: lmdb-js
   * renews the shared transaction after a write this process commits (at
   * once for `write`, a microtask or callback later for the others) and on a
   * timer (setTimeout 0), none of which can run inside synchronous code that
   * writes nothing. So `fn` must neither await nor write (no caller does).
   */
  read<T>(fn: (tx: Tx) => T): T {
    this.#recovery.refuseWhileRecovering();
    this.#resident?.touched();
    try {
      return fn(new Tx(new LmdbRows(this.db), this.sealKey));
    } catch (err) {
      // The caller's own refusal (a VaultError) says nothing of the environment.
      if (err instanceof VaultError) throw err;
      this.#faulted = true;
      throw this.#afterFailure(err) ?? err;
    }
  }

  /**
   * One synchronous write transaction, flushed to disk before it returns.
   * Throwing inside `fn` aborts it: nothing is written.
   */
  write<T>(fn: (tx: Tx) => T): T {
    this.#recovery.refuseWhileRecovering();
    this.#resident?.touched();
    try {
      const out = this.db.transactionSync(() => fn(new Tx(new LmdbRows(this.db), this.sealKey)));
      this.#wroteAt = Date.now();
      return out;
    } catch (err) {
      // The caller's own refusal (a VaultError) aborts the transaction, no fault of the store's.
      if (!(err instanceof VaultError)) this.#faulted = true;
      const failed = commitFailure(err);
      return this.#throwAfter(err, failed);
    }
  }

  /** A failed commit's refusal, now knowing whether it left the environment unusable. */
  #throwAfter(err: unknown, failed: VaultError | null): never {
    const fatal = this.#afterFailure(failed ?? err);
    throw failed ?? fatal ?? err;
  }

  /**
   * A write transaction grouped with the others of this moment, resolved only
   * once it is flushed to disk. Two ways, chosen per turn of the event loop:
   *
   * - Alone (the only write asked in this turn, none in flight): one
   *   `transactionSync` on the main thread, flushed before it returns. No
   *   thread hand-offs: lmdb-js's batched path goes main -> write thread ->
   *   main (the callback runs there) -> write thread (commit) -> main
   *   (committed) -> main (flushed), each a wake-up of another thread, which
   *   is most of a lone write's latency on a loaded machine (issue 28).
   * - Otherwise, lmdb-js's batched asynchronous transactions (each a child
   *   transaction of its batch, so one that throws is rolled back alone),
   *   flushed off the event loop (overlappingSync) beside the next batch's
   *   work, and gathering the writes that come meanwhile: under load, fewer
   *   flushes and no loop blocked on the disk. Measured against one
   *   transactionSync per turn for every write (bench/commit.ts, and the
   *   host under bench/proxy.ts): that spent less CPU over all threads per
   *   write but filled fewer requests per second, since its fdatasync stops
   *   the loop and its groups end with the turn.
   *
   * Once a batched write is in flight, later writes join the batching until
   * every one of them has flushed, so under steady load the loop is not
   * blocked on the disk; a lone write blocks it only while nothing else waits.
   */
  writeDurable<T>(fn: (tx: Tx) => T): Promise<T> {
    try {
      this.#recovery.refuseWhileRecovering();
    } catch (err) {
      return Promise.reject(err);
    }
    this.#resident?.touched();
    if (this.#batched > 0) return this.#writeBatched(fn);
    return new Promise<T>((resolve, reject) => {
      this.#turn.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.#turn.length === 1) setImmediate(() => this.#endTurn());
    });
  }

  /** Writes asked in this turn of the event loop, while none was batched. */
  #turn: Queued[] = [];
  /** Batched writes handed to lmdb-js and not yet flushed (or failed). */
  #batched = 0;

  #endTurn(): void {
    const turn = this.#turn;
    this.#turn = [];
    const [lone] = turn;
    if (turn.length === 1 && lone !== undefined && this.#batched === 0) {
      let out: unknown;
      try {
        out = this.write(lone.fn);
      } catch (err) {
        lone.reject(err);
        return;
      }
      lone.resolve(out);
      return;
    }
    for (const q of turn) this.#writeBatched(q.fn).then(q.resolve, q.reject);
  }

  async #writeBatched<T>(fn: (tx: Tx) => T): Promise<T> {
    // A write of a turn that ended after the environment was found unusable:
    // refused as every other meanwhile, never handed to the fatal environment.
    this.#recovery.refuseWhileRecovering();
    const db = this.db as unknown as {
      transactionAsync(action: () => T, asChild: boolean): Promise<T>;
    };
    this.#batched++;
    try {
      const committed = db.transactionAsync(
        () => fn(new Tx(new LmdbRows(this.db), this.sealKey)),
        true,
      );
      // lmdb-js's `flushed` is the flush of the batch being queued when its
      // `then` is called. Asked now, that is the batch this transaction just
      // joined; asked once the commit resolves, it is the batch the next
      // requests queued meanwhile, one whole commit later. (lmdb-js 3.5 marks
      // a transaction committed only once mdb_txn_commit, its overlapping
      // sync included, has returned, so both settle in the same callback;
      // the flush is awaited so the rule does not rest on that.) A failed
      // commit never flushes: this promise then stays pending, unawaited.
      const flushed = new Promise<void>((resolve) => {
        void this.db.flushed.then(() => resolve());
      });
      // A batch queued behind a failed meta-page write never settles (lmdb-js
      // only logs its MDB_PANIC): the recovery refuses it instead (recover.ts).
      const usable = () => envUsable(this.db);
      const out = await this.#recovery.race(committed, usable);
      await this.#recovery.race(flushed, usable);
      this.#wroteAt = Date.now();
      return out;
    } catch (err) {
      if (err instanceof VaultError) throw err;
      this.#faulted = true;
      return this.#throwAfter(err, commitFailure(err, await commitCause(err)));
    } finally {
      this.#batched--;
    }
  }

  /**
   * From now on, keep room on the disk for the store's growth, and the
   * store's mapped pages out of the resident set beyond those in use
   * (resident.ts): the host's own store only.
   */
  keepRoom(): void {
    this.#own = true;
    this.room = new DiskRoom(dirname(this.path), this.path);
    this.#resident = new ResidentPages(this.path);
  }

  settle(at: number): void {
    if (this.read((tx) => tx.header() !== null)) {
      // Twice: see Tx.settle().
      this.write((tx) => tx.settle(at));
      this.write((tx) => tx.settle(at));
    }
  }

  onForeignCommit(): void {
    // One host per LMDB store: no other commits to hear of.
  }

  /** The host's own store (keepRoom): its clean close is remembered. */
  #own = false;

  async close(): Promise<void> {
    this.#resident?.stop();
    await this.db.close();
    // Closed after a run without a fault: the next start need not scan it (known-good.ts).
    if (this.#own && !this.#faulted) rememberClean(this.path, this.#wroteAt);
  }
}
