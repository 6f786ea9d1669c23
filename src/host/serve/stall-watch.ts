/**
 * A host whose event loop is stuck on a lock for good ends itself, so the
 * next client starts a fresh one (issue 42).
 *
 * A write transaction on the main thread (lmdb-js transactionSync: an owner
 * write, a lone agent write) waits for lmdb-js's write lock while a batch
 * commits. When that commit fails on its meta page, a batch queued behind it
 * may take the lock and never give it back (src/store/lmdb/recover.ts): the
 * main thread then waits in pthread_mutex_lock for ever, and no timer, no
 * signal handler, nothing in JavaScript on that thread runs again. A worker
 * thread (stall-worker.ts) sees the main thread's heartbeat stop while the
 * main thread sleeps on a futex, and ends the process (status 75, one line
 * in the host log). A loop that is only slow (a loaded machine) keeps
 * beating or is running, not asleep on a lock, and is left alone.
 */
import { Worker } from 'node:worker_threads';

/** How long the main thread may sleep on a lock without a heartbeat before the host ends. */
export const STALL_MS = 20_000;

/** Starts the watch for this process (a daemon's host only: it ends the whole process). */
export function watchStalls(exitStatus: number): void {
  const beat = new Int32Array(new SharedArrayBuffer(8));
  const heart = setInterval(() => Atomics.add(beat, 0, 1), 1000);
  heart.unref();
  const worker = new Worker(new URL('./stall-worker.js', import.meta.url), {
    workerData: { beat: beat.buffer, ms: STALL_MS, exitStatus },
    // Its own heap: a few MiB, not the host's.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
    stdout: false,
    stderr: false,
  });
  worker.unref();
  worker.on('error', () => {});
}
