/** The transcript sweep's operations: the values to look for, and the exposed marks of what was found. */
import { markExposed, openBackupKey, sweepValues } from '../entries/exposure.js';
import { owner } from './op.js';
/**
 * A sweep marks what it finds while it scans, an owner request every 200 ms:
 * one that sent the passphrase and asks to `hold` leaves the owner key with
 * its process (owner-unlock.ts), so the next ones cost no Argon2id run.
 */
function held(env, req, s) {
    if (!req.body.hold || req.body.passphrase === undefined)
        return false;
    return env.owners.hold(req.process(), s);
}
export const sweepOps = {
    // The values come to the sweep's process: the passphrase, or that process's own hold.
    'sweep.values': owner(async (env, req, s) => {
        const values = sweepValues(env.ctx, s, { since: req.body.since, stored: req.body.stored }, req.source);
        return {
            values,
            backupKey: s.header.auditPublicKey.toString('base64'),
            held: held(env, req, s),
        };
    }, { releases: 'The values a sweep looks for' }),
    'sweep.unseal': owner(async ({ ctx }, { body, source }, s) => ({
        key: openBackupKey(ctx, s, body.sealedKey, source),
    }), { releases: 'Opening a sweep backup' }),
    'sweep.mark': owner(async (env, req, s) => ({
        ...markExposed(env.ctx, s, req.body.found, req.source),
        held: held(env, req, s),
    })),
};
