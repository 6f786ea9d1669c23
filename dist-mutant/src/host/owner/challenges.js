/**
 * The host's half of every hardware-key ceremony: challenges issued (random,
 * bound to what they are for, stored with their expiry, single use), found
 * again, answered by an assertion verified against an enrolled key, and spent
 * in the one write transaction that moves the key's counter. Every refusal is
 * committed with its audit record before it is thrown.
 */
import { OWNER_ACTOR } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { CHALLENGE_NONCE_BYTES, CHALLENGE_TTL_MS, MAX_PENDING_CHALLENGES, RP_ID, challengeBinding, challengeRefusal, checkCeremonyOrigin, counterAdvanced, } from '../../core/webauthn.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBytes } from '../../crypto/aead.js';
import { appendAudit } from '../audit/log.js';
/** The verifier, loaded on first use: fido2-lib is heavy and most hosts never need it. */
export async function verifier() {
    return import('../../webauthn/verify.js');
}
export function keyEvent(ctx, action, source, more) {
    return {
        at: ctx.now(),
        action,
        actor: OWNER_ACTOR,
        source,
        outcome: more.outcome ?? 'ok',
        entryId: null,
        // The key's name and the refusal's reason, sealed to the owner like entry names.
        entry: more.key ?? null,
        field: more.reason ?? null,
        host: null,
        subject: more.subject ?? null,
    };
}
/** What `issueChallenge` makes an id of: 16 random bytes, hex. */
const CHALLENGE_ID = /^[0-9a-f]{32}$/;
/**
 * The pending challenge `id` names, or null. An id we never issue is not looked
 * up: the store's keys are bounded (a 1 MB id failed inside LMDB as an internal
 * error instead of an audited refusal).
 */
export function pendingChallenge(tx, id) {
    return CHALLENGE_ID.test(id) ? tx.challenge(id) : null;
}
const bindingHash = (purpose, origin) => createHash('sha256').update(challengeBinding(purpose, origin)).digest();
/** A challenge the key will sign: fresh random bytes, then the hash of what it is for. */
function boundChallenge(purpose, origin) {
    return Buffer.concat([randomBytes(CHALLENGE_NONCE_BYTES), bindingHash(purpose, origin)]).toString('base64url');
}
/**
 * Whether `challenge` (as signed) names `purpose` at `origin`, recomputed from
 * the live records: a stored challenge that says another agent, lockdown or
 * origin than the one at hand is not this one's.
 */
export function bindingHolds(challenge, purpose, origin) {
    const bytes = Buffer.from(challenge, 'base64url');
    const want = bindingHash(purpose, origin);
    const got = bytes.subarray(CHALLENGE_NONCE_BYTES);
    return got.length === want.length && timingSafeEqual(got, want);
}
/** Stores a fresh challenge, dropping expired ones and the oldest beyond the cap. */
export function issueChallenge(ctx, purpose, origin, extra = {}, tx) {
    checkCeremonyOrigin(origin);
    const now = ctx.now();
    const record = {
        id: randomBytes(16).toString('hex'),
        challenge: boundChallenge(purpose, origin),
        purpose,
        origin,
        userId: extra.userId ?? null,
        name: extra.name ?? null,
        created: now,
        expires: now + CHALLENGE_TTL_MS,
    };
    const store = (tx) => {
        const live = tx
            .challenges()
            .filter((c) => {
            if (now < c.expires)
                return true;
            tx.removeChallenge(c.id);
            return false;
        })
            .sort((a, b) => a.created - b.created);
        for (const c of live.slice(0, Math.max(0, live.length - MAX_PENDING_CHALLENGES + 1))) {
            tx.removeChallenge(c.id);
        }
        tx.putChallenge(record);
    };
    if (tx === undefined)
        ctx.commit(store);
    else
        store(tx);
    return record;
}
/** The options for `navigator.credentials.get()` answering challenge `c` with any enrolled key. */
export function requestOptions(c, keys) {
    return {
        rpId: RP_ID,
        challenge: c.challenge,
        timeout: CHALLENGE_TTL_MS,
        userVerification: 'discouraged',
        allowCredentials: keys.map((k) => ({ type: 'public-key', id: k.id })),
    };
}
/** A refusal committed with its audit record (and the challenge consumed), thrown afterwards. */
export function refuse(ctx, event, code, message, challengeId) {
    ctx.commit((tx) => {
        if (challengeId !== null)
            tx.removeChallenge(challengeId);
        appendAudit(tx, ctx.header(tx), event);
    });
    throw new VaultError(code, message);
}
/**
 * The page's result, or null when it holds neither a credential nor an error.
 * Whatever was posted to the page arrives here, so a malformed result is a
 * refused attempt like any other: audited, its challenge used up.
 */
