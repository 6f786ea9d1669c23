/**
 * A store that heals itself after LMDB gives up on its environment.
 *
 * When the write of a commit's meta page fails (EIO, ENOSPC: the 128-byte
 * record that makes a transaction the current one), LMDB marks the whole
 * environment fatal (MDB_FATAL_ERROR): every later transaction, read or
 * write, fails with MDB_PANIC or EINVAL until the file is opened anew. The
 * file itself is intact: the other meta page still names the last commit.
 * So the host closes the environment and opens it again, in this process,
 * once no write of its own is in flight (under a millisecond, measured), and
 * refuses with VLT-3004 naming the cause meanwhile, never VLT-3034 (damage).
 * A commit refused was never acknowledged, so nothing acknowledged is lost.
 *
 * Unless lmdb-js's write lock is gone for good. A batch that lmdb-js started
 * while the failed commit held the lock (likely under load: any write queued
 * during the failed meta-page write) begins its transaction once the lock is
 * free, gets MDB_PANIC from mdb_txn_begin, and returns from its thread still
 * holding the lock (lmdb-js 3.5.6, src/writer.cpp WriteWorker::Write: `if (rc
 * != 0) { resultCode = rc; return; }`, before any unlock); its writes are
 * never marked done, so their promises never settle (lmdb-js only logs the
 * MDB_PANIC). lmdb-js's close waits for those writes, and its native close
 * (and the process 'exit' hook lmdb-js registers, which closes every
 * environment) waits for the lock: for ever. Nothing in this process can
 * reopen the file then. So the reopening is given STUCK_MS; past it the store
 * is stuck, and the host exits without closing it (src/cli/commands/daemon.ts)
 * for the next client to start a fresh host, which opens the intact file.
 */
import type { RootDatabase } from 'lmdb';
import { VaultError } from '../../core/errors.js';

const FATAL = /MDB_PANIC|fatal error/;

/** Whether LMDB still begins a transaction in this environment (false once it is marked fatal). */
export function envUsable(db: RootDatabase): boolean {
  try {
    const txn = db.useReadTransaction();
    txn.done();
    return true;
  } catch (err) {
    return !(err instanceof Error && FATAL.test(err.message));
  }
}

/**
 * How long a reopening may take, and a batched write wait on an environment
 * found fatal, before the store is taken as stuck: a sound close waits for
 * the last batch's commit and flush, milliseconds, seconds on a loaded disk.
 */
export const STUCK_MS = 10_000;

/** Whether `fn` settles within `ms` (its rejection counts as settled). */
export async function within(ms: number, fn: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const done = fn().then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `ready` holds (checked every few milliseconds). */
export async function waitFor(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 5));
}

function refusal(why: string, stuck: boolean): VaultError {
  return new VaultError(
    'VLT-3004',
    stuck
      ? `Audit record could not be written: ${why}; the store cannot be reopened by this host, which is exiting: the next request starts a fresh one.`
      : `Audit record could not be written: ${why}; the store is being reopened, access refused until it is.`,
  );
}

/** What a batched write that waited STUCK_MS on a fatal environment is refused as. */
const WEDGED = new Error('a commit failed and LMDB closed the store (MDB_PANIC)');

/** One store's recovery: at most one reopen at a time; refusals meanwhile. */
export class Recovery {
  /** Why the environment is being reopened, while it is. */
  #why: string | null = null;
  /** Writes waiting on the unusable environment: refused when it is found so. */
  readonly #waiting = new Set<(err: VaultError) => void>();
  /** Set once the reopening did not end in STUCK_MS: refused for good. */
  #stuck = false;
  /** Looks every STUCK_MS, while writes wait, whether the environment turned fatal meanwhile. */
  #watch: NodeJS.Timeout | undefined;

  constructor(
    /** Closes and opens the environment again; false when the close did not end in STUCK_MS. */
    private readonly replace: () => Promise<boolean>,
    /** Told, once, that the environment cannot be reopened in this process. */
    private readonly stuck: (why: string) => void,
  ) {}

  #refusal(why: string): VaultError {
    return refusal(why, this.#stuck);
  }

  /** @throws VaultError VLT-3004 while the environment is being reopened */
  refuseWhileRecovering(): void {
    if (this.#why !== null) throw this.#refusal(this.#why);
  }

  /**
   * After `err` from a commit or read: when the environment is now unusable,
   * starts its reopening and returns the refusal that names why; else null.
   */
  check(err: unknown, usable: () => boolean): VaultError | null {
    if (this.#why !== null) return this.#refusal(this.#why);
    const fatal = err instanceof Error && FATAL.test(err.message);
    if (!fatal && usable()) return null;
    const cause =
      err instanceof VaultError
        ? (/: (.*?);/.exec(err.message)?.[1] ?? 'the store could not commit')
        : 'a commit failed and LMDB closed the store (MDB_PANIC)';
    this.#why = cause;
    const out = this.#refusal(cause);
    for (const reject of this.#waiting) reject(out);
    this.#waiting.clear();
    void this.replace().then(
      (reopened) => {
        if (reopened) this.#why = null;
        else this.#giveUp(cause);
      },
      () => this.#giveUp(cause),
    );
    return out;
  }

  #giveUp(cause: string): void {
    this.#stuck = true;
    this.stuck(cause);
  }

  /**
   * `p`, or the refusal if the environment is found unusable before it
   * settles; the refusal at once when it is already being reopened (a write
   * that would wait on it from now on is never refused by check(): it
   * settles only if `p` does, and a batch queued behind a failed meta-page
   * write never does, so the reopening, which waits for every write to end,
   * would wait for ever).
   */
  race<T>(p: Promise<T>, usable: () => boolean): Promise<T> {
    if (this.#why !== null) {
      p.catch(() => {});
      return Promise.reject(this.#refusal(this.#why));
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (err: VaultError) => reject(err);
      this.#waiting.add(fail);
      this.#watchWaiting(usable);
      p.then(resolve, reject).finally(() => this.#waiting.delete(fail));
    });
  }

  /**
   * A batch whose commit never reports (it began on an environment already
   * fatal, see above) is found here, STUCK_MS at most after: its writes are
   * refused and the reopening starts (and finds the store stuck).
   */
  #watchWaiting(usable: () => boolean): void {
    if (this.#watch !== undefined) return;
    this.#watch = setInterval(() => {
      if (this.#waiting.size === 0 || this.#why !== null) {
        clearInterval(this.#watch);
        this.#watch = undefined;
      } else if (!usable()) this.check(WEDGED, usable);
    }, STUCK_MS);
    this.#watch.unref();
  }
}
