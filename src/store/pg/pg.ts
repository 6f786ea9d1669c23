/**
 * A vault in PostgreSQL, served by any number of hosts (team mode). Each
 * host keeps a copy of the rows (mirror.ts) that is only a cache. A grouped
 * write (every read of a value, every fill) runs the host's synchronous
 * transactions on the copy as it stands, with no lock and no round trip, and
 * then commits what they changed in one statement that checks the vault is
 * still at the version the copy was at (pg-worker.ts `tryCommit`,
 * synchronous_commit on); if another host committed first, nothing is
 * written, the rows it wrote come back with the refusal, and the group runs
 * again on them (`commitQueued`, at most TRIES times, then on the locked
 * path; a deadlock or a lock not had in time runs it again too, group.ts).
 * So a value leaves a host only after its audit record and its charge to
 * the agent's limits are durable in the one database every host shares,
 * decided on the vault as it was at that commit, and the next request on any
 * host sees them. An owner's write takes the version row's lock first
 * (`write`): it runs once, as on LMDB.
 *
 * The database is reached from a worker thread (pg-worker.ts); the host waits
 * for each answer on a shared flag, so the host's transactions stay the
 * synchronous functions LMDB runs. A database that does not answer is
 * VLT-3040, and nothing is released.
 */
import { randomBytes } from 'node:crypto';
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { VaultError } from '../../core/errors.js';
import type { VaultStore } from '../engine.js';
import { LoadShares } from './digest-chunks.js';
import { Mirror, type ColdRows } from './mirror.js';
import type { PgReply, PgRequest, PgRow } from './pg-protocol.js';
import { Store } from '../lmdb/store.js';
import { Tx } from '../tx.js';
import { holdYoungGeneration } from '../young.js';
import { Freshness } from './freshness.js';
import { keepAlive } from './horizon.js';
import { Breaker } from './breaker.js';
import {
  CONTENDED,
  settle,
  undoFor,
  untilCommitted,
  type Conflicts,
  type Outcome,
  type Queued,
} from './group.js';
import { contended, refusal, unreachable } from './refusals.js';
import { displayUrl } from './url.js';

/**
 * How long the host's main thread waits for one answer. Every request waits
 * behind it, `status` and the owner's `agent lock` too: with 30 s here, one
 * stalled backend froze its host for 20 s and a stalled database froze every
 * host for 30 s (issue 36). The worker's own statement and lock timeouts end
 * a slow answer before this one does.
 */
const ANSWER_MS = 2_000;
/** Creating the tables (`vault create`, `vault migrate`) is allowed longer: nothing else waits then. */
const CREATE_MS = 30_000;
/** Rows a page of the first load (pg-worker.ts `load`): a few MB, answered well within ANSWER_MS. */
const LOAD_PAGE = 5_000;
/**
 * How long a page of the first load may take: the worker reads it and takes
 * its share of the sealed digest (a keyed hash of each sealed row's
 * checksum), which on a loaded machine took a page of 10,000 sealed rows
 * past ANSWER_MS. Nothing else waits on the host meanwhile but its first request.
 */
const LOAD_MS = 5_000;
/** How many times a read is run again on a copy brought up to date before it takes the write lock (`read`). */
const READ_TRIES = 4;
/** How long the host waits for a commit: a large import's takes longer than a fill's, and the owner asked for it. */
function answerFor(rows: number): number {
  return ANSWER_MS + Math.floor(rows / 10);
}

