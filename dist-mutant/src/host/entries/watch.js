/**
 * What `render --watch` learns from the host: that an entry it may read, among
 * those its template names, changed (a field set or rotated, the entry moved,
 * removed, or taken out of its scope), and nothing else. No value, no field
 * name, no other agent's activity: the host compares metadata it reads itself
 * and tells the watcher one bit per change.
 *
 * Names are turned into the caller's own index hashes once, while its token is
 * open, and looked up in its own index and scope on every check (access.ts
 * `lookUp`): a name outside the scope, or of no entry, is never reported, so
 * watching one answers nothing about it (no existence oracle).
 */
import { inScope } from '../../core/policy.js';
import { nameHash } from '../keys/grants.js';
import { sessionLive } from '../agent/sessions.js';
/** The most names one watch follows: a template with more is refused by the decoder's body limit first. */
export const MAX_WATCHED = 1024;
/** A watch for `session` on `names` (distinct, at most MAX_WATCHED). */
export function watchOf(session, names) {
    const distinct = [...new Set(names)].slice(0, MAX_WATCHED);
    return {
        agentId: session.agent.id,
        sessionId: session.sessionId,
        hashes: distinct.map((n) => nameHash(session.indexKey, n)),
    };
}
/**
 * The state of what `w` watches, as one string that changes when any watched
 * entry it may read changes (`<id>.<updated>` per name, `-` for one it cannot
 * read); null once the caller can read nothing more (its agent revoked or
 * gone, its `run` session ended or expired): the watch ends then. Not the
 * generation: a data key is also rotated when another agent holding the entry
 * is revoked or another `run` session ends, and that is their activity, not a
 * change of the value (`updated` moves only when the owner writes the entry).
 */
export function watchedState(tx, now, w) {
    const agent = tx.agent(w.agentId);
    if (agent === null || agent.revoked !== null)
        return null;
    let scope = agent.scope;
    let index = agent.index ?? {};
    if (w.sessionId !== undefined) {
        const r = tx.session(w.sessionId);
        if (r === null || !sessionLive(r, now))
            return null;
        scope = r.scope.filter((id) => agent.scope.includes(id));
        index = r.index ?? {};
    }
    return w.hashes
        .map((h) => {
        const id = index[h] ?? null;
        const entry = id === null || !inScope(scope, id) ? null : tx.entry(id);
        return entry === null ? '-' : `${entry.id}.${entry.updated}`;
    })
        .join(',');
}
