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
import { KeyArena, open, unwrapKey, wipe } from '../crypto/aead.js';
import { openSealed, type KeyPair } from '../crypto/box.js';
import { equal, keyedHash } from '../crypto/hash.js';
import { tokenKeys } from '../crypto/kdf.js';
import { Secret } from '../crypto/secret.js';
import { parseToken } from '../crypto/token.js';
import type { AgentRecord, EntryRecord, FieldRecord, Tx, VaultHeader } from '../store/store.js';
import { appendAudit } from './audit-log.js';
import { boundHosts, normalHost } from './entries.js';
import type { HostContext } from './context.js';
import { sessionLive } from './sessions.js';
import { slots } from './slots.js';
import { parseSeed, totpCode } from './totp.js';

/** An authenticated agent for the length of one request. */
export interface AgentSession {
  readonly agent: AgentRecord;
  readonly keys: KeyPair;
  readonly indexKey: Buffer;
  /** Guarded memory for the request's keys: the two above, and the tier and data keys it opens. */
  readonly arena: KeyArena;
  /** Set when the token is a `run` session token: its id, checked again in each transaction. */
  readonly sessionId?: string;
}

/**
 * What the caller may see right now, read inside the transaction: the agent as
 * stored (for its rate state and lock), and the scope and sealed tier keys of
 * the token — the agent's own, or its session's (narrower, sealed to the
 * session's key pair). A session that was revoked or has expired sees nothing.
 */
function view(
  tx: Tx,
  ctx: HostContext,
  s: AgentSession,
): {
  agent: AgentRecord;
  scope: readonly string[];
  tierKeys: AgentRecord['tierKeys'];
  dead: boolean;
} {
  const agent = tx.agent(s.agent.id) ?? s.agent;
  if (s.sessionId === undefined)
    return { agent, scope: agent.scope, tierKeys: agent.tierKeys, dead: false };
  const r = tx.session(s.sessionId);
  if (r === null || !sessionLive(r, ctx.now()))
    return { agent, scope: [], tierKeys: {}, dead: true };
  return {
    agent,
    scope: r.scope.filter((id) => agent.scope.includes(id)),
    tierKeys: r.tierKeys,
    dead: false,
  };
}

/** A session token: its record and the agent it acts for, or null when the id names no session. */
function sessionAuth(
  ctx: HostContext,
  header: VaultHeader,
  id: string,
  secret: Buffer,
  denied: (actor: string, message?: string) => never,
): AgentSession | null {
  const found = ctx.store().read((tx) => {
    const r = tx.session(id);
    return r === null ? null : { r, agent: tx.agent(r.agentId) };
  });
  if (found === null) return null;
  const { r, agent } = found;
  if (agent === null) return denied(UNKNOWN_ACTOR);
  const actor = agentActor(agent.name);
  if (agent.revoked !== null || r.revoked !== null) return denied(actor, 'Token revoked.');
  if (ctx.now() >= r.expires) return denied(actor, 'Token expired.');
  const arena = new KeyArena();
  const { verifier, wrapKey } = tokenKeys(secret, arena);
  try {
    // A known id with a wrong secret: audited to the agent the id names.
    if (!equal(verifier, r.verifier)) return denied(actor);
    const secretKey = unwrapKey(
      wrapKey,
      r.secretKey,
      slots.sessionSecretKey(header.vaultId, r.id),
      arena,
    );
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: r.publicKey, secretKey };
    const indexKey = openSealed(keys, r.indexKey, arena);
    if (indexKey === null) throw new VaultError('VLT-3003');
    return { agent, keys, indexKey, arena, sessionId: r.id };
  } catch (err) {
    arena.wipe();
    throw err;
  } finally {
    wipe(wrapKey);
  }
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
  if (parsed !== null && agent === null) {
    const session = sessionAuth(ctx, header, parsed.agentId, parsed.secret, denied);
    if (session !== null) return session;
  }
  if (parsed === null || agent === null) return denied(UNKNOWN_ACTOR);
  if (agent.revoked !== null) return denied(agentActor(agent.name), 'Token revoked.');
  const arena = new KeyArena();
  const { verifier, wrapKey } = tokenKeys(parsed.secret, arena);
  try {
    if (!equal(verifier, agent.verifier)) return denied(agentActor(agent.name));
    const secretKey = unwrapKey(
      wrapKey,
      agent.secretKey,
      slots.agentSecretKey(header.vaultId, agent.id),
      arena,
    );
    if (secretKey === null) throw new VaultError('VLT-3003');
    const keys = { publicKey: agent.publicKey, secretKey };
    const indexKey = openSealed(keys, agent.indexKey, arena);
    if (indexKey === null) throw new VaultError('VLT-3003');
    return { agent, keys, indexKey, arena };
  } catch (err) {
    arena.wipe();
    throw err;
  } finally {
    wipe(wrapKey);
  }
}