export class PgStore implements VaultStore {
  /**
   * The rows the copy does not hold (mirror.ts COLD), read from the database
   * when asked for. Inside a write transaction they are at the version its
   * lock holds; a read's may be at a later one (a commit since its refresh):
   * `coldMoved` is then set, and the read runs again (`read`).
   */
  private readonly coldRows: ColdRows = {
    rows: (start, end, limit) => {
      const got = this.call({ op: 'cold', start, end, limit });
      if (got.missing === true) this.apply(got);
      if (got.version !== this.mirror.version) this.coldMoved = true;
      return (got.rows ?? []).map((r: PgRow) => ({
        key: r.key,
        value: Buffer.from(r.value as Uint8Array),
      }));
    },
  };
  private coldMoved = false;
  private mirror = new Mirror(this.coldRows);
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  /** Whether the copy is as current as a refresh would make it (freshness.ts). */
  private readonly freshness = new Freshness();
  readonly conflicts: Conflicts = { lost: 0, locked: 0, contended: 0 };
  /** The last first load's digest chunks: shares from the file, and computed (digest-chunks.ts). */
  digestChunks = { reused: 0, computed: 0 };
  /** When the host last asked the database (performance.now()), and its refresh while idle (horizon.ts). */
  private lastCall = 0;
  private keeping: NodeJS.Timeout | null = null;
  private readonly self = randomBytes(8).toString('hex');
  private readonly wakers: (() => void)[] = [];
  private notifyPort: MessagePort | null = null;
  private listening = false;
  /** Open after a request the database did not answer in time, or a lost connection (breaker.ts). */
  private readonly breaker = new Breaker({
    port: () => this.spawn(),
    drop: () => this.drop(),
    request: () => ({ op: 'refresh', since: this.mirror.version }),
  });

  /** `dir`: the host's vault directory, where its file of digest shares is (null: none). */
  private constructor(
    private readonly url: string,
    private readonly dir: string | null,
  ) {}

  get path(): string {
    return displayUrl(this.url);
  }

  /**
   * The store at `url`. Nothing is asked of the database yet: the first read
   * connects (and refuses with VLT-3040 if it cannot).
   */
  static open(url: string, dir: string | null = null): PgStore {
    return new PgStore(url, dir);
  }

  /**
   * Creates the tables (once; harmless when they are there), for `vault create`
   * and `vault migrate`.
   * @throws VaultError VLT-3040
   */
  create(): void {
    this.call({ op: 'create' }, CREATE_MS);
  }

  private spawn(): MessagePort {
    if (this.port !== null) return this.port;
    const { port1, port2 } = new MessageChannel();
    const notify = new MessageChannel();
    const worker = new Worker(new URL('./pg-worker.js', import.meta.url), {
      workerData: {
        url: this.url,
        port: port2,
        flag: this.flag,
        notify: notify.port2,
        self: this.self,
        seen: this.freshness.seen,
      },
      transferList: [port2, notify.port2],
    });
    // The host's own lifetime decides; a worker left waiting keeps no process alive.
    worker.unref();
    port1.unref();
    notify.port1.on('message', () => {
      for (const wake of this.wakers) wake();
    });
    notify.port1.unref();
    worker.on('error', () => this.drop());
    this.worker = worker;
    this.port = port1;
    this.notifyPort = notify.port1;
    this.listening = false;
    return port1;
  }

  /** Forgets the worker (and so its connection, whose open transaction the server rolls back). */
  private drop(): void {
    const w = this.worker;
    this.worker = null;
    this.port?.close();
    this.notifyPort?.close();
    this.port = null;
    this.notifyPort = null;
    // Its listener goes with it: nothing counts other hosts' commits now.
    this.freshness.reset();
    void w?.terminate();
  }

  /**
   * One request to the database, waited for synchronously.
   * @throws VaultError VLT-3040 when it is unreachable, does not answer, or refuses.
   */
  private call(req: PgRequest, answerMs = ANSWER_MS): Extract<PgReply, { ok: true }> {
    const open = this.breaker.open;
    if (open !== null) throw unreachable(open.cause);
    const port = this.spawn();
    this.lastCall = performance.now();
    Atomics.store(this.flag, 0, 0);
    port.postMessage(req);
    const waited = Atomics.wait(this.flag, 0, 0, answerMs);
    const got = receiveMessageOnPort(port)?.message as PgReply | undefined;
    if (waited === 'timed-out' || got === undefined) {
      // Its late answer (a commit even) must not be taken for the next request's.
      this.drop();
      const cause = new Error(`no answer in ${answerMs} ms`);
      this.breaker.trip(cause);
      throw unreachable(cause);
    }
    if (!got.ok) {
      const err = Object.assign(new Error(got.message), { code: got.code });
      if (got.lost === true) this.breaker.trip(err);
      throw refusal(got.code, err);
    }
    if (req.op !== 'listen' && req.op !== 'close' && req.op !== 'create') this.listen();
    return got;
  }

