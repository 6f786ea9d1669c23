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
 * path). So a value leaves a host only after its audit record and its charge
 * to the agent's limits are durable in the one database every host shares,
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
import { MessageChannel, receiveMessageOnPort, Worker, } from 'node:worker_threads';
import { VaultError } from '../../core/errors.js';
import { Mirror } from './mirror.js';
import { Store } from '../lmdb/store.js';
import { Tx } from '../tx.js';
import { holdYoungGeneration } from '../young.js';
import { Freshness } from './freshness.js';
import { refusal, unreachable } from './refusals.js';
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
/**
 * Optimistic tries of one group before it takes the locked path (which
 * always commits): with three hosts committing as fast as they can, a try
 * loses to another host's commit now and then, and each loss brings the rows
 * that beat it, so the next try is on the vault as it then stood.
 */
const TRIES = 8;
/** While the breaker is open, how often the worker asks the database again, in the background. */
const PROBE_MS = 500;
/** A probe the worker has not answered by then: that worker is dropped and a new one asks. */
const PROBE_GIVE_UP_MS = 10_000;
/** How long the host waits for a commit: a large import's takes longer than a fill's, and the owner asked for it. */
function answerFor(rows) {
    return ANSWER_MS + Math.floor(rows / 10);
}
export class PgStore {
    url;
    /**
     * The rows the copy does not hold (mirror.ts COLD), read from the database
     * when asked for. Inside a write transaction they are at the version its
     * lock holds; a read's may be at a later one (a commit since its refresh):
     * `coldMoved` is then set, and the read runs again (`read`).
     */
    coldRows = {
        rows: (start, end, limit) => {
            const got = this.call({ op: 'cold', start, end, limit });
            if (got.missing === true)
                this.apply(got);
            if (got.version !== this.mirror.version)
                this.coldMoved = true;
            return (got.rows ?? []).map((r) => ({
                key: r.key,
                value: Buffer.from(r.value),
            }));
        },
    };
    coldMoved = false;
    mirror = new Mirror(this.coldRows);
    worker = null;
    port = null;
    flag = new Int32Array(new SharedArrayBuffer(4));
    /** Whether the copy is as current as a refresh would make it (freshness.ts). */
    freshness = new Freshness();
    /** Optimistic tries that lost to another host's commit, and groups that then took the lock. */
    conflicts = { lost: 0, locked: 0 };
    self = randomBytes(8).toString('hex');
    wakers = [];
    notifyPort = null;
    listening = false;
    /**
     * Open after a request the database did not answer in time, or answered
     * that the connection was lost: every request is refused at once (VLT-3040)
     * instead of waiting its own ANSWER_MS in series, until a probe sent in the
     * background is answered (`probe`).
     */
    breaker = null;
    constructor(url) {
        this.url = url;
    }
    get path() {
        return displayUrl(this.url);
    }
    /**
     * The store at `url`. Nothing is asked of the database yet: the first read
     * connects (and refuses with VLT-3040 if it cannot).
     */
    static open(url) {
        return new PgStore(url);
    }
    /**
     * Creates the tables (once; harmless when they are there), for `vault create`
     * and `vault migrate`.
     * @throws VaultError VLT-3040
     */
    create() {
        this.call({ op: 'create' }, CREATE_MS);
    }
    spawn() {
        if (this.port !== null)
            return this.port;
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
            for (const wake of this.wakers)
                wake();
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
    drop() {
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
    call(req, answerMs = ANSWER_MS) {
        if (this.breaker !== null)
            throw unreachable(this.breaker.cause);
        const port = this.spawn();
        Atomics.store(this.flag, 0, 0);
        port.postMessage(req);
        const waited = Atomics.wait(this.flag, 0, 0, answerMs);
        const got = receiveMessageOnPort(port)?.message;
        if (waited === 'timed-out' || got === undefined) {
            // Its late answer (a commit even) must not be taken for the next request's.
            this.drop();
            const cause = new Error(`no answer from the database in ${answerMs} ms`);
            this.openBreaker(cause);
            throw unreachable(cause);
        }
        if (!got.ok) {
            const err = Object.assign(new Error(got.message), { code: got.code });
            if (got.lost === true)
                this.openBreaker(err);
            throw refusal(got.code, err);
        }
        if (req.op !== 'listen' && req.op !== 'close' && req.op !== 'create')
            this.listen();
        return got;
    }
    openBreaker(cause) {
        if (this.breaker !== null)
            return;
        this.breaker = { cause, timer: null };
        this.probe(PROBE_MS);
    }
    /**
     * Asks the database again `afterMs` from now, on the worker's port but in
     * the background: the host's main thread goes on answering (refusals, status,
     * `daemon stop`) meanwhile. An answer closes the breaker; a refusal asks
     * again later; silence drops the worker and asks with a new one.
     */
    probe(afterMs) {
        const b = this.breaker;
        if (b === null)
            return;
        b.timer = setTimeout(() => {
            const port = this.spawn();
            const giveUp = setTimeout(() => {
                port.off('message', answered);
                this.drop();
                this.probe(0);
            }, PROBE_GIVE_UP_MS);
            giveUp.unref();
            const answered = (reply) => {
                clearTimeout(giveUp);
                port.off('message', answered);
                if (this.breaker !== b)
                    return;
                if (reply.ok)
                    this.breaker = null;
                else
                    this.probe(PROBE_MS);
            };
            port.on('message', answered);
            // A probe keeps no process alive: the host's own lifetime decides.
            port.unref();
            port.postMessage({ op: 'refresh', since: this.mirror.version });
        }, afterMs);
        b.timer.unref();
    }
    /** Whether the copy has had its first load (`load`). */
    loaded = false;
    /**
     * The first load: every row of one snapshot, in pages of LOAD_PAGE (the
     * worker reads the next while this thread takes one in, and keeps the
     * sealed digest of every other page as it goes, this thread of the rest),
     * the keys sorted once at the end (issue 37:
     * one answer of 700,000 rows, inserted one at a time into one sorted
     * array, took a cold host 65-72 s, and holding that answer whole set both
     * threads' peak).
     * @throws VaultError VLT-3040, VLT-3041
     */
    load() {
        if (this.loaded)
            return;
        let version;
        // While loading, V8's young generation stays at its size: a load's rows
        // and the digest's garbage otherwise grew it to 128 MB, which the host
        // kept resident (30,000 entries: RSS 321-355 MB against 226 this way).
        // Let grow again after, unless the host holds it for good (young.ts).
        const release = holdYoungGeneration();
        try {
            for (let more = false;; more = true) {
                const got = this.call({
                    op: 'load',
                    more,
                    limit: LOAD_PAGE,
                    ...(more ? {} : { sealKey: this.sealKey }),
                }, LOAD_MS);
                if (got.missing === true)
                    this.apply(got);
                version ??= got.version;
                const share = got.digest === undefined || got.digest === null ? null : Buffer.from(got.digest);
                if (got.packed !== undefined) {
                    // Held as it came: its rows are views of it (mirror.ts), none copied.
                    this.mirror.loadPacked(Buffer.from(got.packed), this.sealKey, share);
                }
                if (got.done === true)
                    break;
            }
        }
        catch (err) {
            // A part of a snapshot is no copy: the next request loads afresh.
            this.mirror = new Mirror(this.coldRows);
            try {
                this.call({ op: 'rollback' });
            }
            catch {
                // A lost connection rolls the snapshot back by itself.
            }
            throw err;
        }
        finally {
            release();
        }
        this.mirror.loaded(version ?? 0);
        this.loaded = true;
    }
    apply(reply) {
        if (reply.missing === true) {
            throw new VaultError('VLT-3041', `No vault-cli store in the database at ${this.path}.`);
        }
        const rows = (reply.rows ?? []).map((r) => ({
            key: r.key,
            value: r.value === null ? null : Buffer.from(r.value),
        }));
        this.mirror.apply(rows, reply.version ?? this.mirror.version);
    }
    /** The state key (seal.ts) once the host holds it. */
    sealKey = null;
    sealWith(key) {
        this.sealKey = Buffer.from(key);
    }
    read(fn) {
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
                if (!this.coldMoved)
                    return out;
            }
            catch (err) {
                if (!this.coldMoved)
                    throw err;
            }
            finally {
                this.mirror.forget();
            }
        }
        return this.write(fn);
    }
    /**
     * `read`, with no round trip while the copy is `current`: for a check a
     * write transaction makes again before anything is released (engine.ts).
     */
    readCached(fn) {
        if (this.loaded && this.freshness.current()) {
            this.coldMoved = false;
            try {
                const out = fn(new Tx(this.mirror, this.sealKey));
                if (!this.coldMoved)
                    return out;
            }
            finally {
                this.mirror.forget();
            }
        }
        return this.read(fn);
    }
    /** An owner's write: on the locked path, run once (its function is not run again). */
    write(fn) {
        let out;
        this.load();
        this.locked((tx) => {
            out = fn(tx);
        }, true);
        return out;
    }
    /**
     * The locked path: the version row taken `FOR UPDATE`, the copy brought
     * up to date under it, `run` on it, then the commit. `rethrow`: a throw
     * from `run` aborts (an owner's write); else `run` settles its own.
     * @throws VaultError VLT-3040, VLT-3041, or what `run` throws
     */
    locked(run, rethrow) {
        const mark = this.freshness.mark();
        this.apply(this.call({ op: 'begin', since: this.mirror.version }));
        this.mirror.begin();
        try {
            run(new Tx(this.mirror, this.sealKey));
        }
        catch (err) {
            this.mirror.forget();
            this.mirror.rollback();
            try {
                this.call({ op: 'rollback' });
            }
            catch {
                // A lost connection rolls the transaction back by itself.
            }
            if (rethrow)
                throw err;
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
    commitOpen() {
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
    sendChanges(op, changes) {
        try {
            return this.call({ ...op, keys: changes.map((c) => c.key), values: changes.map((c) => c.value) }, answerFor(changes.length));
        }
        catch (err) {
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
    writeDurable(fn) {
        return new Promise((resolve, reject) => {
            this.queued.push({ fn, resolve, reject });
            if (this.queued.length === 1)
                setImmediate(() => this.commitQueued());
        });
    }
    queued = [];
    /** Runs each of `group` on the copy, in one open transaction: each outcome, kept. */
    runGroup(group, undos) {
        const outcomes = [];
        for (const q of group) {
            const mark = this.mirror.mark();
            try {
                outcomes.push({ ok: true, value: q.fn(new Tx(this.mirror, this.sealKey, undos)) });
            }
            catch (err) {
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
     * locked path, which always commits. No lock is held while the host works.
     */
    commitQueued() {
        const group = this.queued.splice(0);
        const settle = (outcomes) => group.forEach((q, i) => {
            const o = outcomes[i];
            if (o.ok)
                q.resolve(o.value);
            else
                q.reject(o.err);
        });
        try {
            this.load();
            for (let tries = 0; tries < TRIES; tries++) {
                const outcomes = this.tryGroup(group);
                if (outcomes !== null)
                    return settle(outcomes);
                this.conflicts.lost++;
            }
            this.conflicts.locked++;
            let outcomes = [];
            this.locked(() => {
                outcomes = this.runGroup(group, []);
            }, false);
            settle(outcomes);
        }
        catch (err) {
            for (const q of group)
                q.reject(err);
        }
    }
    /**
     * One optimistic try of `group`: its outcomes once committed, or null when
     * another host committed first (the copy then holds that host's rows, and
     * what the group did is undone).
     * @throws VaultError VLT-3040, VLT-3041
     */
    tryGroup(group) {
        const mark = this.freshness.mark();
        const since = this.mirror.version;
        const undos = [];
        this.mirror.begin();
        const outcomes = this.runGroup(group, undos);
        const changes = this.mirror.changes();
        const got = this.sendChanges({ op: 'try', since }, changes);
        if (got.won === true) {
            this.mirror.commit(changes.length > 0 ? since + 1 : since);
            this.freshness.synced(mark);
            return outcomes;
        }
        this.mirror.rollback();
        for (const undo of undos.reverse())
            undo();
        this.apply(got);
        return null;
    }
    /** The backup format is an LMDB store file: the rows of one version, written into a new one. */
    async backup(path) {
        const records = this.read((tx) => tx.allRecords());
        const file = Store.openFile(path);
        try {
            await file.writeDurable((tx) => tx.replaceAll(records));
        }
        finally {
            await file.close();
        }
    }
    onForeignCommit(wake) {
        this.wakers.push(wake);
    }
    /**
     * LISTENs, once per worker, after the first request it answered (so opening
     * the store asks nothing of the database). A wake-up is a hint only: missing
     * one costs a follower its next poll and a read its round trip, nothing more.
     */
    listen() {
        if (this.listening)
            return;
        this.listening = true;
        try {
            this.call({ op: 'listen' });
        }
        catch {
            // No wake-ups until the next worker: followers still poll.
        }
    }
    async close() {
        if (this.breaker?.timer)
            clearTimeout(this.breaker.timer);
        this.breaker = null;
        if (this.port !== null) {
            try {
                this.call({ op: 'close' });
            }
            catch {
                // Closing anyway.
            }
        }
        this.drop();
        await Promise.resolve();
    }
}
