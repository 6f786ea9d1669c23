/**
 * Hardware-key ceremonies as data: the relying party, how long a challenge
 * lives, what a challenge is bound to, and the JSON shapes that travel
 * between the browser, the CLI and the host (every binary field base64url).
 * The host decides with `challengeRefusal`; nothing here does I/O.
 */
import { VaultError, quote } from './errors.js';
/** An IP address is not a valid RP id; `localhost` is, over plain http. */
export const RP_ID = 'localhost';
export const RP_NAME = 'vault-cli';
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Pending challenges kept at once; the oldest give way (the owner may start ceremonies and drop them). */
export const MAX_PENDING_CHALLENGES = 32;
/** Who vouches for an enrolment made with the recovery key (a key's name cannot contain spaces). */
export const VOUCHED_BY_RECOVERY = 'recovery key';
/** Random bytes at the head of every challenge; the rest is the binding's SHA-256. */
export const CHALLENGE_NONCE_BYTES = 16;
/**
 * The text a challenge is bound to: the operation and what it acts on, so the
 * bytes the key signs name them (a challenge is nonce || SHA-256 of this) and
 * an assertion made to unlock one agent cannot unlock another, even if the
 * stored record were swapped. The host recomputes it from the live records.
 */
export function challengeBinding(purpose, origin) {
    const parts = ['vault-cli/webauthn/v1', purpose.kind, origin];
    if (purpose.kind === 'unlock')
        parts.push(purpose.agentId, purpose.agentName, purpose.lockAt);
    if (purpose.kind === 'vouch')
        parts.push(purpose.name);
    if (purpose.kind === 'enrol')
        parts.push(purpose.vouchedBy ?? '');
    if (purpose.kind === 'confirm')
        parts.push(purpose.op, purpose.request);
    return JSON.stringify(parts);
}
/** Why a stored challenge does not fit a request, or null when it does. */
export function challengeRefusal(stored, wanted, now) {
    if (now >= stored.expires)
        return 'expired';
    const p = stored.purpose;
    if (p.kind !== wanted.kind)
        return 'wrong purpose';
    if (p.kind === 'unlock' && wanted.kind === 'unlock') {
        if (p.agentId !== wanted.agentId || p.lockAt !== wanted.lockAt)
            return 'wrong purpose';
        if (p.agentName !== wanted.agentName)
            return 'wrong purpose';
    }
    if (p.kind === 'confirm' && wanted.kind === 'confirm') {
        if (p.op !== wanted.op || p.request !== wanted.request)
            return 'wrong purpose';
    }
    return null;
}
/**
 * The origin of a one-shot ceremony page: `http://localhost:<port>`, nothing else.
 * @throws VaultError VLT-1001 for anything else.
 */
export function checkCeremonyOrigin(origin) {
    const m = /^http:\/\/localhost:([0-9]{1,5})$/.exec(origin);
    const port = Number(m?.[1]);
    if (m === null || port < 1 || port > 65535) {
        throw new VaultError('VLT-1001', 'Bad request: origin must be http://localhost:<port>.');
    }
    return origin;
}
const KEY_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** @throws VaultError VLT-1002 unless 1-64 of a-z 0-9 _ -. */
export function checkKeyName(name) {
    if (!KEY_NAME.test(name)) {
        throw new VaultError('VLT-1002', `Key names are 1-64 of a-z 0-9 _ - (got ${quote(name)}).`);
    }
    return name;
}
/** `key-1`, `key-2`, ...: the first not taken. */
export function nextKeyName(taken) {
    const used = new Set(taken);
    for (let i = 1;; i++)
        if (!used.has(`key-${i}`))
            return `key-${i}`;
}
/** Whether a signature counter moved forward; 0 then 0 is a key without a counter. */
export function counterAdvanced(prev, next) {
    return next > prev || (prev === 0 && next === 0);
}
