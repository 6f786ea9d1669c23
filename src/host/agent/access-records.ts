/**
 * The records of one access (access.ts): what the caller sees in the
 * transaction, the request's references, and how a refusal or a lock is
 * audited. Shared by release (access.ts) and the proxy's signals (signal.ts).
 */
import { agentActor, type AuditAction } from '../../core/audit.js';
import { VaultError, type ErrorCode } from '../../core/errors.js';
import type { AgentRecord, EntryRecord, Grants, VaultHeader } from '../../store/schema.js';
import type { Tx } from '../../store/tx.js';
import { accessEvent } from '../audit/event.js';
import { appendAudit } from '../audit/log.js';
import { AGENT_REVOKED, type AgentSession } from './authenticate.js';
import { coalesceRefusal } from '../audit/refusals.js';
import type { HostContext } from '../context.js';
import { sessionLive } from './sessions.js';
import { type FieldRef, type Purpose } from './entry-check.js';

// Step 1 of the order has a module of its own; its callers import it from here.

interface CallerView {
  readonly agent: AgentRecord;
  readonly scope: readonly string[];
  readonly grants: Grants['grants'];
  readonly index: Grants['index'];
  /** The session token's session was revoked or has expired. */
  readonly dead: boolean;
}

/**
 * What the caller may see right now, read inside the transaction: the agent as
 * stored (for its rate state and lock), and the scope, grants and name index
 * of the token — the agent's own, or its session's (narrower, sealed to the
 * session's key pair). A session that was revoked or has expired sees nothing.
 */
export function view(tx: Tx, ctx: HostContext, s: AgentSession): CallerView {
  const agent = tx.agent(s.agent.id) ?? s.agent;
  if (s.sessionId === undefined) {
    const { scope, grants, index } = agent;
    return { agent, scope, grants: grants ?? {}, index: index ?? {}, dead: false };
  }
  const r = tx.session(s.sessionId);
  if (r === null || !sessionLive(r, ctx.now()))
    return { agent, scope: [], grants: {}, index: {}, dead: true };
  return {
    agent,
    scope: r.scope.filter((id) => agent.scope.includes(id)),
    grants: r.grants ?? {},
    index: r.index ?? {},
    dead: false,
  };
}

/** Refused references audited by name in one request; the rest share one record. */
export const AUDITED_REFUSALS = 16;

export const keyOf = (r: FieldRef): string => JSON.stringify([r.entry, r.field]);

/** A request's references: each distinct one once, and where it stands in the request. */
export interface Asked {
  readonly refs: readonly FieldRef[];
  readonly distinct: readonly FieldRef[];
  readonly positions: ReadonlyMap<string, readonly number[]>;
}

/** Built once, so the cost of a request stays linear in its size (issue 16). */
export function asked(refs: readonly FieldRef[]): Asked {
  const at = new Map<string, { ref: FieldRef; indices: number[] }>();
  refs.forEach((r, index) => {
    const k = keyOf(r);
    const seen = at.get(k);
    if (seen === undefined) at.set(k, { ref: r, indices: [index] });
    else seen.indices.push(index);
  });
  const values = [...at.values()];
  return {
    refs,
    distinct: values.map((v) => v.ref),
    positions: new Map(values.map((v) => [keyOf(v.ref), v.indices])),
  };
}

/** One access's write transaction: what each step reads, and where it writes. */
export interface Access {
  readonly tx: Tx;
  readonly ctx: HostContext;
  readonly header: VaultHeader;
  readonly session: AgentSession;
  /** The caller as this transaction sees it. */
  readonly view: CallerView;
  readonly actor: string;
  readonly source: string;
  readonly purpose: Purpose;
  /** The destination of a fill, for the host binding and the audit record; else null. */
  readonly host: string | null;
}

/**
 * The access of `session` in write transaction `tx`, on records the vault
 * sealed: nothing is decided on records it did not (a rollback).
 * @throws VaultError VLT-3045 when the sealed state does not hold.
 */
export function sealedAccess(
  tx: Tx,
  ctx: HostContext,
  session: AgentSession,
  source: string,
  purpose: Purpose,
  host: string | null,
): Access {
  tx.assertSealed();
  const actor = agentActor(session.agent.name);
  const header = ctx.header(tx);
  return { tx, ctx, header, session, view: view(tx, ctx, session), actor, source, purpose, host };
}

