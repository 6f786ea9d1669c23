/**
 * The owner's session: open it with the passphrase (`vault-cli unlock`), ask
 * whether the caller's terminal has one (every owner command, before any
 * prompt), end it (`vault-cli lock`). The terminal is the kernel's word for
 * the caller (owner-unlock.ts), never anything the request says.
 */
import { VaultError } from '../../core/errors.js';
import { appendAudit } from '../audit/log.js';
import { beginConfirm } from '../owner/confirm.js';
import { ownerEvent } from '../owner/keys.js';
import { ttyName } from '../owner/unlock.js';
import { owner } from './op.js';
export const ownerOps = {
    'owner.session': async ({ owners }, req) => ({ session: owners.view(req.binding()) }),
    'owner.unlock': owner(({ ctx, owners }, req, s) => {
        const binding = req.binding();
        if (binding === null) {
            throw new VaultError('VLT-2054', 'An owner session needs a terminal of its own: this caller has none the vault host can see (or runs inside `vault-cli run`).');
        }
        if (owners.terms.ttlMs === 0) {
            throw new VaultError('VLT-2054', 'Owner sessions are off in this vault host’s configuration (VAULT_OWNER_SESSION_MINUTES=0): each owner command asks for the passphrase.');
        }
        const ttl = req.body.ttlMs ?? owners.terms.ttlMs;
        const view = owners.open(binding, s, ttl, req.body.idleMs ?? owners.terms.idleMs);
        const terminal = ttyName(binding.tty);
        ctx.commit((tx) => appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'owner_unlock', req.source, { subject: terminal })));
        return { ...view, terminal };
    }, 
    // The passphrase itself: a session does not extend itself.
    { session: false }),
    // Issues a challenge only: the request it names is judged when it comes, with the assertion.
    'owner.confirm': owner(({ ctx }, req) => beginConfirm(ctx, req.body)),
    // No proof asked: it only ends what this very terminal holds.
    'owner.lock': async ({ ctx, owners }, req) => {
        const binding = req.binding();
        const ended = owners.end(binding);
        if (ended && binding !== null) {
            ctx.commit((tx) => appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'owner_lock', req.source, { subject: ttyName(binding.tty) })));
        }
        return { ended };
    },
};
