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
 */
import { OWNER_ACTOR, type AuditEvent } from '../../core/audit.js';
import { VaultError, quote, type ErrorCode } from '../../core/errors.js';
import { unlock } from '../../core/policy.js';
import {
  CHALLENGE_NONCE_BYTES,
  CHALLENGE_TTL_MS,
  MAX_PENDING_CHALLENGES,
  RP_ID,
  RP_NAME,
  VOUCHED_BY_RECOVERY,
  challengeBinding,
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
  type UnlockSubject,
} from '../../core/webauthn.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { canon } from '../../core/canon.js';
import { OWNER_SECRET_FIELDS, type Op } from '../../core/protocol.js';
import { REQUESTS } from '../../core/requests.js';
import { randomBytes } from '../../crypto/aead.js';
import type { AgentRecord, ChallengeRecord, KeyRecord } from '../../store/schema.js';
import type { Tx } from '../../store/tx.js';
import { appendAudit } from '../audit/log.js';
import { agentByName } from '../agent/names.js';
import type { HostContext } from '../context.js';
import type * as Verify from '../../webauthn/verify.js';

/** The verifier, loaded on first use: fido2-lib is heavy and most hosts never need it. */
async function verifier(): Promise<typeof Verify> {
  return import('../../webauthn/verify.js');
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

const bindingHash = (purpose: ChallengePurpose, origin: string): Buffer =>
  createHash('sha256').update(challengeBinding(purpose, origin)).digest();

/** A challenge the key will sign: fresh random bytes, then the hash of what it is for. */
function boundChallenge(purpose: ChallengePurpose, origin: string): string {
  return Buffer.concat([randomBytes(CHALLENGE_NONCE_BYTES), bindingHash(purpose, origin)]).toString(
    'base64url',
  );
}

/**
 * Whether `challenge` (as signed) names `purpose` at `origin`, recomputed from
 * the live records: a stored challenge that says another agent, lockdown or
 * origin than the one at hand is not this one's.
 */
function bindingHolds(challenge: string, purpose: ChallengePurpose, origin: string): boolean {
  const bytes = Buffer.from(challenge, 'base64url');
  const want = bindingHash(purpose, origin);
  const got = bytes.subarray(CHALLENGE_NONCE_BYTES);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Stores a fresh challenge, dropping expired ones and the oldest beyond the cap. */
function issueChallenge(
  ctx: HostContext,
  purpose: ChallengePurpose,
  origin: string,
  extra: { name?: string; userId?: string } = {},
  tx?: Tx,
): ChallengeRecord {
  checkCeremonyOrigin(origin);
  const now = ctx.now();
  const record: ChallengeRecord = {
    id: randomBytes(16).toString('hex'),
    challenge: boundChallenge(purpose, origin),
    purpose,
    origin,
    userId: extra.userId ?? null,
    name: extra.name ?? null,
    created: now,
    expires: now + CHALLENGE_TTL_MS,
  };
  const store = (tx: Tx) => {
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
  };
  if (tx === undefined) ctx.commit(store);
  else store(tx);
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

/** The options for `navigator.credentials.create()` answering enrolment challenge `c`. */
function creationOptions(c: ChallengeRecord, keys: readonly KeyRecord[]): CreationOptionsJSON {
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

/** The options for `navigator.credentials.get()` answering challenge `c` with any enrolled key. */
function requestOptions(c: ChallengeRecord, keys: readonly KeyRecord[]): RequestOptionsJSON {
  return {
    rpId: RP_ID,
    challenge: c.challenge,
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'discouraged',
    allowCredentials: keys.map((k) => ({ type: 'public-key', id: k.id })),
  };
}

/** An enrolment's first page: the new key's creation, or first an enrolled key's vouch. */
export type EnrolStart =
  | { challengeId: string; options: CreationOptionsJSON }
  | { challengeId: string; vouch: RequestOptionsJSON };

/**
 * Starts an enrolment on the page at `origin` (the owner's passphrase was
 * checked before this). The first key needs nothing more: whoever has the
 * passphrase before any key is enrolled can enrol one. After that, the
 * answer is a `vouch` challenge for an enrolled key to sign (`vouchEnrol`),
 * unless `recovery` says the owner gave the recovery key too.
 * @throws VaultError VLT-4006 name taken, VLT-1002 bad name.
 */
export function beginEnrol(
  ctx: HostContext,
  req: { name?: string | undefined; origin: string; recovery?: boolean },
): EnrolStart {
  const keys = ctx.store().read((tx) => tx.keys());
  const name =
    req.name === undefined ? nextKeyName(keys.map((k) => k.name)) : checkKeyName(req.name);
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

type AssertionCheck =
  | { readonly ok: true; readonly key: KeyRecord; readonly counter: number }
  | { readonly ok: false; readonly reason: string; readonly key: string | null };

/**
 * Verifies an assertion over challenge `c` (its origin, the enrolled key it
 * names, presence, signature, counter), or says why not. Nothing is written.
 */
async function checkAssertion(
  ctx: HostContext,
  c: ChallengeRecord,
  result: CeremonyResult<unknown> | null,
): Promise<AssertionCheck> {
  const no = (reason: string, key: string | null = null): AssertionCheck => ({
    ok: false,
    reason,
    key,
  });
  if (result === null) return no('malformed');
  if ('error' in result) return no(browserReason(result.error));
  const { assertionCredentialId, verifyAssertion, WebauthnRefused } = await verifier();
  let credentialId: string;
  try {
    credentialId = assertionCredentialId(result.credential);
  } catch (err) {
    if (err instanceof WebauthnRefused) return no(err.reason);
    throw err;
  }
  const key = ctx.store().read((tx) => tx.key(credentialId));
  if (key === null) return no('not an enrolled key');
  try {
    const { counter } = await verifyAssertion(result.credential, {
      challenge: c.challenge,
      origin: c.origin,
      publicKeyPem: key.publicKey,
      prevCounter: key.counter,
    });
    return { ok: true, key, counter };
  } catch (err) {
    if (err instanceof WebauthnRefused) return no(err.reason, key.name);
    throw err;
  }
}

/**
 * An enrolled key vouches for a new one: verifies its assertion over the
 * `vouch` challenge and answers with the new key's creation options, on the
 * same page server, the enrolment's challenge recording who vouched.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase
 *   (both audited as a refused `key_add`).
 */
export async function vouchEnrol(
  ctx: HostContext,
  req: { challengeId: string; result: unknown },
  source: string,
): Promise<{ challengeId: string; options: CreationOptionsJSON }> {
  const result = ceremonyResult(req.result);
  const c = ctx.store().read((tx) => pendingChallenge(tx, req.challengeId));
  const fail = (
    reason: string,
    voucher: string | null,
    code: 'VLT-4007' | 'VLT-4008' = 'VLT-4007',
    consume = true,
  ): never =>
    refuse(
      ctx,
      keyEvent(ctx, 'key_add', source, {
        outcome: code,
        key: c?.name ?? null,
        reason,
        subject: voucher === null ? null : `vouch by ${voucher}`,
      }),
      code,
      `Hardware key not enrolled (${reason}): once a key is enrolled, an enrolled key (or the recovery key) must confirm a new one.`,
      consume && c !== null ? c.id : null,
    );
  if (c === null || c.purpose.kind !== 'vouch') return fail('unknown or used challenge', null);
  const purpose = c.purpose;
  if (challengeRefusal(c, purpose, ctx.now()) !== null) return fail('expired', null);
  if (!bindingHolds(c.challenge, purpose, c.origin)) return fail('not this enrolment', null);
  const checked = await checkAssertion(ctx, c, result);
  if (!checked.ok) {
    return checked.reason === 'counter'
      ? fail('counter', checked.key, 'VLT-4008')
      : fail(checked.reason, checked.key);
  }
  const at = ctx.now();
  const outcome = ctx.commit((tx): ChallengeRecord | string => {
    const live = tx.challenge(c.id);
    if (live === null) return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    if (challengeRefusal(live, purpose, at) !== null) return 'expired';
    const k = tx.key(checked.key.id);
    if (k === null) return 'not an enrolled key';
    if (!counterAdvanced(k.counter, checked.counter)) return 'counter';
    tx.putKey({ ...k, counter: checked.counter, lastUsed: at });
    const extra =
      c.userId === null ? { name: purpose.name } : { name: purpose.name, userId: c.userId };
    return issueChallenge(ctx, { kind: 'enrol', vouchedBy: k.name }, c.origin, extra, tx);
  });
  if (typeof outcome === 'string') {
    return fail(outcome, checked.key.name, outcome === 'counter' ? 'VLT-4008' : 'VLT-4007', false);
  }
  const keys = ctx.store().read((tx) => tx.keys());
  return { challengeId: outcome.id, options: creationOptions(outcome, keys) };
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
  const purpose = c.purpose;
  const vouchedBy = purpose.vouchedBy ?? null;
  const name = c.name ?? 'key';
  if (result === null) return fail('malformed', name);
  if ('error' in result) return fail(browserReason(result.error), name);
  if (challengeRefusal(c, purpose, ctx.now()) !== null) return fail('expired', name);
  if (!bindingHolds(c.challenge, purpose, c.origin)) return fail('not this enrolment', name);
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
    if (challengeRefusal(live, purpose, now) !== null) return 'expired';
    // A key enrolled since this began: the new one now needs a vouch too.
    if (vouchedBy === null && tx.keys().length > 0) return 'no enrolled key confirmed it';
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
    const subject = vouchedBy === null ? null : `vouched by ${vouchedBy}`;
    appendAudit(tx, ctx.header(tx), keyEvent(ctx, 'key_add', source, { key: name, subject }));
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
):
  { challengeId: string; options: RequestOptionsJSON; agent: UnlockSubject } | { notLocked: true } {
  checkCeremonyOrigin(req.origin);
  const { agent, keys } = ctx.store().read((tx) => ({
    agent: lockedAgent(tx, req.name),
    keys: tx.keys(),
  }));
  if (agent.rate.lock === null) return { notLocked: true };
  if (keys.length === 0) {
    throw new VaultError(
      'VLT-4004',
      `No hardware key is enrolled, so nothing can lift ${quote(req.name)}'s lock. ` +
        `To give it a working identity now: \`vault-cli agent revoke ${req.name}\`, then ` +
        `\`vault-cli agent add ${req.name} --scope <entry>...\` (a new token; the lock stays ` +
        'in the audit; docs/hardware-key.md). For next time, enrol a key with `vault-cli key add` (two are better).',
    );
  }
  const c = issueChallenge(
    ctx,
    { kind: 'unlock', agentId: agent.id, agentName: agent.name, lockAt: agent.rate.lock.at },
    req.origin,
  );
  return {
    challengeId: c.id,
    options: requestOptions(c, keys),
    agent: { id: agent.id, name: agent.name },
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
  /** What a challenge for this agent's present lockdown is bound to. */
  const current = (a: AgentRecord): ChallengePurpose => ({
    kind: 'unlock',
    agentId: a.id,
    agentName: a.name,
    lockAt: a.rate.lock?.at ?? -1,
  });
  const early = challengeRefusal(c, current(agent), now);
  if (early !== null) return fail(early === 'expired' ? 'expired' : 'not this lockdown', null);
  if (!bindingHolds(c.challenge, current(agent), c.origin)) return fail('not this lockdown', null);

  const checked = await checkAssertion(ctx, c, result);
  if (!checked.ok) {
    return checked.reason === 'counter'
      ? fail('counter', checked.key, 'VLT-4008')
      : fail(checked.reason, checked.key);
  }
  const { key, counter } = checked;
  const credentialId = key.id;

  // Everything again inside the one transaction that lifts the lock: another
  // request may have used the challenge, removed the key or moved the counter.
  const at = ctx.now();
  const outcome = ctx.commit((tx): string | null => {
    const live = tx.challenge(c.id);
    if (live === null) return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    const a = tx.agent(purpose.agentId);
    if (a === null || a.revoked !== null || a.rate.lock === null) return 'not this lockdown';
    const refusal = challengeRefusal(live, current(a), at);
    if (refusal !== null) return refusal === 'expired' ? 'expired' : 'not this lockdown';
    if (!bindingHolds(live.challenge, current(a), live.origin)) return 'not this lockdown';
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

/** Request fields that are proof or bookkeeping, not what the command does: left out of its digest. */
const NOT_THE_REQUEST: ReadonlySet<string> = new Set([
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
export function confirmDigest(op: string, body: unknown): string {
  const args: Record<string, unknown> = {};
  if (typeof body === 'object' && body !== null) {
    for (const [k, v] of Object.entries(body)) if (!NOT_THE_REQUEST.has(k)) args[k] = v;
  }
  return createHash('sha256')
    .update(canon([op, args]))
    .digest('hex');
}

/** What the confirmation's page names: the operation and, when it has one, the name it acts on. */
function confirmTitle(op: string, body: unknown): string {
  const b = (body ?? {}) as { name?: unknown; entry?: unknown; field?: unknown };
  const parts = [op];
  for (const v of [b.name, b.entry, b.field]) if (typeof v === 'string') parts.push(quote(v));
  return parts.join(' ');
}

/**
 * Starts the confirmation of one owner request by an enrolled key (an owner
 * session with a key enrolled: owner/session.ts requireProof): a challenge
 * bound to `op` and its arguments, decoded as the request itself will be.
 * @throws VaultError VLT-1001 unknown op or bad body, VLT-4004 no key enrolled.
 */
export function beginConfirm(
  ctx: HostContext,
  req: { op: string; body: unknown; origin: string },
): { challengeId: string; options: RequestOptionsJSON; what: string } {
  checkCeremonyOrigin(req.origin);
  if (!Object.hasOwn(REQUESTS, req.op)) {
    throw new VaultError('VLT-1001', `Bad request: no operation ${quote(req.op)} to confirm.`);
  }
  const decode = REQUESTS[req.op as Op] as (v: unknown, key: string) => unknown;
  const body = decode(req.body, 'body');
  const keys = ctx.store().read((tx) => tx.keys());
  if (keys.length === 0) throw new VaultError('VLT-4004');
  const what = confirmTitle(req.op, body);
  const c = issueChallenge(
    ctx,
    { kind: 'confirm', op: req.op, request: confirmDigest(req.op, body) },
    req.origin,
    { name: what },
  );
  return { challengeId: c.id, options: requestOptions(c, keys), what };
}

/**
 * Checks and uses up a confirmation sent with request `op` (its decoded
 * `body`): the challenge must be one issued for this very op and these
 * arguments, the assertion an enrolled key's, its counter higher. Refusals
 * are audited as `unlock_failed` naming the operation.
 * @throws VaultError VLT-4007 not accepted, VLT-4008 counter did not increase.
 */
export async function finishConfirm(
  ctx: HostContext,
  op: string,
  body: unknown,
  confirm: { challengeId: string; result: unknown },
  source: string,
): Promise<void> {
  const result = ceremonyResult(confirm.result);
  const c = ctx.store().read((tx) => pendingChallenge(tx, confirm.challengeId));
  const wanted: ChallengePurpose = { kind: 'confirm', op, request: confirmDigest(op, body) };
  const fail = (
    reason: string,
    key: string | null,
    code: 'VLT-4007' | 'VLT-4008' = 'VLT-4007',
    consume = true,
  ): never =>
    refuse(
      ctx,
      keyEvent(ctx, 'unlock_failed', source, { outcome: code, key, reason, subject: op }),
      code,
      `Hardware key not accepted for ${op} (${reason}); nothing was done.`,
      consume && c !== null ? c.id : null,
    );
  if (c === null || c.purpose.kind !== 'confirm') return fail('unknown or used challenge', null);
  const early = challengeRefusal(c, wanted, ctx.now());
  if (early !== null) return fail(early === 'expired' ? 'expired' : 'not this request', null);
  if (!bindingHolds(c.challenge, wanted, c.origin)) return fail('not this request', null);
  const checked = await checkAssertion(ctx, c, result);
  if (!checked.ok) {
    return checked.reason === 'counter'
      ? fail('counter', checked.key, 'VLT-4008')
      : fail(checked.reason, checked.key);
  }
  const at = ctx.now();
  const outcome = ctx.commit((tx): string | null => {
    const live = tx.challenge(c.id);
    if (live === null) return 'unknown or used challenge';
    tx.removeChallenge(c.id);
    if (challengeRefusal(live, wanted, at) !== null) return 'expired';
    const k = tx.key(checked.key.id);
    if (k === null) return 'not an enrolled key';
    if (!counterAdvanced(k.counter, checked.counter)) return 'counter';
    tx.putKey({ ...k, counter: checked.counter, lastUsed: at });
    return null;
  });
  if (outcome !== null) {
    fail(outcome, checked.key.name, outcome === 'counter' ? 'VLT-4008' : 'VLT-4007', false);
  }
}

/** Whether any hardware key is enrolled. */
export function keysEnrolled(ctx: HostContext): boolean {
  return ctx.store().read((tx) => tx.keys().length > 0);
}