/** Wipes every key the request opened: the session's own, and each tier and data key. */
export function endSession(s: AgentSession): void {
  wipe(s.keys.secretKey, s.indexKey);
  s.arena.wipe();
}

/** A reference to one field of one entry, as the caller wrote it. */
export interface FieldRef {
  readonly entry: string;
  readonly field: string;
}

/** What the released values are for: the audit action and, for a fill, where it goes. */
export type Purpose =
  | { readonly kind: 'get' }
  | { readonly kind: 'totp' }
  | { readonly kind: 'fill'; readonly host: string | null };

interface Target {
  /** The reference's key in the request, for putting values back in order. */
  key: string;
  entry: EntryRecord;
  field: string;
  record: FieldRecord;
  /** The tier key sealed to the agent, as the transaction saw the agent. */
  tierBox: Buffer;
}

function retryText(d: { retryAt: number | null; window: string }): string {
  const when =
    d.retryAt === null
      ? 'this request alone exceeds the limit'
      : `retry after ${new Date(d.retryAt).toISOString()}`;
  return `Rate limit exceeded (${d.window}); violation recorded; ${when}.`;
}

/**
 * Releases the fields `refs` name, all of them or none: for `get` and `totp`
 * one reference, for a render or a proxy fill all distinct references of the
 * request at once, charged to the limits together. Values come back in the
 * order of `refs` (duplicates resolved once).
 * @throws VaultError VLT-2040/2041/2042/2043/2044 (each audited; for several
 *   references, `problems` names each bad one), VLT-3003, VLT-3004.
 */
export function release(
  ctx: HostContext,
  session: AgentSession,
  refs: readonly FieldRef[],
  purpose: Purpose,
  source: string,
): Secret[] {
  const keyOf = (r: FieldRef) => JSON.stringify([r.entry, r.field]);
  const distinct = [...new Map(refs.map((r) => [keyOf(r), r])).values()];
  const actor = agentActor(session.agent.name);
  const host = purpose.kind === 'fill' ? purpose.host : null;

  const decided = ctx.commit(
    (tx): { ok: true; targets: Target[]; header: VaultHeader } | { ok: false; err: VaultError } => {
      const header = ctx.header(tx);
      const { agent, scope, tierKeys, dead } = view(tx, ctx, session);
      const looked = distinct.map((ref) => {
        const entryId = tx.entryIdByName(
          keyedHash(session.indexKey, 'entry', ref.entry).toString('hex'),
        );
        return { ref, entryId, entry: entryId === null ? null : tx.entry(entryId) };
      });
      const audit = (action: AuditAction, code: 'ok' | ErrorCode, l: (typeof looked)[number]) =>
        appendAudit(
          tx,
          header,
          event(ctx, action, code, actor, source, {
            entryId: l.entryId,
            entry: l.ref.entry,
            field: l.ref.field,
            host,
          }),
        );
      /** Every reference refused for one reason, each audited. */
      const refuseAll = (action: AuditAction, code: ErrorCode, message?: string) => {
        for (const l of looked) audit(action, code, l);
        return { ok: false as const, err: new VaultError(code, message) };
      };
      if (agent.revoked !== null || dead) return refuseAll('denied', 'VLT-2040', 'Token revoked.');
      if (agent.rate.lock !== null) return refuseAll('locked', 'VLT-2043');

      const targets: Target[] = [];
      const problems: { index: number; code: ErrorCode }[] = [];
      for (const l of looked) {
        const { entry, ref } = l;
        let code: ErrorCode | null = null;
        let record: FieldRecord | null = null;
        if (entry === null || !inScope(scope, l.entryId) || tierKeys[entry.tier] === undefined) {
          code = 'VLT-2041';
        } else {
          record = tx.field(
            entry.id,
            keyedHash(session.indexKey, 'field', entry.id, ref.field).toString('hex'),
          );
          if (record === null) code = 'VLT-2044';
          // A one-time-password seed never leaves the host: only `totp` uses it, for a code.
          else if (ref.field === TOTP_FIELD && purpose.kind !== 'totp') code = 'VLT-2052';
          else if (host !== null && !hostAllowed(session, header, entry, tierKeys, host)) {
            code = 'VLT-2045';
          }
        }
        if (code !== null || entry === null || record === null) {
          audit('denied', code ?? 'VLT-2041', l);
          refs.forEach(
            (r, index) =>
              keyOf(r) === keyOf(ref) && problems.push({ index, code: code ?? 'VLT-2041' }),
          );
          continue;
        }
        targets.push({
          key: keyOf(ref),
          entry,
          field: ref.field,
          record,
          tierBox: tierKeys[entry.tier] ?? Buffer.alloc(0),
        });
      }
      if (problems.length > 0) {
        problems.sort((a, b) => a.index - b.index);
        const first = problems[0]?.code ?? 'VLT-2041';
        const message =
          refs.length === 1
            ? first === 'VLT-2044'
              ? `Field not found: ${JSON.stringify(refs[0]?.field)}.`
              : undefined
            : `${problems.length} of ${refs.length} references cannot be resolved; nothing was released.`;
        return { ok: false, err: new VaultError(first, message, { problems }) };
      }

      const d = decideRead(
        agent.rate,
        agent.limits,
        [...new Set(targets.map((t) => t.entry.id))],
        ctx.now(),
      );
      if (d.kind === 'locked') return refuseAll('locked', 'VLT-2043');
      tx.putAgent({ ...agent, rate: d.state });
      if (d.kind === 'lockdown') {
        return refuseAll(
          'locked',
          'VLT-2043',
          'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
        );
      }
      if (d.kind === 'limited') return refuseAll('limited', 'VLT-2042', retryText(d));
      const action = purpose.kind === 'fill' ? 'fill' : agent.kind === 'ai' ? 'ai_read' : 'read';
      // One record per credential released (an entry: DESIGN section 6), naming
      // its fields, as the limits charged it.
      const byEntry = new Map<string, (typeof looked)[number][]>();
      for (const l of looked)
        byEntry.set(l.entryId ?? '', [...(byEntry.get(l.entryId ?? '') ?? []), l]);
      for (const [first, ...more] of byEntry.values()) {
        if (first === undefined) continue;
        const fields = [first, ...more].map((l) => l.ref.field).join(', ');
        audit(action, 'ok', { ...first, ref: { ...first.ref, field: fields } });
      }
      return { ok: true, targets, header };
    },
  );
  if (!decided.ok) throw decided.err;

  const { header } = decided;
  const values = new Map<string, Secret>();
  try {
    for (const t of decided.targets) {
      const tierKey = openSealed(session.keys, t.tierBox, session.arena);
      const dataKey =
        tierKey &&
        unwrapKey(
          tierKey,
          t.entry.dataKey,
          slots.dataKey(header.vaultId, t.entry.id, t.entry.tier),
          session.arena,
        );
      const value =
        dataKey &&
        open(
          dataKey,
          t.record.value,
          slots.field(header.vaultId, t.entry.id, t.field, t.record.version),
        );
      wipe(tierKey, dataKey);
      if (!value) throw new VaultError('VLT-3003');
      values.set(t.key, totpOr(purpose, value, ctx.now()));
    }
    return refs.map((r) => values.get(keyOf(r)) as Secret);
  } catch (err) {
    for (const v of values.values()) v.wipe();
    throw err;
  }
}