  /** Whether the copy has had its first load (`load`). */
  private loaded = false;
  /**
   * The first load: every row of one snapshot, in pages of LOAD_PAGE (the
   * worker reads the next while this thread takes one in; each thread takes
   * every other page's share of the sealed digest, from the host's file
   * where it can), the keys sorted once at the end (issue 37: one answer of
   * 700,000 rows inserted one at a time into one sorted array took 65-72 s).
   * @throws VaultError VLT-3040, VLT-3041
   */
  private load(): void {
    if (this.loaded) return;
    let version: number | undefined;
    // While loading, V8's young generation stays at its size (the load's garbage grew it
    // to 128 MB, kept resident), let grow again after unless held for good (young.ts).
    const release = holdYoungGeneration();
    const key = this.sealKey;
    const shares = key === null ? null : new LoadShares(this.dir, key);
    // The shares known from the host's file (digest-chunks.ts) go to the worker too.
    const first = { sealKey: key, shares: shares?.table() ?? null };
    try {
      for (let more = false; ; more = true) {
        const got = this.call(
          { op: 'load', more, limit: LOAD_PAGE, ...(more ? {} : first) },
          LOAD_MS,
        );
        if (got.missing === true) this.apply(got);
        version ??= got.version;
        if (got.packed !== undefined) {
          // Held as it came: its rows are views of it (mirror.ts), none copied.
          const packed = Buffer.from(got.packed);
          this.mirror.loadPacked(packed, key, shares?.share(packed, got) ?? null);
        }
        if (got.done === true) break;
      }
    } catch (err) {
      // A part of a snapshot is no copy: the next request loads afresh.
      this.mirror = new Mirror(this.coldRows);
      try {
        this.call({ op: 'rollback' });
      } catch {
        // A lost connection rolls the snapshot back by itself.
      }
      throw err;
    } finally {
      release();
    }
    this.mirror.loaded(version ?? 0);
    this.loaded = true;
    if (shares !== null) this.digestChunks = shares.finish(this.mirror);
    // Between requests only: every transaction here is synchronous, so none is open then.
    this.keeping ??= keepAlive(
      () => (this.loaded && this.breaker.open === null ? performance.now() - this.lastCall : 0),
      () => this.apply(this.call({ op: 'refresh', since: this.mirror.version })),
    );
  }

  /** The copy brought up to `reply`; behind the horizon (horizon.ts), loaded afresh. @throws VaultError VLT-3040, VLT-3041 */
  private apply(reply: Extract<PgReply, { ok: true }>): void {
    if (reply.missing === true) {
      throw new VaultError('VLT-3041', `No vault-cli store in the database at ${this.path}.`);
    }
    if (reply.behind === true) {
      this.mirror = new Mirror(this.coldRows);
      this.loaded = false;
      return this.load();
    }
    const rows = (reply.rows ?? []).map((r: PgRow) => ({
      key: r.key,
      value: r.value === null ? null : Buffer.from(r.value),
    }));
    this.mirror.apply(rows, reply.version ?? this.mirror.version);
  }

  /** The state key (seal.ts) once the host holds it. */
  private sealKey: Buffer | null = null;

  sealWith(key: Buffer): void {
    this.sealKey = Buffer.from(key);
  }

  read<T>(fn: (tx: Tx) => T): T {
    this.load();
    // A read that met rows not held at a later version than its copy's runs
    // again on the copy brought up to it; a vault that keeps moving under it
    // (commits from other hosts) is read under the write lock, once.
    for (let tries = 0; tries < READ_TRIES; tries++) {
      const mark = this.freshness.mark();
      this.apply(this.call({ op: 'refresh', since: this.mirror.version }));
      this.freshness.synced(mark);
      this.coldMoved = false;
      try {
        const out = fn(new Tx(this.mirror, this.sealKey));
        if (!this.coldMoved) return out;
      } catch (err) {
        if (!this.coldMoved) throw err;
      } finally {
        this.mirror.forget();
      }
    }
    return this.write(fn);
  }

