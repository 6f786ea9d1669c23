/**
 * Whether a team host's copy (mirror.ts) is as current as a refresh would
 * make it, from what the worker's LISTEN counts of other hosts' commits
 * (pg-worker.ts `Start.seen`). Only for `readCached`: a value is never
 * released on a read; every release commits through `tryCommit`, which
 * checks the version.
 */
/**
 * A cached read (`readCached`: the caller cache's check of a kept token)
 * uses the copy with no round trip while LISTEN is up and has reported no
 * other host's commit since the copy was last brought up to date, for at
 * most this long (a listener that stalls without an error, or rows written
 * by SQL, which announce nothing, are not trusted for longer).
 */
const FRESH_MS = 1_000;
/** Milliseconds since `at` (performance.now(): no wall clock's steps; a clock going back trusts nothing). */
const elapsed = (at) => performance.now() - at;
export class Freshness {
    /** Shared with the worker: whether LISTEN is up, and the count of other hosts' commits. */
    seen = new Int32Array(new SharedArrayBuffer(8));
    /**
     * The count of other hosts' commits when the copy was last brought up to
     * date (a refresh, a commit), and when; null when LISTEN was not up then.
     */
    #synced = null;
    mark() {
        const count = Atomics.load(this.seen, 0) === 1 ? Atomics.load(this.seen, 1) : null;
        return { count, at: performance.now() };
    }
    /** The copy was brought up to date by a request sent at `mark`. */
    synced(mark) {
        this.#synced = mark.count === null ? null : { count: mark.count, at: mark.at };
    }
    /** The worker and its listener are gone: nothing counts other hosts' commits now. */
    reset() {
        Atomics.store(this.seen, 0, 0);
        this.#synced = null;
    }
    /**
     * Whether the copy is as current as a refresh would make it: LISTEN was up
     * when it was last brought up to date and is still, and has reported no
     * other host's commit since (a NOTIFY reaches the listener after its
     * commit, so what remains is that delivery's delay, well under a
     * millisecond on one network; rows written by SQL announce nothing, and
     * are seen within FRESH_MS).
     */
    current() {
        const s = this.#synced;
        return (s !== null &&
            Atomics.load(this.seen, 0) === 1 &&
            Atomics.load(this.seen, 1) === s.count &&
            elapsed(s.at) >= 0 &&
            elapsed(s.at) < FRESH_MS);
    }
}
