/**
 * The worker thread of stall-watch.ts: ends the process when the main
 * thread's heartbeat has stopped for `ms` and the main thread sleeps on a
 * futex (a lock it will never get), with one line in the host log.
 */
import { readFileSync, writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { exitNow } from '../../kernel/unix.js';

const { beat, ms, exitStatus } = workerData as {
  beat: SharedArrayBuffer;
  ms: number;
  exitStatus: number;
};
const heart = new Int32Array(beat);

/** Whether the main thread (its thread id is the process id) sleeps on a futex (wchan). */
function mainOnLock(): boolean {
  try {
    return readFileSync(`/proc/self/task/${process.pid}/wchan`, 'utf8').startsWith('futex');
  } catch {
    return false;
  }
}

let seen = Atomics.load(heart, 0);
let since = Date.now();
for (;;) {
  // Slot 1 is never set: a one-second sleep.
  Atomics.wait(heart, 1, 0, 1000);
  const now = Atomics.load(heart, 0);
  if (now !== seen) {
    seen = now;
    since = Date.now();
  } else if (Date.now() - since >= ms && mainOnLock()) {
    const line =
      `${new Date().toISOString()} vault-host[${process.pid}]: the event loop has waited ${Math.round((Date.now() - since) / 1000)} s on a lock ` +
      `(lmdb-js's write lock, held for good after a failed commit): exiting (status ${exitStatus}) for the next client to start a fresh host\n`;
    try {
      writeSync(2, line);
    } catch {
      // A log that cannot be written must not keep the host stuck.
    }
    exitNow(exitStatus);
  }
}
