/**
 * Hardware keys in the host: enrolment, and lifting a lockdown with an
 * assertion. The host issues every challenge (random, stored with its expiry
 * and purpose, single use) and verifies every answer; the CLI only serves the
 * page and relays. Nothing but `finishUnlock` lifts a lock, and it does so in
 * the same write transaction that consumes the challenge, moves the key's
 * counter and appends the audit record. Every refusal is audited too.
 */
import { OWNER_ACTOR, type AuditEvent } from '../core/audit.js';
import { VaultError, quote, type ErrorCode } from '../core/errors.js';
import { unlock } from '../core/policy.js';
import {
  CHALLENGE_BYTES,
  CHALLENGE_TTL_MS,
  MAX_PENDING_CHALLENGES,
  RP_ID,
  RP_NAME,
  challengeRefusal,
  checkCeremonyOrigin,
  checkKeyName,
  counterAdvanced,
  nextKeyName,
  type CeremonyResult,
  type ChallengePurpose,
  type CreationOptionsJSON,
  type KeySummary,
  type RequestOptionsJSON,
} from '../core/webauthn.js';
import { randomBytes } from '../crypto/aead.js';
import type { AgentRecord, ChallengeRecord, KeyRecord, Tx } from '../store/store.js';
import { appendAudit } from './audit-log.js';
import { agentByName } from './agent-names.js';
import type { HostContext } from './context.js';
import type * as Verify from '../webauthn/verify.js';

/** The verifier, loaded on first use: fido2-lib is heavy and most hosts never need it. */
async function verifier(): Promise<typeof Verify> {
  return import('../webauthn/verify.js');
}

function keyEvent(
  ctx: HostContext,
  action: AuditEvent['action'],
  source: string,
  more: { outcome?: ErrorCode; key?: string | null; reason?: string; subject?: string | null },
): AuditEvent {
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
function pendingChallenge(tx: Tx, id: string): ChallengeRecord | null {
  return CHALLENGE_ID.test(id) ? tx.challenge(id) : null;
}

/** Stores a fresh challenge, dropping expired ones and the oldest beyond the cap. */
function issueChallenge(
  ctx: HostContext,
  purpose: ChallengePurpose,
  origin: string,
  extra: { name?: string; userId?: string } = {},
): ChallengeRecord {
  const now = ctx.now();
  const record: ChallengeRecord = {
    id: randomBytes(16).toString('hex'),
    challenge: randomBytes(CHALLENGE_BYTES).toString('base64url'),
    purpose,
    origin: checkCeremonyOrigin(origin),
    userId: extra.userId ?? null,
    name: extra.name ?? null,
    created: now,
    expires: now + CHALLENGE_TTL_MS,
  };
  ctx.commit((tx) => {
    const live = tx
      .challenges()
      .filter((c) => {
        if (now < c.expires) return true;
        tx.removeChallenge(c.id);
        return false;
      })
      .sort((a, b) => a.created - b.created);
    for (const c of live.slice(0, Math.max(0, live.length - MAX_PENDING_CHALLENGES + 1))) {
      tx.removeChallenge(c.id);
    }
    tx.putChallenge(record);
  });
  return record;
}

function summary(k: KeyRecord): KeySummary {
  return {
    name: k.name,
    credentialId: k.id,
    counter: k.counter,
    created: k.created,
    lastUsed: k.lastUsed,
  };
}

export function listKeys(ctx: HostContext): KeySummary[] {
  return ctx
    .store()
    .read((tx) => tx.keys())
    .map(summary)
    .sort((a, b) => a.created - b.created || a.name.localeCompare(b.name));
}

function keyByName(tx: Tx, name: string): KeyRecord | null {
  return tx.keys().find((k) => k.name === name) ?? null;
}

/** @throws VaultError VLT-4005 when no key has this name. */
export function removeKey(ctx: HostContext, name: string, source: string): void {
  ctx.commit((tx) => {
    const k = keyByName(tx, name);
    if (k === null) throw new VaultError('VLT-4005', `No hardware key named ${quote(name)}.`);
    tx.removeKey(k.id);
    appendAudit(tx, ctx.header(tx), keyEvent(ctx, 'key_rm', source, { key: name }));
  });
}

/**
 * Starts an enrolment: the options for `navigator.credentials.create()` on the page at `origin`.
 * @throws VaultError VLT-4006 name taken, VLT-1002 bad name.
 */
export function beginEnrol(
  ctx: HostContext,
  req: { name?: string | undefined; origin: string },
): { challengeId: string; options: CreationOptionsJSON } {
  const keys = ctx.store().read((tx) => tx.keys());
  const name =
    req.name === undefined ? nextKeyName(keys.map((k) => k.name)) : checkKeyName(req.name);
  if (keys.some((k) => k.name === name)) {
    throw new VaultError('VLT-4006', `A hardware key named ${quote(name)} is already enrolled.`);
  }
  const userId = randomBytes(16).toString('base64url');
  const c = issueChallenge(ctx, { kind: 'enrol' }, req.origin, { name, userId });
  return {
    challengeId: c.id,
    options: {
      rp: { id: RP_ID, name: RP_NAME },
      user: { id: userId, name: `vault-cli ${name}`, displayName: `vault-cli owner (${name})` },
      challenge: c.challenge,
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      timeout: CHALLENGE_TTL_MS,
      attestation: 'none',
      excludeCredentials: keys.map((k) => ({ type: 'public-key', id: k.id })),
      authenticatorSelection: { userVerification: 'discouraged', residentKey: 'discouraged' },
    },
  };
}

/** A refusal committed with its audit record (and the challenge consumed), thrown afterwards. */
function refuse(
  ctx: HostContext,
  event: AuditEvent,
  code: ErrorCode,
  message: string,
  challengeId: string | null,
): never {
  ctx.commit((tx) => {
    if (challengeId !== null) tx.removeChallenge(challengeId);
    appendAudit(tx, ctx.header(tx), event);
  });
  throw new VaultError(code, message);
}

/**
 * The page's result, or null when it holds neither a credential nor an error.
 * Whatever was posted to the page arrives here, so a malformed result is a
 * refused attempt like any other: audited, its challenge used up.
 */
function ceremonyResult(raw: unknown): CeremonyResult<unknown> | null {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const o = raw as Record<string, unknown>;
    if (typeof o.error === 'string') return { error: o.error.slice(0, 64) };
    if (o.credential !== undefined) return { credential: o.credential };
  }
  return null;
}

