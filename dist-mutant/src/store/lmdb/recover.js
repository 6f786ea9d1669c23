import { VaultError } from '../../core/errors.js';
const FATAL = /MDB_PANIC|fatal error/;
/** Whether LMDB still begins a transaction in this environment (false once it is marked fatal). */
export function envUsable(db) {
    try {
        const txn = db.useReadTransaction();
        txn.done();
        return true;
    }
    catch (err) {
        return !(err instanceof Error && FATAL.test(err.message));
    }
}
/** Resolves once `ready` holds (checked every few milliseconds). */
export async function waitFor(ready) {
    while (!ready())
        await new Promise((r) => setTimeout(r, 5));
}
function refusal(why) {
    return new VaultError('VLT-3004', `Audit record could not be written: ${why}; the store is being reopened, access refused until it is.`);
}
/** One store's recovery: at most one reopen at a time; refusals meanwhile. */
export class Recovery {
    replace;
    /** Why the environment is being reopened, while it is. */
    #why = null;
    /** Writes waiting on the unusable environment: refused when it is found so. */
    #waiting = new Set();
    constructor(replace) {
        this.replace = replace;
    }
    /** @throws VaultError VLT-3004 while the environment is being reopened */
    refuseWhileRecovering() {
        if (this.#why !== null)
            throw refusal(this.#why);
    }
    /**
     * After `err` from a commit or read: when the environment is now unusable,
     * starts its reopening and returns the refusal that names why; else null.
     */
    check(err, usable) {
        if (this.#why !== null)
            return refusal(this.#why);
        const fatal = err instanceof Error && FATAL.test(err.message);
        if (!fatal && usable())
            return null;
        const cause = err instanceof VaultError
            ? (/: (.*?);/.exec(err.message)?.[1] ?? 'the store could not commit')
            : 'a commit failed and LMDB closed the store (MDB_PANIC)';
        this.#why = cause;
        const out = refusal(cause);
        for (const reject of this.#waiting)
            reject(out);
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
    race(p) {
        if (this.#why !== null) {
            p.catch(() => { });
            return Promise.reject(refusal(this.#why));
        }
        return new Promise((resolve, reject) => {
            const fail = (err) => reject(err);
            this.#waiting.add(fail);
            p.then(resolve, reject).finally(() => this.#waiting.delete(fail));
        });
    }
}
