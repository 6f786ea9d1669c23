/**
 * The agent's single reads over the access path (access.ts release): one
 * field for `get`, the current code for `totp`, and `init`'s check that a
 * token is good.
 */
import { agentActor } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { TOTP_FIELD } from '../../core/names.js';
import { accessEvent } from '../audit/event.js';
import { release } from './access.js';
import { authenticate, endSession, refuse } from './authenticate.js';
/**
 * Releases one field (mode `get`) or the current code of the `totp` field
 * (mode `totp`) to an authenticated agent.
 * @throws VaultError as release().
 */
export async function readField(ctx, session, req, source) {
    const field = req.mode === 'totp' ? TOTP_FIELD : req.field;
    const [value] = await release(ctx, session, [{ entry: req.entry, field }], { kind: req.mode }, source);
    if (value === undefined)
        throw new VaultError('VLT-3007');
    return value;
}
/** For `init`: the token is good. Writes nothing beyond an audit record on failure. */
export function whoami(ctx, token, source) {
    const s = authenticate(ctx, token, source);
    try {
        if (s.agent.rate.lock !== null) {
            refuse(ctx, ctx.store().read((tx) => ctx.header(tx)), accessEvent(ctx, 'locked', 'VLT-2043', agentActor(s.agent.name), source), new VaultError('VLT-2043'));
        }
        return { agent: s.agent.name };
    }
    finally {
        endSession(s);
    }
}
