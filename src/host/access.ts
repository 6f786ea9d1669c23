/**
 * The agent access path, in the one order that holds everywhere:
 * authenticate -> lock -> scope -> field -> check and charge the limits ->
 * commit the audit record -> decrypt -> release. Nothing is released on any
 * failure before the end, and the charge, any violation or lock, and the audit
 * record are one write transaction.
 *
 * No existence oracle: a name that matches no entry and an entry outside the
 * scope take the same path, write the same kind of record and give the same
 * error bytes.
 */
import { agentActor, UNKNOWN_ACTOR, type AuditAction, type AuditEvent } from '../core/audit.js';
import { VaultError, type ErrorCode } from '../core/errors.js';
import { TOTP_FIELD } from '../core/names.js';
import { decideRead, inScope } from '../core/policy.js';
import { open, unwrapKey, wipe } from '../crypto/aead.js';
import { openSealed, type KeyPair } from '../crypto/box.js';
import { equal, keyedHash } from '../crypto/hash.js';
import { tokenKeys } from '../crypto/kdf.js';
import { Secret } from '../crypto/secret.js';
import { parseToken } from '../crypto/token.js';
import type { AgentRecord, EntryRecord, FieldRecord, Tx, VaultHeader } from '../store/store.js';
import { appendAudit } from './audit-log.js';
import type { HostContext } from './context.js';
import { slots } from './slots.js';
import { parseSeed, totpCode } from './totp.js';

/** An authenticated agent for the length of one request. */
export interface AgentSession {
  readonly agent: AgentRecord;
  readonly keys: KeyPair;
  readonly indexKey: Buffer;
}

function event(
  ctx: HostContext,
  action: AuditAction,
  outcome: 'ok' | ErrorCode,
  actor: string,
  source: string,
  more: Partial<Pick<AuditEvent, 'entryId' | 'entry' | 'field' | 'host'>> = {},
): AuditEvent {
  return {
    at: ctx.now(),
    action,
    actor,
    source,
    outcome,
    entryId: more.entryId ?? null,
    entry: more.entry ?? null,
    field: more.field ?? null,
    host: more.host ?? null,
    subject: null,
  };
}

/** Audits a refusal, then throws it; if the record cannot be written, VLT-3004 instead. */
function refuse(ctx: HostContext, header: VaultHeader, e: AuditEvent, err: VaultError): never {
  ctx.commit((tx) => appendAudit(tx, header, e));
  throw err;
}

/**
 * Authenticates a token: well-formed, known, not revoked, verifier equal (constant time).
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the agent's keys do not open.
 */
export function authenticate(ctx: HostContext, token: Secret, source: string): AgentSession {
  const store = ctx.store();
  const header = store.read((tx) => ctx.header(tx));
  const parsed = parseToken(token.expose().toString('utf8'));
  const agent = parsed === null ? null : store.read((tx) => tx.agent(parsed.agentId));
  const denied = (actor: string, message?: string): never =>
    refuse(
      ctx,
      header,
      event(ctx, 'denied', 'VLT-2040', actor, source),
      new VaultError('VLT-2040', message),
    );
  if (parsed === null || agent === null) return denied(UNKNOWN_ACTOR);
  if (agent.revoked !== null) return denied(agentActor(agent.name), 'Token revoked.');
  const { verifier, wrapKey } = tokenKeys(parsed.secret);
  try {
    if (!equal(verifier, agent.verifier)) return denied(UNKNOWN_ACTOR);
    const secretKey = unwrapKey(
      wrapKey,
      agent.secretKey,
      slots.agentSecretKey(header.vaultId, agent.id),
    );
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: agent.publicKey, secretKey };
    const indexKey = openSealed(keys, agent.indexKey, true);
    if (indexKey === null) throw new VaultError('VLT-3003');
    return { agent, keys, indexKey };
  } finally {
    wipe(wrapKey);
  }
}

export function endSession(s: AgentSession): void {
  wipe(s.keys.secretKey, s.indexKey);
}

interface Target {
  entry: EntryRecord;
  field: FieldRecord;
  /** The tier key sealed to the agent, as the transaction saw the agent. */
  tierBox: Buffer;
}

