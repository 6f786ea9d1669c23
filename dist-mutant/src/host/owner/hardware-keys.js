/**
 * Hardware keys in the host: enrolment, and lifting a lockdown with an
 * assertion. The host issues every challenge (random, stored with its expiry
 * and purpose, single use) and verifies every answer; the CLI only serves the
 * page and relays. Nothing but `finishUnlock` lifts a lock, and it does so in
 * the same write transaction that consumes the challenge, moves the key's
 * counter and appends the audit record. Every refusal is audited too.
 *
 * Both ceremonies are the owner's: the passphrase first (ops/keys.ts), then a
 * key. An unlock's challenge names the agent it lifts; once a key is enrolled,
 * another is enrolled only with an enrolled key's assertion (or the recovery
 * key), so the passphrase alone cannot add a key that lifts a lockdown.
 * Challenges and assertions themselves are challenges.ts's; an owner request
 * confirmed by a key is confirm.ts's.
 */
import { VaultError, quote } from '../../core/errors.js';
import { unlock } from '../../core/policy.js';
import { CHALLENGE_TTL_MS, RP_ID, RP_NAME, VOUCHED_BY_RECOVERY, challengeRefusal, checkCeremonyOrigin, checkKeyName, nextKeyName, } from '../../core/webauthn.js';
import { randomBytes } from '../../crypto/aead.js';
import { appendAudit } from '../audit/log.js';
import { agentByName } from '../agent/names.js';
import { assertedFor, bindingHolds, browserReason, ceremonyResult, issueChallenge, keyEvent, pendingChallenge, refuse, refuseSpent, requestOptions, spendAssertion, verifiedAssertion, verifier, unexpired, } from './challenges.js';
function summary(k) {
    return {
        name: k.name,
        credentialId: k.id,
        counter: k.counter,
        created: k.created,
        lastUsed: k.lastUsed,
    };
}
export function listKeys(ctx) {
    return ctx
        .store()
        .read((tx) => tx.keys())
        .map(summary)
        .sort((a, b) => a.created - b.created || a.name.localeCompare(b.name));
}
function keyByName(tx, name) {
    return tx.keys().find((k) => k.name === name) ?? null;
}
/** @throws VaultError VLT-4005 when no key has this name. */
export function removeKey(ctx, name, source) {
    ctx.commit((tx) => {
        const k = keyByName(tx, name);
        if (k === null)
            throw new VaultError('VLT-4005', `No hardware key named ${quote(name)}.`);
        tx.removeKey(k.id);
        appendAudit(tx, ctx.header(tx), keyEvent(ctx, 'key_rm', source, { key: name }));
    });
}
/** The options for `navigator.credentials.create()` answering enrolment challenge `c`. */
function creationOptions(c, keys) {
    const name = c.name ?? 'key';
    return {
        rp: { id: RP_ID, name: RP_NAME },
        user: {
            id: c.userId ?? '',
            name: `vault-cli ${name}`,
            displayName: `vault-cli owner (${name})`,
        },
        challenge: c.challenge,
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        timeout: CHALLENGE_TTL_MS,
        attestation: 'none',
        excludeCredentials: keys.map((k) => ({ type: 'public-key', id: k.id })),
        authenticatorSelection: { userVerification: 'discouraged', residentKey: 'discouraged' },
    };
}
/**
 * Starts an enrolment on the page at `origin` (the owner's passphrase was
 * checked before this). The first key needs nothing more: whoever has the
 * passphrase before any key is enrolled can enrol one. After that, the
 * answer is a `vouch` challenge for an enrolled key to sign (`vouchEnrol`),
 * unless `recovery` says the owner gave the recovery key too.
 * @throws VaultError VLT-4006 name taken, VLT-1002 bad name.
 */
export function beginEnrol(ctx, req) {
    const keys = ctx.store().read((tx) => tx.keys());
    const name = req.name === undefined ? nextKeyName(keys.map((k) => k.name)) : checkKeyName(req.name);
    if (keys.some((k) => k.name === name)) {
        throw new VaultError('VLT-4006', `A hardware key named ${quote(name)} is already enrolled.`);
    }
    const userId = randomBytes(16).toString('base64url');
    if (keys.length > 0 && req.recovery !== true) {
        const c = issueChallenge(ctx, { kind: 'vouch', name }, req.origin, { name, userId });
        return { challengeId: c.id, vouch: requestOptions(c, keys) };
    }
    const vouchedBy = req.recovery === true ? VOUCHED_BY_RECOVERY : null;
    const c = issueChallenge(ctx, { kind: 'enrol', vouchedBy }, req.origin, { name, userId });
    return { challengeId: c.id, options: creationOptions(c, keys) };
}
/**
 * An enrolled key vouches for a new one: verifies its assertion over the
 * `vouch` challenge and answers with the new key's creation options, on the
 * same page server, the enrolment's challenge recording who vouched.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase
 *   (both audited as a refused `key_add`).
 */
