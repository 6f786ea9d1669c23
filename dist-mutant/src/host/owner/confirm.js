/**
 * An owner request confirmed by an enrolled hardware key: what an owner
 * session with a key enrolled does not stand for alone (owner/session.ts
 * requireProof). The challenge is bound to the operation and its decoded
 * arguments, so an assertion for one request is no other's; refusals are
 * audited as `unlock_failed` naming the operation.
 */
import { VaultError, quote } from '../../core/errors.js';
import { checkCeremonyOrigin, } from '../../core/webauthn.js';
import { createHash } from 'node:crypto';
import { canon } from '../../core/canon.js';
import { OWNER_SECRET_FIELDS } from '../../core/protocol.js';
import { REQUESTS } from '../../core/requests.js';
import { assertedFor, ceremonyResult, issueChallenge, keyEvent, pendingChallenge, refuse, refuseSpent, requestOptions, spendAssertion, unexpired, } from './challenges.js';
/** Request fields that are proof or bookkeeping, not what the command does: left out of its digest. */
const NOT_THE_REQUEST = new Set([
    ...OWNER_SECRET_FIELDS,
    'seenAnchor',
    'keyProof',
]);
/**
 * What a confirmation's challenge commits to: SHA-256 (hex) of the operation
 * and its decoded arguments (canonical JSON, proof fields left out), so an
 * assertion made for `agent.add` cannot stand for `entry.reveal`, nor for the
 * same operation on another entry.
 */
export function confirmDigest(op, body) {
    const args = {};
    if (typeof body === 'object' && body !== null) {
        for (const [k, v] of Object.entries(body))
            if (!NOT_THE_REQUEST.has(k))
                args[k] = v;
    }
    return createHash('sha256')
        .update(canon([op, args]))
        .digest('hex');
}
/** What the confirmation's page names: the operation and, when it has one, the name it acts on. */
function confirmTitle(op, body) {
    const b = (body ?? {});
    const parts = [op];
    for (const v of [b.name, b.entry, b.field])
        if (typeof v === 'string')
            parts.push(quote(v));
    return parts.join(' ');
}
/**
 * Starts the confirmation of one owner request by an enrolled key (an owner
 * session with a key enrolled: owner/session.ts requireProof): a challenge
 * bound to `op` and its arguments, decoded as the request itself will be.
 * @throws VaultError VLT-1001 unknown op or bad body, VLT-4004 no key enrolled.
 */
export function beginConfirm(ctx, req) {
    checkCeremonyOrigin(req.origin);
    if (!Object.hasOwn(REQUESTS, req.op)) {
        throw new VaultError('VLT-1001', `Bad request: no operation ${quote(req.op)} to confirm.`);
    }
    const decode = REQUESTS[req.op];
    const body = decode(req.body, 'body');
    const keys = ctx.store().read((tx) => tx.keys());
    if (keys.length === 0)
        throw new VaultError('VLT-4004');
    const what = confirmTitle(req.op, body);
    const c = issueChallenge(ctx, { kind: 'confirm', op: req.op, request: confirmDigest(req.op, body) }, req.origin, { name: what });
    return { challengeId: c.id, options: requestOptions(c, keys), what };
}
/**
 * Checks and uses up a confirmation sent with request `op` (its decoded
 * `body`): the challenge must be one issued for this very op and these
 * arguments, the assertion an enrolled key's, its counter higher. Refusals
 * are audited as `unlock_failed` naming the operation.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase.
 */
export async function finishConfirm(ctx, op, body, confirm, source) {
    const result = ceremonyResult(confirm.result);
    const c = ctx.store().read((tx) => pendingChallenge(tx, confirm.challengeId));
    const wanted = { kind: 'confirm', op, request: confirmDigest(op, body) };
    const fail = (reason, key, code = 'VLT-4007', consume = true) => refuse(ctx, keyEvent(ctx, 'unlock_failed', source, { outcome: code, key, reason, subject: op }), code, `Hardware key not accepted for ${op} (${reason}); nothing was done.`, consume && c !== null ? c.id : null);
    if (c === null || c.purpose.kind !== 'confirm')
        return fail('unknown or used challenge', null);
    const verified = await assertedFor(ctx, c, wanted, result, fail, 'not this request');
    const at = ctx.now();
    const outcome = ctx.commit((tx) => {
        const spent = spendAssertion(tx, c, verified, at, unexpired(wanted, at));
        return typeof spent === 'string' ? spent : null;
    });
    if (outcome !== null)
        refuseSpent(fail, outcome, verified.key.name);
}