/** A reference as the caller's own index resolves it. */
export interface Looked {
  readonly ref: FieldRef;
  readonly entryId: string | null;
  readonly entry: EntryRecord | null;
}

export interface Refused {
  readonly l: Looked;
  readonly code: ErrorCode;
}

/** The request refused: the transaction still commits what the refusal wrote (audit, charge). */
export type Refusal = { ok: false; err: VaultError };

/**
 * Look up: only in the caller's own index, so a name outside its scope is in
 * no row it can read.
 */
export function lookUp(a: Access, refs: readonly FieldRef[]): Looked[] {
  return refs.map((ref) => {
    const entryId = a.view.index[a.session.row(ref.entry)] ?? null;
    return { ref, entryId, entry: entryId === null ? null : a.tx.entry(entryId) };
  });
}

export function audit(a: Access, action: AuditAction, code: 'ok' | ErrorCode, l: Looked): void {
  const { entryId, ref } = l;
  appendAudit(
    a.tx,
    a.header,
    accessEvent(a.ctx, action, code, a.actor, a.source, {
      entryId,
      entry: ref.entry,
      field: ref.field,
      host: a.host,
    }),
  );
}

/**
 * Audits refused references: each of the first AUDITED_REFUSALS by name, the
 * rest in one record that counts them, so one request grows the store by a
 * bounded amount however many names it guesses.
 */
export function auditRefused(a: Access, action: AuditAction, refused: readonly Refused[]): void {
  for (const { l, code } of refused.slice(0, AUDITED_REFUSALS)) audit(a, action, code, l);
  const rest = refused.length - AUDITED_REFUSALS;
  if (rest <= 0) return;
  const code = refused[AUDITED_REFUSALS]?.code ?? 'VLT-2041';
  const more = { entry: `(${rest} more references)`, host: a.host };
  appendAudit(a.tx, a.header, accessEvent(a.ctx, action, code, a.actor, a.source, more));
}

/** Why every reference of a request is refused: the audit action, the code, what the caller is told. */
export interface Why {
  readonly action: AuditAction;
  readonly code: ErrorCode;
  readonly message?: string | undefined;
}

/** Every reference refused for one reason, audited. */
export function refuseAll(a: Access, looked: readonly Looked[], why: Why): Refusal {
  auditEach(a, looked, why);
  return { ok: false, err: new VaultError(why.code, why.message) };
}

/**
 * A refusal that repeats for as long as nothing changes (locked, revoked):
 * recorded as refuseAll does, but coalesced per source (refusal-audit.ts).
 */
export function refuseAgain(a: Access, looked: readonly Looked[], why: Why): Refusal {
  const e = accessEvent(a.ctx, why.action, why.code, a.actor, a.source);
  coalesceRefusal(a.ctx, a.tx, a.header, e, () => auditEach(a, looked, why));
  return { ok: false, err: new VaultError(why.code, why.message) };
}

function auditEach(a: Access, looked: readonly Looked[], { action, code }: Why): void {
  auditRefused(
    a,
    action,
    looked.map((l) => ({ l, code })),
  );
}

/** A revoked agent's token is told what to do; an ended session's, that it is revoked. */
export const revokedText = (agent: AgentRecord): string =>
  agent.revoked !== null ? AGENT_REVOKED : 'Token revoked.';

/** The lock an exfiltration attempt caused, audited where the attempt went. */
export function auditLock(a: Access): void {
  appendAudit(
    a.tx,
    a.header,
    accessEvent(a.ctx, 'locked', 'VLT-2043', a.actor, a.source, { host: a.host }),
  );
}

/**
 * The refusal of a request whose exfiltration attempt was the agent's second
 * violation: the attempt is audited (`exfil`), and so is the lock it caused.
 */
export function lockedBy(a: Access, what: string): Refusal {
  auditLock(a);
  return {
    ok: false,
    err: new VaultError(
      'VLT-2043',
      `Second violation (${what}): agent locked; the owner must unlock it with the hardware key.`,
    ),
  };
}