  /**
   * `read`, with no round trip while the copy is `current`: for a check a
   * write transaction makes again before anything is released (engine.ts).
   */
  readCached<T>(fn: (tx: Tx) => T): T {
    if (this.loaded && this.freshness.current()) {
      this.coldMoved = false;
      try {
        const out = fn(new Tx(this.mirror, this.sealKey));
        if (!this.coldMoved) return out;
      } finally {
        this.mirror.forget();
      }
    }
    return this.read(fn);
  }

  /**
   * An owner's write: on the locked path, run once (its function is not run
   * again); a lock not had (contention, refusals.ts) is asked for again.
   */
  write<T>(fn: (tx: Tx) => T): T {
    let out: T | undefined;
    this.load();
    for (let contention = 1; ; contention++) {
      let ran = false;
      try {
        this.locked((tx) => {
          ran = true;
          out = fn(tx);
        }, true);
        return out as T;
      } catch (err) {
        if (ran || !contended(err) || contention === CONTENDED) throw err;
      }
    }
  }

  /**
   * The locked path: the version row taken `FOR UPDATE`, the copy brought
   * up to date under it, `run` on it, then the commit. `rethrow`: a throw
   * from `run` aborts (an owner's write); else `run` settles its own.
   * @throws VaultError VLT-3040, VLT-3041, or what `run` throws
   */
  private locked(run: (tx: Tx) => void, rethrow: boolean): void {
    const mark = this.freshness.mark();
    let got = this.call({ op: 'begin', since: this.mirror.version });
    for (let tries = 0; got.behind === true; tries++) {
      // Behind the horizon: the worker rolled back (no lock held); loaded afresh, then locked again.
      if (tries === READ_TRIES) throw unreachable(new Error('the copy stays behind the horizon'));
      this.apply(got);
      got = this.call({ op: 'begin', since: this.mirror.version });
    }
    this.apply(got);
    this.mirror.begin();
    try {
      run(new Tx(this.mirror, this.sealKey));
    } catch (err) {
      this.mirror.forget();
      this.mirror.rollback();
      try {
        this.call({ op: 'rollback' });
      } catch {
        // A lost connection rolls the transaction back by itself.
      }
      if (rethrow) throw err;
    }
    this.mirror.forget();
    this.commitOpen();
    this.freshness.synced(mark);
  }

  /**
   * Writes what the open transaction changed with the next version and
   * commits; on failure the mirror is put back and the error thrown.
   * @throws VaultError VLT-3040
   */
  private commitOpen(): void {
    const changes = this.mirror.changes();
    const version = this.mirror.version + 1;
    this.sendChanges({ op: 'commit', version }, changes);
    this.mirror.commit(changes.length > 0 ? version : this.mirror.version);
  }

  /**
   * Sends the open transaction's `changes` with `op` (a commit, or an
   * optimistic try); when no answer comes, the copy is put back (committed
   * or not, the next transaction finds whatever the database has).
   * @throws VaultError VLT-3040
   */
  private sendChanges(
    op: { op: 'commit'; version: number } | { op: 'try'; since: number },
    changes: readonly { key: string; value: Buffer | null }[],
  ): Extract<PgReply, { ok: true }> {
    try {
      return this.call(
        { ...op, keys: changes.map((c) => c.key), values: changes.map((c) => c.value) },
        answerFor(changes.length),
      );
    } catch (err) {
      this.mirror.rollback();
      throw err;
    }
  }