/**
 * Releases one field (mode `get`) or the current code of the `totp` field
 * (mode `totp`) to an authenticated agent.
 * @throws VaultError VLT-2041, 2042, 2043, 2044 (each audited), VLT-3003, VLT-3004.
 */
export function readField(
  ctx: HostContext,
  session: AgentSession,
  req: { entry: string; field: string; mode: 'get' | 'totp' },
  source: string,
): Secret {
  const field = req.mode === 'totp' ? TOTP_FIELD : req.field;
  const actor = agentActor(session.agent.name);
  const nameHash = keyedHash(session.indexKey, 'entry', req.entry).toString('hex');

  const decided = ctx.commit(
    (tx): { ok: true; target: Target; header: VaultHeader } | { ok: false; err: VaultError } => {
      const header = ctx.header(tx);
      const agent = tx.agent(session.agent.id) ?? session.agent;
      const entryId = tx.entryIdByName(nameHash);
      const facts = { entryId, entry: req.entry, field };
      const fail = (action: AuditAction, code: ErrorCode, message?: string) => {
        appendAudit(tx, header, event(ctx, action, code, actor, source, facts));
        return { ok: false as const, err: new VaultError(code, message) };
      };
      if (agent.revoked !== null) return fail('denied', 'VLT-2040', 'Token revoked.');
      if (agent.rate.lock !== null) return fail('locked', 'VLT-2043');
      const entry = entryId === null ? null : tx.entry(entryId);
      if (
        entry === null ||
        !inScope(agent.scope, entryId) ||
        agent.tierKeys[entry.tier] === undefined
      ) {
        return fail('denied', 'VLT-2041');
      }
      const fieldKey = keyedHash(session.indexKey, 'field', entry.id, field).toString('hex');
      const rec = tx.field(entry.id, fieldKey);
      if (rec === null)
        return fail('denied', 'VLT-2044', `Field not found: ${JSON.stringify(field)}.`);
      const d = decideRead(agent.rate, agent.limits, [entry.id], ctx.now());
      if (d.kind === 'locked') return fail('locked', 'VLT-2043');
      tx.putAgent({ ...agent, rate: d.state });
      if (d.kind === 'lockdown')
        return fail(
          'locked',
          'VLT-2043',
          'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
        );
      if (d.kind === 'limited') {
        const when =
          d.retryAt === null
            ? 'this request alone exceeds the limit'
            : `retry after ${new Date(d.retryAt).toISOString()}`;
        return fail(
          'limited',
          'VLT-2042',
          `Rate limit exceeded (${d.window}); violation recorded; ${when}.`,
        );
      }
      const action = agent.kind === 'ai' ? 'ai_read' : 'read';
      appendAudit(tx, header, event(ctx, action, 'ok', actor, source, facts));
      return {
        ok: true,
        target: { entry, field: rec, tierBox: agent.tierKeys[entry.tier] ?? Buffer.alloc(0) },
        header,
      };
    },
  );
  if (!decided.ok) throw decided.err;

  const { entry, field: rec, tierBox } = decided.target;
  const header = decided.header;
  const tierKey = openSealed(session.keys, tierBox, true);
  const dataKey =
    tierKey &&
    unwrapKey(tierKey, entry.dataKey, slots.dataKey(header.vaultId, entry.id, entry.tier));
  const value =
    dataKey && open(dataKey, rec.value, slots.field(header.vaultId, entry.id, field, rec.version));
  wipe(tierKey, dataKey);
  if (!value) throw new VaultError('VLT-3003');
  if (req.mode === 'get') return new Secret(value);
  try {
    return Secret.fromString(totpCode(parseSeed(value.toString('utf8')), ctx.now()));
  } finally {
    wipe(value);
  }
}

/** For `init`: the token is good. Writes nothing beyond an audit record on failure. */
export function whoami(ctx: HostContext, token: Secret, source: string): { agent: string } {
  const s = authenticate(ctx, token, source);
  try {
    if (s.agent.rate.lock !== null) {
      refuse(
        ctx,
        ctx.store().read((tx: Tx) => ctx.header(tx)),
        event(ctx, 'locked', 'VLT-2043', agentActor(s.agent.name), source),
        new VaultError('VLT-2043'),
      );
    }
    return { agent: s.agent.name };
  } finally {
    endSession(s);
  }
}