/**
 * Whether a proxy fill may send this entry to `host`. The binding lives in the
 * entry's sealed meta, which only its data key opens, and the agent's data key
 * is reachable only through its tier key: so the host unwraps them here,
 * inside the transaction and before the charge, reads the hosts and wipes the
 * keys. No field value is opened, and a refused fill costs nothing. (A keyed
 * hash of the hosts beside the entry would avoid the unwrap, but would be a
 * second copy of the binding to keep in step with the meta.)
 * @throws VaultError VLT-3003 when a key or the meta does not open.
 */
function hostAllowed(
  session: AgentSession,
  header: VaultHeader,
  entry: EntryRecord,
  tierKeys: AgentRecord['tierKeys'],
  host: string,
): boolean {
  const box = tierKeys[entry.tier];
  const tierKey = box === undefined ? null : openSealed(session.keys, box, session.arena);
  const dataKey =
    tierKey &&
    unwrapKey(
      tierKey,
      entry.dataKey,
      slots.dataKey(header.vaultId, entry.id, entry.tier),
      session.arena,
    );
  wipe(tierKey);
  if (!dataKey) throw new VaultError('VLT-3003');
  try {
    const hosts = boundHosts(header, dataKey, entry);
    return hosts.length === 0 || hosts.includes(normalHost(host));
  } finally {
    wipe(dataKey);
  }
}

function totpOr(purpose: Purpose, value: Buffer, now: number): Secret {
  if (purpose.kind !== 'totp') return new Secret(value);
  try {
    return Secret.fromString(totpCode(parseSeed(value.toString('utf8')), now));
  } finally {
    wipe(value);
  }
}

/**
 * Releases one field (mode `get`) or the current code of the `totp` field
 * (mode `totp`) to an authenticated agent.
 * @throws VaultError as release().
 */
export function readField(
  ctx: HostContext,
  session: AgentSession,
  req: { entry: string; field: string; mode: 'get' | 'totp' },
  source: string,
): Secret {
  const field = req.mode === 'totp' ? TOTP_FIELD : req.field;
  const [value] = release(ctx, session, [{ entry: req.entry, field }], { kind: req.mode }, source);
  if (value === undefined) throw new VaultError('VLT-3007');
  return value;
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
