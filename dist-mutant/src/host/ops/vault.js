/** The vault as a whole: create, passphrase and root key, backup, check, restore. */
import { VaultError } from '../../core/errors.js';
import { mkdirSync } from 'node:fs';
import { checkArgvUrl } from '../../store/location.js';
import { migrateTarget } from '../../store/open.js';
import { moveStore } from '../vault/store-move.js';
import { appendAudit } from '../audit/log.js';
import { backupVault, restoreVault } from '../vault/backup.js';
import { checkStore } from '../vault/check.js';
import { checkNewPassphrase, createVault, ownerEvent, rekeyVault, unlockOwner, } from '../owner/keys.js';
import { owner, ownerSecret } from './op.js';
export const vaultOps = {
    'vault.create': async ({ ctx }, req) => {
        const { store } = req.body;
        if (store !== undefined) {
            checkArgvUrl(store);
            if (ctx.hasVault())
                throw new VaultError('VLT-3006');
            mkdirSync(ctx.dir, { recursive: true, mode: 0o700 });
            await ctx.useStore(store);
        }
        return createVault(ctx, ownerSecret(req, 'passphrase'), req.source, req.body.testWeakKdf);
    },
    // Over owner(): the copy carries the anchor the command leaves on the new store.
    'vault.migrate': owner(async ({ ctx }, req) => moveStore(ctx, migrateTarget(req.body.to), req.source), 
    // The vault moves to a database the request names: where every rule then lives.
    { releases: 'Moving the vault' }),
    'vault.passwd': owner(async ({ ctx }, req, s) => {
        const next = ownerSecret(req, 'newPassphrase');
        try {
            const rewrapped = await s.rewrapRoot(next);
            ctx.commit((tx) => {
                const header = ctx.header(tx);
                tx.putHeader({ ...header, ...rewrapped });
                appendAudit(tx, header, ownerEvent(ctx, 'vault_passwd', req.source));
            });
            return {};
        }
        finally {
            next.wipe();
        }
    }, {
        // Before any unlock: a too-short new passphrase costs no guess.
        before: (_env, req) => checkNewPassphrase(ownerSecret(req, 'newPassphrase')),
        recovery: true,
        rotate: false,
        // The old passphrase itself, as passwd(1) asks for it, even on an unlocked terminal.
        session: false,
    }),
    'vault.backup': owner(async ({ ctx }, req) => backupVault(ctx, req.body.path, req.source)),
    // Not through owner(): the store is read whole in a child first, and the
    // owner unlocked only if its header is sound enough to try.
    'vault.check': async ({ ctx, owners }, req) => {
        // No passphrase sent: the terminal's owner session stands for it (op.ts).
        const pass = req.body.passphrase === undefined ? null : ownerSecret(req, 'passphrase');
        try {
            if (!ctx.storeExists())
                throw new VaultError('VLT-3001');
            const report = await checkStore(ctx.pgUrl() === null ? ctx.storePath : null, () => {
                // Just read whole in a child: whatever damage was found at start is not there now.
                ctx.damaged = null;
                return ctx.store();
            }, async () => pass === null
                ? owners.use(req.binding(), ctx.store().read((tx) => ctx.header(tx)))
                : unlockOwner(ctx, pass, req.source), ctx.now(), req.body.seenAnchor);
            // A store that cannot be read whole takes no audit record either.
            if (report.problems.some((p) => p.code === 'VLT-3034' && p.where === 'store')) {
                return report;
            }
            ctx.commit((tx) => {
                const header = tx.header();
                if (header === null)
                    return;
                appendAudit(tx, header, {
                    ...ownerEvent(ctx, 'vault_check', req.source, {
                        subject: `${report.problems.length} problem(s)`,
                    }),
                });
            });
            return report;
        }
        finally {
            pass?.wipe();
        }
    },
    // Not through owner(): restore unlocks the current vault and the backup itself.
    'vault.restore': async ({ ctx }, req) => {
        const pass = ownerSecret(req, 'passphrase');
        try {
            const { path, confirm } = req.body;
            return await restoreVault(ctx, { path, passphrase: pass, confirm }, req.source);
        }
        finally {
            pass.wipe();
        }
    },
    // rekeyVault anchors the new chain head in its own commit.
    'vault.rekey': owner(async ({ ctx }, req, s, pass) => rekeyVault(ctx, s, pass, req.source), { rotate: false, anchor: false, keepPassphrase: true }),
};