  /**
   * `write`, grouped: the transactions asked for while the host waits on the
   * database (reads and fills in bursts) run in one database transaction,
   * each undone alone if it throws, with one commit and one flush for all, as
   * lmdb-js groups them. Each promise settles once that commit is durable.
   * A group may run more than once (it lost to another host's commit): what a
   * transaction does outside its records it undoes with `Tx.onUndo`.
   */
  writeDurable<T>(fn: (tx: Tx) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, resolve, reject } as Queued);
      if (this.queued.length === 1) setImmediate(() => this.commitQueued());
    });
  }

  private readonly queued: Queued[] = [];

  /** Runs each of `group` on the copy, in one open transaction: each outcome, kept. */
  private runGroup(group: readonly Queued[], undos: (() => void)[]): Outcome[] {
    const outcomes: Outcome[] = [];
    for (const q of group) {
      const mark = this.mirror.mark();
      try {
        outcomes.push({ ok: true, value: q.fn(new Tx(this.mirror, this.sealKey, undos)) });
      } catch (err) {
        this.mirror.undoTo(mark);
        outcomes.push({ ok: false, err });
      }
    }
    // Rows not held that the group read are let go; its writes stay until the commit.
    this.mirror.forget();
    return outcomes;
  }

  /**
   * The group decided on the copy, then committed in one statement if the
   * vault is still where the copy is (`tryCommit`); a loss brings the rows
   * that beat it, and the group runs again on them. After TRIES losses, the
   * locked path, which always commits (group.ts `untilCommitted`, which also
   * runs it again after contention). No lock is held while the host works.
   */
  private commitQueued(): void {
    const group = this.queued.splice(0);
    try {
      this.load();
      const locked = () => this.lockedGroup(group);
      settle(
        group,
        untilCommitted(() => this.tryGroup(group), locked, this.conflicts),
      );
    } catch (err) {
      for (const q of group) q.reject(err);
    }
  }

  /** `group` on the locked path, which commits unless the database refuses. */
  private lockedGroup(group: readonly Queued[]): Outcome[] {
    this.conflicts.locked++;
    const undos: (() => void)[] = [];
    let outcomes: Outcome[] = [];
    try {
      this.locked(() => {
        outcomes = this.runGroup(group, undos);
      }, false);
    } catch (err) {
      undoFor(err, undos);
      throw err;
    }
    return outcomes;
  }

  /**
   * One optimistic try of `group`: its outcomes once committed, or null when
   * another host committed first (the copy then holds that host's rows, and
   * what the group did is undone).
   * @throws VaultError VLT-3040, VLT-3041
   */
  private tryGroup(group: readonly Queued[]): Outcome[] | null {
    const mark = this.freshness.mark();
    const since = this.mirror.version;
    const undos: (() => void)[] = [];
    this.mirror.begin();
    const outcomes = this.runGroup(group, undos);
    const changes = this.mirror.changes();
    let got;
    try {
      got = this.sendChanges({ op: 'try', since }, changes);
    } catch (err) {
      undoFor(err, undos);
      throw err;
    }
    if (got.won === true) {
      this.mirror.commit(changes.length > 0 ? since + 1 : since);
      this.freshness.synced(mark);
      return outcomes;
    }
    this.mirror.rollback();
    for (const undo of undos.reverse()) undo();
    this.apply(got);
    return null;
  }

  /** The backup format is an LMDB store file: the rows of one version, written into a new one. */
  async backup(path: string): Promise<void> {
    const records = this.read((tx) => tx.allRecords());
    const file = Store.openFile(path);
    try {
      await file.writeDurable((tx) => tx.replaceAll(records));
    } finally {
      await file.close();
    }
  }

  onForeignCommit(wake: () => void): void {
    this.wakers.push(wake);
  }

  /**
   * LISTENs, once per worker, after the first request it answered (so opening
   * the store asks nothing of the database). A wake-up is a hint only: missing
   * one costs a follower its next poll and a read its round trip, nothing more.
   */
  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    try {
      this.call({ op: 'listen' });
    } catch {
      // No wake-ups until the next worker: followers still poll.
    }
  }

  async close(): Promise<void> {
    this.breaker.close();
    if (this.keeping !== null) clearInterval(this.keeping);
    this.keeping = null;
    if (this.port !== null) {
      try {
        this.call({ op: 'close' });
      } catch {
        // Closing anyway.
      }
    }
    this.drop();
    await Promise.resolve();
  }
}
