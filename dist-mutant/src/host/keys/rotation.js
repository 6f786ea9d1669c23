/**
 * The rotation queue (`rotate-pending`): entries whose keys an ended session
 * or a revoked agent held, to be rotated with the owner's keys. Each entry is
 * rotated in a commit of its own that also takes it off the queue, so one
 * that cannot be rotated (a field record altered in the store, VLT-3020)
 * stays queued and holds back none of the others.
 */
import { VaultError } from '../../core/errors.js';
import { wipe } from '../../crypto/aead.js';
import { rotateEntry } from './grants.js';
/**
 * Rotates each entry of `ids` in its own commit and takes it off the queue.
 * An entry gone since is only taken off.
 * @returns the entries whose rotation failed with a VaultError, still queued.
 * @throws whatever else a commit throws (the entries after it are not tried).
 */
export function rotateEach(ctx, s, ids) {
    const failed = [];
    for (const id of ids) {
        try {
            ctx.commit((tx) => {
                const e = tx.entry(id);
                if (e !== null)
                    wipe(rotateEntry(tx, s, ctx.header(tx), e).dataKey);
                tx.putPendingRotation(tx.pendingRotation().filter((p) => p !== id));
            });
        }
        catch (err) {
            if (!(err instanceof VaultError))
                throw err;
            failed.push({ id, code: err.code });
        }
    }
    return failed;
}
