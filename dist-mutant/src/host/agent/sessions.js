/**
 * Session tokens for `run`: minted by the owner for one agent, they act as that
 * agent (same limits, same rate state, same audit actor) within the agent's
 * scope or a narrower one. A session has its own verifier and key pair; the
 * owner checks the agent record's MAC (a scope widened in the store is
 * refused, VLT-3021), then seals the data keys of the session's scope, and an
 * index key of its own, to the new public key, so the agent's token is never
 * needed and a session token with a copy of the store opens its scope only.
 * A session dies when `run` ends it, and after `expires`.
 *
 * A live session follows the owner's later changes to its agent's scope
 * (followScope): what the agent loses, every session loses at once; what the
 * agent gains, a session minted without --scope gains in the same owner
 * command, since only the owner's root key can seal a data key to it.
 */
import { agentActor } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { appendAudit } from '../audit/log.js';
import { entryIds } from '../entries/entries.js';
import { addGrants, dropGrants, recordIndexKey, sessionMacHolds, verifyAgent, withSessionMac, } from '../keys/grants.js';
import { ownerEvent } from '../audit/event.js';
import { endedRecord, holderKeys, tokenText, withNewToken } from './token-holder.js';
import { agentByName } from './names.js';
import { rotateEach } from '../keys/rotation.js';
/** The longest a session token lives, whatever the caller asks. */
export const SESSION_MAX_MS = 12 * 3_600_000;
/**
 * How long an ended session's record is kept, so its token reads "revoked" or
 * "expired" rather than "invalid"; after that it is removed when the next
 * session is minted, and the store does not grow with every `run`.
 */
export const SESSION_KEEP_MS = 24 * 3_600_000;
/** Removes the records of sessions that ended more than SESSION_KEEP_MS before `now`. */
function pruneSessions(tx, now) {
    for (const r of tx.sessions()) {
        const ended = r.revoked ?? r.expires;
        if (ended + SESSION_KEEP_MS < now)
            tx.removeSession(r.id);
    }
}
/**
 * Mints a session token for agent `req.agent`, scoped to `req.scope` (entry
 * names, each within the agent's scope) or, when empty, to the agent's scope.
 * @throws VaultError VLT-4002 no such agent, VLT-3021 its name row or record altered, VLT-4001 unknown entry,
 *   VLT-2041 an entry outside the agent's scope, VLT-2043 agent locked.
 */
export function mintSession(ctx, s, req, source) {
    const ttl = Math.min(req.ttlMs ?? SESSION_MAX_MS, SESSION_MAX_MS);
    return withNewToken((t) => {
        const expires = ctx.commit((tx) => {
            // The record must carry the name (a name row is under no MAC), and its MAC hold.
            const agent = verifyAgent(s, agentByName(tx, req.agent));
            if (agent.rate.lock !== null)
                throw new VaultError('VLT-2043');
            const header = ctx.header(tx);
            const asked = entryIds(tx, s, [...new Set(req.scope)]);
            const outside = asked.find((e) => !agent.scope.includes(e.id));
            if (outside !== undefined)
                throw new VaultError('VLT-2041', 'A --scope entry is outside the agent’s scope.');
            const scope = asked.length > 0 ? asked.map((e) => e.id) : [...agent.scope];
            const entries = scope.flatMap((eid) => tx.entry(eid) ?? []);
            const keys = holderKeys(s, header, 'session', t, entries);
            const now = ctx.now();
            pruneSessions(tx, now);
            const record = withSessionMac(s, {
                id: t.id.toString('hex'),
                agentId: agent.id,
                scope: entries.map((e) => e.id),
                follows: asked.length === 0,
                ...keys,
                created: now,
                expires: now + ttl,
                revoked: null,
                mac: Buffer.alloc(0),
            });
            tx.putSession(record);
            appendAudit(tx, header, ownerEvent(ctx, 'session_start', source, {
                subject: agent.name,
                field: req.sandboxed === true ? 'sandbox' : 'no-sandbox',
            }));
            return record.expires;
        });
        return { token: tokenText(t), expires, id: t.id.toString('hex') };
    });
}
/**
 * Brings the live sessions of `agent` in line with an owner's change to its
 * scope, inside the caller's transaction and before it rotates `lost`: every
 * session drops its grants and index rows of `lost`, so the rotation gives it
 * no new key (rotateEntry re-grants only to records still holding one); a
 * session that follows the agent (minted without --scope) is granted each
 * entry of `gained` it lacks, sealed to its own key pair. A session minted
 * with --scope keeps its narrower scope: nothing is added to it. A session
 * whose MAC fails is only narrowed, its MAC left failing: the owner must not
 * vouch for what was altered, nor seal keys to it.
 */
export function followScope(tx, s, header, agent, change, now) {
    for (const r of tx.sessions()) {
        if (r.agentId !== agent.id || !sessionLive(r, now))
            continue;
        const kept = dropGrants({ grants: r.grants ?? {}, index: r.index ?? {} }, change.lost);
        const scope = r.scope.filter((id) => !change.lost.has(id));
        if (!sessionMacHolds(s, r)) {
            tx.putSession({ ...r, scope, ...kept });
            continue;
        }
        const fresh = r.follows === true
            ? [...new Map(change.gained.map((e) => [e.id, e])).values()].filter((e) => !scope.includes(e.id))
            : [];
        const granted = addGrants(s, header, r.publicKey, recordIndexKey(s, 'session', r.id), kept, fresh);
        tx.putSession(withSessionMac(s, { ...r, scope: [...scope, ...fresh.map((e) => e.id)], ...granted }));
    }
}
/** Ends a session for good: its keys are erased, the record stays so its token reads "revoked". */
export function revokeSession(ctx, id, source) {
    ctx.commit((tx) => {
        const r = tx.session(id);
        if (r === null || r.revoked !== null)
            return;
        const header = ctx.header(tx);
        // Its grants go; the entries it held are rotated at the owner's next
        // command (rotatePending), since the host holds no owner key here.
        const held = Object.keys(r.grants ?? {});
        if (held.length > 0)
            tx.putPendingRotation([...new Set([...tx.pendingRotation(), ...held])]);
        tx.putSession(endedRecord(r, ctx.now()));
        const name = tx.agent(r.agentId)?.name ?? '?';
        appendAudit(tx, header, {
            ...ownerEvent(ctx, 'session_end', source, { subject: name }),
            actor: agentActor(name),
        });
    });
}
/**
 * Ends every live session: called when a host starts. A session lives only as
 * long as the `run` that holds it, and no hold outlives the host it was made
 * on, so a session still live in the store at start-up belongs to a `run` that
 * is gone or can no longer be told apart from one that is.
 */
export function endOrphanedSessions(ctx) {
    const now = ctx.now();
    const live = ctx
        .store()
        .read((tx) => tx.sessions())
        .filter((r) => sessionLive(r, now));
    for (const r of live)
        revokeSession(ctx, r.id, 'host-start');
    return live.length;
}
/** Whether a session is alive at `now`. */
export function sessionLive(r, now) {
    return r.revoked === null && now < r.expires;
}
/**
 * Rotates the entries ended sessions held (see revokeSession), for the owner
 * at the start of a command: keys a session saved open nothing after. Best
 * effort, entry by entry (rotation.ts): one whose rotation fails (an altered
 * record, VLT-3020) stays queued for the next command and is returned; the
 * others are rotated, and the command goes on either way.
 */
export function rotatePending(ctx, s) {
    try {
        return rotateEach(ctx, s, ctx.store().read((tx) => tx.pendingRotation()));
    }
    catch {
        // Left pending, all that was not done: the store could not be read or written.
        return [];
    }
}