export async function vouchEnrol(ctx, req, source) {
    const result = ceremonyResult(req.result);
    const c = ctx.store().read((tx) => pendingChallenge(tx, req.challengeId));
    const fail = (reason, voucher, code = 'VLT-4007', consume = true) => refuse(ctx, keyEvent(ctx, 'key_add', source, {
        outcome: code,
        key: c?.name ?? null,
        reason,
        subject: voucher === null ? null : `vouch by ${voucher}`,
    }), code, `Hardware key not enrolled (${reason}): once a key is enrolled, an enrolled key (or the recovery key) must confirm a new one.`, consume && c !== null ? c.id : null);
    if (c === null || c.purpose.kind !== 'vouch')
        return fail('unknown or used challenge', null);
    const purpose = c.purpose;
    const verified = await assertedFor(ctx, c, purpose, result, fail, 'not this enrolment');
    const at = ctx.now();
    const outcome = ctx.commit((tx) => {
        const spent = spendAssertion(tx, c, verified, at, unexpired(purpose, at));
        if (typeof spent === 'string')
            return spent;
        const extra = c.userId === null ? { name: purpose.name } : { name: purpose.name, userId: c.userId };
        const vouchedBy = spent.key.name;
        return issueChallenge(ctx, { kind: 'enrol', vouchedBy }, c.origin, extra, tx);
    });
    if (typeof outcome === 'string')
        return refuseSpent(fail, outcome, verified.key.name);
    const keys = ctx.store().read((tx) => tx.keys());
    return { challengeId: outcome.id, options: creationOptions(outcome, keys) };
}
/**
 * Finishes an enrolment: verifies the attestation and stores the key.
 * @throws VaultError VLT-4007 not accepted (audited), VLT-4006 name or key taken.
 */
export async function finishEnrol(ctx, req, source) {
    const result = ceremonyResult(req.result);
    const c = ctx.store().read((tx) => pendingChallenge(tx, req.challengeId));
    const fail = (reason, key) => refuse(ctx, keyEvent(ctx, 'key_add', source, { outcome: 'VLT-4007', key, reason }), 'VLT-4007', `Hardware key not enrolled (${reason}).`, c === null ? null : c.id);
    if (c === null || c.purpose.kind !== 'enrol')
        return fail('unknown or used challenge', null);
    const purpose = c.purpose;
    const vouchedBy = purpose.vouchedBy ?? null;
    const name = c.name ?? 'key';
    if (result === null)
        return fail('malformed', name);
    if ('error' in result)
        return fail(browserReason(result.error), name);
    if (challengeRefusal(c, purpose, ctx.now()) !== null)
        return fail('expired', name);
    if (!bindingHolds(c.challenge, purpose, c.origin))
        return fail('not this enrolment', name);
    const { verifyRegistration, WebauthnRefused } = await verifier();
    let verified;
    try {
        verified = await verifyRegistration(result.credential, {
            challenge: c.challenge,
            origin: c.origin,
        });
    }
    catch (err) {
        if (err instanceof WebauthnRefused)
            return fail(err.reason, name);
        throw err;
    }
    const now = ctx.now();
    const outcome = ctx.commit((tx) => {
        const live = tx.challenge(c.id);
        if (live === null)
            return 'unknown or used challenge';
        tx.removeChallenge(c.id);
        if (challengeRefusal(live, purpose, now) !== null)
            return 'expired';
        // A key enrolled since this began: the new one now needs a vouch too.
        if (vouchedBy === null && tx.keys().length > 0)
            return 'no enrolled key confirmed it';
        if (tx.key(verified.credentialId) !== null)
            return 'already enrolled';
        if (keyByName(tx, name) !== null)
            return 'name taken';
        const record = {
            id: verified.credentialId,
            name,
            publicKey: verified.publicKeyPem,
            counter: verified.counter,
            created: now,
            lastUsed: null,
        };
        tx.putKey(record);
        const subject = vouchedBy === null ? null : `vouched by ${vouchedBy}`;
        appendAudit(tx, ctx.header(tx), keyEvent(ctx, 'key_add', source, { key: name, subject }));
        return record;
    });
    if (typeof outcome === 'string') {
        const code = outcome === 'already enrolled' || outcome === 'name taken' ? 'VLT-4006' : 'VLT-4007';
        refuse(ctx, keyEvent(ctx, 'key_add', source, { outcome: code, key: name, reason: outcome }), code, `Hardware key not enrolled (${outcome}).`, null);
    }
    return summary(outcome);
}
function lockedAgent(tx, name) {
    return agentByName(tx, name);
}
/**
 * Starts an unlock of agent `name`: a challenge bound to this agent and this
 * lockdown, and the options for `navigator.credentials.get()` naming every
 * enrolled key.
 * @throws VaultError VLT-4002 no such agent, VLT-4004 no key enrolled.
 */
