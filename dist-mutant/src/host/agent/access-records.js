/**
 * The records of one access (access.ts): what the caller sees in the
 * transaction, the request's references, and how a refusal or a lock is
 * audited. Shared by release (access.ts) and the proxy's signals (signal.ts).
 */
import { agentActor } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { accessEvent } from '../audit/event.js';
import { appendAudit } from '../audit/log.js';
import { AGENT_REVOKED } from './authenticate.js';
import { coalesceRefusal } from '../audit/refusals.js';
import { sessionLive } from './sessions.js';
import {} from './entry-check.js';
/**
 * What the caller may see right now, read inside the transaction: the agent as
 * stored (for its rate state and lock), and the scope, grants and name index
 * of the token — the agent's own, or its session's (narrower, sealed to the
 * session's key pair). A session that was revoked or has expired sees nothing.
 */
export function view(tx, ctx, s) {
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
export const keyOf = (r) => JSON.stringify([r.entry, r.field]);
/** Built once, so the cost of a request stays linear in its size (issue 16). */
export function asked(refs) {
    const at = new Map();
    refs.forEach((r, index) => {
        const k = keyOf(r);
        const seen = at.get(k);
        if (seen === undefined)
            at.set(k, { ref: r, indices: [index] });
        else
            seen.indices.push(index);
    });
    const values = [...at.values()];
    return {
        refs,
        distinct: values.map((v) => v.ref),
        positions: new Map(values.map((v) => [keyOf(v.ref), v.indices])),
    };
}
/**
 * The access of `session` in write transaction `tx`, on records the vault
 * sealed: nothing is decided on records it did not (a rollback).
 * @throws VaultError VLT-3045 when the sealed state does not hold.
 */
export function sealedAccess(tx, ctx, session, source, purpose, host) {
    tx.assertSealed();
    const actor = agentActor(session.agent.name);
    const header = ctx.header(tx);
    return { tx, ctx, header, session, view: view(tx, ctx, session), actor, source, purpose, host };
}
/**
 * Look up: only in the caller's own index, so a name outside its scope is in
 * no row it can read.
 */
export function lookUp(a, refs) {
    return refs.map((ref) => {
        const entryId = a.view.index[a.session.row(ref.entry)] ?? null;
        return { ref, entryId, entry: entryId === null ? null : a.tx.entry(entryId) };
    });
}
export function audit(a, action, code, l) {
    const { entryId, ref } = l;
    appendAudit(a.tx, a.header, accessEvent(a.ctx, action, code, a.actor, a.source, {
        entryId,
        entry: ref.entry,
        field: ref.field,
        host: a.host,
    }));
}
/**
 * Audits refused references: each of the first AUDITED_REFUSALS by name, the
 * rest in one record that counts them, so one request grows the store by a
 * bounded amount however many names it guesses.
 */
export function auditRefused(a, action, refused) {
    for (const { l, code } of refused.slice(0, AUDITED_REFUSALS))
        audit(a, action, code, l);
    const rest = refused.length - AUDITED_REFUSALS;
    if (rest <= 0)
        return;
    const code = refused[AUDITED_REFUSALS]?.code ?? 'VLT-2041';
    const more = { entry: `(${rest} more references)`, host: a.host };
    appendAudit(a.tx, a.header, accessEvent(a.ctx, action, code, a.actor, a.source, more));
}
/** Every reference refused for one reason, audited. */
export function refuseAll(a, looked, why) {
    auditEach(a, looked, why);
    return { ok: false, err: new VaultError(why.code, why.message) };
}
/**
 * A refusal that repeats for as long as nothing changes (locked, revoked):
 * recorded as refuseAll does, but coalesced per source (refusal-audit.ts).
 */
export function refuseAgain(a, looked, why) {
    const e = accessEvent(a.ctx, why.action, why.code, a.actor, a.source);
    coalesceRefusal(a.ctx, a.tx, a.header, e, () => auditEach(a, looked, why));
    return { ok: false, err: new VaultError(why.code, why.message) };
}
function auditEach(a, looked, { action, code }) {
    auditRefused(a, action, looked.map((l) => ({ l, code })));
}
/** A revoked agent's token is told what to do; an ended session's, that it is revoked. */
export const revokedText = (agent) => agent.revoked !== null ? AGENT_REVOKED : 'Token revoked.';
/** The lock an exfiltration attempt caused, audited where the attempt went. */
export function auditLock(a) {
    appendAudit(a.tx, a.header, accessEvent(a.ctx, 'locked', 'VLT-2043', a.actor, a.source, { host: a.host }));
}
/**
 * The refusal of a request whose exfiltration attempt was the agent's second
 * violation: the attempt is audited (`exfil`), and so is the lock it caused.
 */
export function lockedBy(a, what) {
    auditLock(a);
    return {
        ok: false,
        err: new VaultError('VLT-2043', `Second violation (${what}): agent locked; the owner must unlock it with the hardware key.`),
    };
}