export function ceremonyResult(raw) {
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
        const o = raw;
        if (typeof o.error === 'string')
            return { error: o.error.slice(0, 64) };
        if (o.credential !== undefined)
            return { credential: o.credential };
    }
    return null;
}
/** The browser's own reason, when it gave up (NotAllowedError: cancelled or timed out). */
export function browserReason(error) {
    return /^[A-Za-z]{1,40}$/.test(error) ? `browser: ${error}` : 'browser';
}
/**
 * Verifies an assertion over challenge `c` (its origin, the enrolled key it
 * names, presence, signature, counter), or says why not. Nothing is written.
 */
async function checkAssertion(ctx, c, result) {
    const no = (reason, key = null) => ({
        ok: false,
        reason,
        key,
    });
    if (result === null)
        return no('malformed');
    if ('error' in result)
        return no(browserReason(result.error));
    const { assertionCredentialId, verifyAssertion, WebauthnRefused } = await verifier();
    let credentialId;
    try {
        credentialId = assertionCredentialId(result.credential);
    }
    catch (err) {
        if (err instanceof WebauthnRefused)
            return no(err.reason);
        throw err;
    }
    const key = ctx.store().read((tx) => tx.key(credentialId));
    if (key === null)
        return no('not an enrolled key');
    try {
        const { counter } = await verifyAssertion(result.credential, {
            challenge: c.challenge,
            origin: c.origin,
            publicKeyPem: key.publicKey,
            prevCounter: key.counter,
        });
        return { ok: true, key, counter };
    }
    catch (err) {
        if (err instanceof WebauthnRefused)
            return no(err.reason, key.name);
        throw err;
    }
}
/**
 * The assertion over challenge `c`, verified; otherwise refused through `fail`
 * with the challenge used up.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase.
 */
export async function verifiedAssertion(ctx, c, result, fail) {
    const checked = await checkAssertion(ctx, c, result);
    if (checked.ok)
        return checked;
    return checked.reason === 'counter'
        ? fail('counter', checked.key, 'VLT-4008')
        : fail(checked.reason, checked.key);
}
/**
 * The assertion over pending challenge `c` for `wanted`, verified; refused
 * through `fail` when `c` has expired or is bound to something else
 * (`notThis` is the reason then), or when the assertion is not accepted.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase.
 */
export async function assertedFor(ctx, c, wanted, result, fail, notThis) {
    const early = challengeRefusal(c, wanted, ctx.now());
    if (early !== null)
        return fail(early === 'expired' ? 'expired' : notThis, null);
    if (!bindingHolds(c.challenge, wanted, c.origin))
        return fail(notThis, null);
    return verifiedAssertion(ctx, c, result, fail);
}
/**
 * Spends challenge `c` on assertion `verified` in write transaction `tx`,
 * checking again all another request may have changed since it was verified:
 * the challenge still pending (removed here whatever follows, so it is used
 * once), still standing as `recheck` judges it against the records of `tx`
 * (what stands, or a refusal's reason), the key still enrolled and its counter
 * still behind the one signed. Then the key's counter and last use move to `at`.
 * @returns the key as stored and what `recheck` found standing, or a refusal's
 *   reason ('counter' when the counter did not advance).
 */
export function spendAssertion(tx, c, verified, at, recheck) {
    const live = tx.challenge(c.id);
    if (live === null)
        return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    const standing = recheck(live);
    if (typeof standing === 'string')
        return standing;
    const k = tx.key(verified.key.id);
    if (k === null)
        return 'not an enrolled key';
    if (!counterAdvanced(k.counter, verified.counter))
        return 'counter';
    const key = { ...k, counter: verified.counter, lastUsed: at };
    tx.putKey(key);
    return { key, standing };
}
/**
 * `spendAssertion`'s recheck for a challenge whose purpose no later write can
 * change (a vouch, a confirmation): still for `wanted` and not expired.
 */
export function unexpired(wanted, at) {
    return (live) => (challengeRefusal(live, wanted, at) === null ? live : 'expired');
}
/**
 * A spend's refusal (`spendAssertion`'s reason) through `fail`, the challenge
 * already used up.
 * @throws VaultError VLT-4008 for 'counter', VLT-4007 for the rest.
 */
export function refuseSpent(fail, reason, key) {
    return fail(reason, key, reason === 'counter' ? 'VLT-4008' : 'VLT-4007', false);
}