/** The browser's own reason, when it gave up (NotAllowedError: cancelled or timed out). */
function browserReason(error: string): string {
  return /^[A-Za-z]{1,40}$/.test(error) ? `browser: ${error}` : 'browser';
}

/**
 * Finishes an enrolment: verifies the attestation and stores the key.
 * @throws VaultError VLT-4007 not accepted (audited), VLT-4006 name or key taken.
 */
export async function finishEnrol(
  ctx: HostContext,
  req: { challengeId: string; result: unknown },
  source: string,
): Promise<KeySummary> {
  const result = ceremonyResult(req.result);
  const c = ctx.store().read((tx) => pendingChallenge(tx, req.challengeId));
  const fail = (reason: string, key: string | null): never =>
    refuse(
      ctx,
      keyEvent(ctx, 'key_add', source, { outcome: 'VLT-4007', key, reason }),
      'VLT-4007',
      `Hardware key not enrolled (${reason}).`,
      c === null ? null : c.id,
    );
  if (c === null || c.purpose.kind !== 'enrol') return fail('unknown or used challenge', null);
  const name = c.name ?? 'key';
  if (result === null) return fail('malformed', name);
  if ('error' in result) return fail(browserReason(result.error), name);
  if (challengeRefusal(c, { kind: 'enrol' }, ctx.now()) !== null) return fail('expired', name);
  const { verifyRegistration, WebauthnRefused } = await verifier();
  let verified;
  try {
    verified = await verifyRegistration(result.credential, {
      challenge: c.challenge,
      origin: c.origin,
    });
  } catch (err) {
    if (err instanceof WebauthnRefused) return fail(err.reason, name);
    throw err;
  }
  const now = ctx.now();
  const outcome = ctx.commit((tx): KeyRecord | string => {
    const live = tx.challenge(c.id);
    if (live === null) return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    if (challengeRefusal(live, { kind: 'enrol' }, now) !== null) return 'expired';
    if (tx.key(verified.credentialId) !== null) return 'already enrolled';
    if (keyByName(tx, name) !== null) return 'name taken';
    const record: KeyRecord = {
      id: verified.credentialId,
      name,
      publicKey: verified.publicKeyPem,
      counter: verified.counter,
      created: now,
      lastUsed: null,
    };
    tx.putKey(record);
    appendAudit(tx, ctx.header(tx), keyEvent(ctx, 'key_add', source, { key: name }));
    return record;
  });
  if (typeof outcome === 'string') {
    const code =
      outcome === 'already enrolled' || outcome === 'name taken' ? 'VLT-4006' : 'VLT-4007';
    refuse(
      ctx,
      keyEvent(ctx, 'key_add', source, { outcome: code, key: name, reason: outcome }),
      code,
      `Hardware key not enrolled (${outcome}).`,
      null,
    );
  }
  return summary(outcome as KeyRecord);
}

function lockedAgent(tx: Tx, name: string): AgentRecord {
  return agentByName(tx, name);
}

/**
 * Starts an unlock of agent `name`: a challenge bound to this agent and this
 * lockdown, and the options for `navigator.credentials.get()` naming every
 * enrolled key.
 * @throws VaultError VLT-4002 no such agent, VLT-4004 no key enrolled.
 */
