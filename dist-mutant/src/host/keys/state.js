/**
 * The vault's state key (store/seal.ts) as the owner's commands handle it:
 * made and the vault sealed on the first owner command by this build (or
 * after a restore of a backup from before), given to this host on every one.
 */
import { VaultError } from '../../core/errors.js';
import { newKey, seal } from '../../crypto/aead.js';
import { Secret } from '../../crypto/secret.js';
import { unlockOwner } from '../owner/keys.js';
import { slots } from './slots.js';
/**
 * Gives this host the vault's state key (store/seal.ts); on the first owner
 * command by this build, makes the key and seals the vault as it is. A vault
 * whose chain already names sealed versions but has no state key lost it: that
 * is refused (VLT-3045), never sealed afresh over a rollback.
 * @throws VaultError VLT-3045
 */
export function sealVault(ctx, s) {
    const stored = ctx.store().read((tx) => tx.header());
    if (stored !== null && stored.stateKey === undefined) {
        // The vault's own key if it had one (a backup from before it was sealed, restored), else
        // the one this host holds, else a new one.
        const fresh = s.stateKey() ?? ctx.heldStateKey() ?? newKey();
        const h = ctx.commit((tx) => {
            const now = tx.header();
            if (now === null || now.stateKey !== undefined)
                return now;
            if (tx.audit().some((r) => typeof r.state === 'number')) {
                throw new VaultError('VLT-3045', 'Rollback detected: the vault’s state key was removed.');
            }
            const sealed = { ...now, stateKey: seal(s.rootKey(), fresh, slots.stateKey(s.vaultId)) };
            tx.putHeader(sealed);
            tx.sealAll(fresh);
            return sealed;
        });
        if (h !== null)
            s.adopt(h);
    }
    const key = s.stateKey();
    // The root key opened it: the vault's own, whatever this host held before.
    if (key !== null)
        ctx.learnStateKey(key, true);
}
/**
 * After `vault restore`: this host takes the restored vault's state key (a
 * host that never held it, or held another vault's), and a backup from before
 * the vault was sealed is sealed again, so its agents are served at once.
 * One more unlock of the owner's keys, with the passphrase the restore has.
 */
export async function sealRestored(ctx, passphrase, source) {
    const s = await unlockOwner(ctx, new Secret(Buffer.from(passphrase.expose())), source);
    try {
        sealVault(ctx, s);
    }
    finally {
        s.wipe();
    }
}