export function beginUnlock(ctx, req) {
    checkCeremonyOrigin(req.origin);
    const { agent, keys } = ctx.store().read((tx) => ({
        agent: lockedAgent(tx, req.name),
        keys: tx.keys(),
    }));
    if (agent.rate.lock === null)
        return { notLocked: true };
    if (keys.length === 0) {
        throw new VaultError('VLT-4004', `No hardware key is enrolled, so nothing can lift ${quote(req.name)}'s lock. ` +
            `To give it a working identity now: \`vault-cli agent revoke ${req.name}\`, then ` +
            `\`vault-cli agent add ${req.name} --scope <entry>...\` (a new token; the lock stays ` +
            'in the audit; docs/hardware-key.md). For next time, enrol a key with `vault-cli key add` (two are better).');
    }
    const c = issueChallenge(ctx, { kind: 'unlock', agentId: agent.id, agentName: agent.name, lockAt: agent.rate.lock.at }, req.origin);
    return {
        challengeId: c.id,
        options: requestOptions(c, keys),
        agent: { id: agent.id, name: agent.name },
    };
}
/** What a challenge for agent `a`'s present lockdown is bound to. */
function lockdownPurpose(a) {
    return { kind: 'unlock', agentId: a.id, agentName: a.name, lockAt: a.rate.lock?.at ?? -1 };
}
/** Why challenge `c` is not one for agent `a`'s present lockdown at `at`, or null when it is. */
function lockdownRefusal(c, a, at) {
    const refusal = challengeRefusal(c, lockdownPurpose(a), at);
    if (refusal !== null)
        return refusal === 'expired' ? 'expired' : 'not this lockdown';
    return bindingHolds(c.challenge, lockdownPurpose(a), c.origin) ? null : 'not this lockdown';
}
/**
 * An unlock's recheck in the transaction that lifts the lock: the agent still
 * there, not revoked, and still under the lockdown the challenge names.
 */
function stillLocked(tx, agentId, at) {
    return (live) => {
        const a = tx.agent(agentId);
        if (a === null || a.revoked !== null || a.rate.lock === null)
            return 'not this lockdown';
        return lockdownRefusal(live, a, at) ?? a;
    };
}
/** How an unlock refuses: audited as `unlock_failed` naming the agent, which stays locked. */
function unlockRefusal(ctx, source, c, agent) {
    return (reason, key, code = 'VLT-4007', consume = true) => refuse(ctx, keyEvent(ctx, 'unlock_failed', source, { outcome: code, key, reason, subject: agent }), code, code === 'VLT-4008'
        ? `Hardware key ${quote(key ?? '')} signed with a counter that did not increase (possible clone); the agent stays locked.`
        : `Hardware key not accepted (${reason}); the agent stays locked.`, consume && c !== null ? c.id : null);
}
/**
 * Finishes an unlock: verifies the assertion against the challenge, the
 * page's origin and the enrolled key, and lifts the lock. Refusals are
 * audited as `unlock_failed` and leave the agent locked.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase (possible clone).
 */
export async function finishUnlock(ctx, req, source) {
    const result = ceremonyResult(req.result);
    const found = ctx.store().read((tx) => {
        const c = pendingChallenge(tx, req.challengeId);
        if (c === null || c.purpose.kind !== 'unlock')
            return null;
        return { c, agent: tx.agent(c.purpose.agentId) };
    });
    const fail = unlockRefusal(ctx, source, found?.c ?? null, found?.agent?.name ?? null);
    if (found === null || found.agent === null)
        return fail('unknown or used challenge', null);
    const { c, agent } = found;
    if (c.purpose.kind !== 'unlock')
        return fail('unknown or used challenge', null);
    const { agentId } = c.purpose;
    if (result === null)
        return fail('malformed', null);
    if ('error' in result)
        return fail(browserReason(result.error), null);
    const early = lockdownRefusal(c, agent, ctx.now());
    if (early !== null)
        return fail(early, null);
    const verified = await verifiedAssertion(ctx, c, result, fail);
    // Everything again inside the one transaction that lifts the lock: another
    // request may have used the challenge, removed the key or moved the counter.
    const at = ctx.now();
    const outcome = ctx.commit((tx) => {
        const spent = spendAssertion(tx, c, verified, at, stillLocked(tx, agentId, at));
        if (typeof spent === 'string')
            return spent;
        const a = spent.standing;
        tx.putAgent({ ...a, rate: unlock(a.rate) });
        const event = keyEvent(ctx, 'unlocked', source, { key: spent.key.name, subject: a.name });
        appendAudit(tx, ctx.header(tx), event);
        return null;
    });
    if (outcome !== null)
        return refuseSpent(fail, outcome, verified.key.name);
    return { name: agent.name };
}
/** Whether any hardware key is enrolled. */
export function keysEnrolled(ctx) {
    return ctx.store().read((tx) => tx.keys().length > 0);
}