export function beginUnlock(
  ctx: HostContext,
  req: { name: string; origin: string },
): { challengeId: string; options: RequestOptionsJSON } | { notLocked: true } {
  checkCeremonyOrigin(req.origin);
  const { agent, keys } = ctx.store().read((tx) => ({
    agent: lockedAgent(tx, req.name),
    keys: tx.keys(),
  }));
  if (agent.rate.lock === null) return { notLocked: true };
  if (keys.length === 0) {
    throw new VaultError(
      'VLT-4004',
      `No hardware key is enrolled, and only one can unlock ${quote(req.name)}: ` +
        'enrol one with `vault-cli key add` (two are better), then run this again.',
    );
  }
  const c = issueChallenge(
    ctx,
    { kind: 'unlock', agentId: agent.id, lockAt: agent.rate.lock.at },
    req.origin,
  );
  return {
    challengeId: c.id,
    options: {
      rpId: RP_ID,
      challenge: c.challenge,
      timeout: CHALLENGE_TTL_MS,
      userVerification: 'discouraged',
      allowCredentials: keys.map((k) => ({ type: 'public-key', id: k.id })),
    },
  };
}

/**
 * Finishes an unlock: verifies the assertion against the challenge, the
 * page's origin and the enrolled key, and lifts the lock. Refusals are
 * audited as `unlock_failed` and leave the agent locked.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase (possible clone).
 */
export async function finishUnlock(
  ctx: HostContext,
  req: { challengeId: string; result: unknown },
  source: string,
): Promise<{ name: string }> {
  const result = ceremonyResult(req.result);
  const found = ctx.store().read((tx) => {
    const c = pendingChallenge(tx, req.challengeId);
    if (c === null || c.purpose.kind !== 'unlock') return null;
    return { c, agent: tx.agent(c.purpose.agentId) };
  });
  const fail = (
    reason: string,
    key: string | null,
    code: 'VLT-4007' | 'VLT-4008' = 'VLT-4007',
    consume = true,
  ): never =>
    refuse(
      ctx,
      keyEvent(ctx, 'unlock_failed', source, {
        outcome: code,
        key,
        reason,
        subject: found?.agent?.name ?? null,
      }),
      code,
      code === 'VLT-4008'
        ? `Hardware key ${quote(key ?? '')} signed with a counter that did not increase (possible clone); the agent stays locked.`
        : `Hardware key not accepted (${reason}); the agent stays locked.`,
      consume && found !== null ? found.c.id : null,
    );
  if (found === null || found.agent === null) return fail('unknown or used challenge', null);
  const { c, agent } = found;
  if (c.purpose.kind !== 'unlock') return fail('unknown or used challenge', null);
  const purpose = c.purpose;
  if (result === null) return fail('malformed', null);
  if ('error' in result) return fail(browserReason(result.error), null);
  const now = ctx.now();
  const early = challengeRefusal(
    c,
    { kind: 'unlock', agentId: agent.id, lockAt: agent.rate.lock?.at ?? -1 },
    now,
  );
  if (early !== null) return fail(early === 'expired' ? 'expired' : 'not this lockdown', null);

  const { assertionCredentialId, verifyAssertion, WebauthnRefused } = await verifier();
  let credentialId: string;
  try {
    credentialId = assertionCredentialId(result.credential);
  } catch (err) {
    if (err instanceof WebauthnRefused) return fail(err.reason, null);
    throw err;
  }
  const key = ctx.store().read((tx) => tx.key(credentialId));
  if (key === null) return fail('not an enrolled key', null);
  let counter: number;
  try {
    ({ counter } = await verifyAssertion(result.credential, {
      challenge: c.challenge,
      origin: c.origin,
      publicKeyPem: key.publicKey,
      prevCounter: key.counter,
    }));
  } catch (err) {
    if (err instanceof WebauthnRefused) {
      return err.reason === 'counter'
        ? fail('counter', key.name, 'VLT-4008')
        : fail(err.reason, key.name);
    }
    throw err;
  }

  // Everything again inside the one transaction that lifts the lock: another
  // request may have used the challenge, removed the key or moved the counter.
  const at = ctx.now();
  const outcome = ctx.commit((tx): string | null => {
    const live = tx.challenge(c.id);
    if (live === null) return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    const a = tx.agent(purpose.agentId);
    if (a === null || a.revoked !== null || a.rate.lock === null) return 'not this lockdown';
    const refusal = challengeRefusal(
      live,
      { kind: 'unlock', agentId: a.id, lockAt: a.rate.lock.at },
      at,
    );
    if (refusal !== null) return refusal === 'expired' ? 'expired' : 'not this lockdown';
    const k = tx.key(credentialId);
    if (k === null) return 'not an enrolled key';
    if (!counterAdvanced(k.counter, counter)) return 'counter';
    tx.putAgent({ ...a, rate: unlock(a.rate) });
    tx.putKey({ ...k, counter, lastUsed: at });
    appendAudit(
      tx,
      ctx.header(tx),
      keyEvent(ctx, 'unlocked', source, { key: k.name, subject: a.name }),
    );
    return null;
  });
  if (outcome !== null) {
    return outcome === 'counter'
      ? fail('counter', key.name, 'VLT-4008', false)
      : fail(outcome, key.name, 'VLT-4007', false);
  }
  return { name: agent.name };
}
