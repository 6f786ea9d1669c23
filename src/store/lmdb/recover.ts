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

/** Resolves once `ready` holds (checked every few milliseconds). */
export async function waitFor(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 5));
}

function refusal(why: string): VaultError {
  return new VaultError(
    'VLT-3004',
    `Audit record could not be written: ${why}; the store is being reopened, access refused until it is.`,
  );
}

/** One store's recovery: at most one reopen at a time; refusals meanwhile. */
export class Recovery {
  /** Why the environment is being reopened, while it is. */
  #why: string | null = null;
  /** Writes waiting on the unusable environment: refused when it is found so. */
  readonly #waiting = new Set<(err: VaultError) => void>();

  constructor(private readonly replace: () => Promise<void>) {}

  /** @throws VaultError VLT-3004 while the environment is being reopened */
  refuseWhileRecovering(): void {
    if (this.#why !== null) throw refusal(this.#why);
  }

  /**
   * After `err` from a commit or read: when the environment is now unusable,
   * starts its reopening and returns the refusal that names why; else null.
   */
  check(err: unknown, usable: () => boolean): VaultError | null {
    if (this.#why !== null) return refusal(this.#why);
    const fatal = err instanceof Error && FATAL.test(err.message);
    if (!fatal && usable()) return null;
    const cause =
      err instanceof VaultError
        ? (/: (.*?);/.exec(err.message)?.[1] ?? 'the store could not commit')
        : 'a commit failed and LMDB closed the store (MDB_PANIC)';
    this.#why = cause;
    const out = refusal(cause);
    for (const reject of this.#waiting) reject(out);
    this.#waiting.clear();
    void this.replace().finally(() => {
      this.#why = null;
    });
    return out;
  }

  /**
   * `p`, or the refusal if the environment is found unusable before it
   * settles; the refusal at once when it is already being reopened (a write
   * that would wait on it from now on is never refused by check(): it
   * settles only if `p` does, and a batch queued behind a failed meta-page
   * write never does, so the reopening, which waits for every write to end,
   * would wait for ever).
   */
  race<T>(p: Promise<T>): Promise<T> {
    if (this.#why !== null) {
      p.catch(() => {});
      return Promise.reject(refusal(this.#why));
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (err: VaultError) => reject(err);
      this.#waiting.add(fail);
      p.then(resolve, reject).finally(() => this.#waiting.delete(fail));
    });
  }
}
