/**
 * The first step of every access: a token becomes the caller it names (an
 * agent, or a `run` session acting for one) with its keys opened, or a
 * refusal that is audited. Both kinds of token take the same path
 * (openCaller); a caller the cache keeps is checked against the records on
 * every request instead.
 */
import { agentActor, UNKNOWN_ACTOR } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { KeyArena, unwrapKey, wipe } from '../../crypto/aead.js';
import { openSealed } from '../../crypto/box.js';
import { equal } from '../../crypto/hash.js';
import { tokenKeys } from '../../crypto/kdf.js';
import { parseToken } from '../../crypto/token.js';
import { SCHEMA_VERSION } from '../../store/schema.js';
import { accessEvent } from '../audit/event.js';
import { nameHash } from '../keys/grants.js';
import { auditRefusal } from '../audit/refusals.js';
import { sessionLive } from './sessions.js';
import { slots } from '../keys/slots.js';
/** Request arenas, zeroed and reused: a guarded allocation maps fresh pages every time. */
const spareArenas = [];
const SPARE_ARENAS = 64;
function requestArena() {
    return spareArenas.pop() ?? new KeyArena();
}
function returnArena(a) {
    a.reset();
    if (spareArenas.length < SPARE_ARENAS)
        spareArenas.push(a);
    else
        a.wipe();
}
/** A request's session on keys the caller cache lent it. */
function lentSession(agent, lent) {
    const arena = requestArena();
    let ended = false;
    return {
        agent,
        keys: lent.keys.keys,
        indexKey: lent.keys.indexKey,
        arena,
        ...(lent.keys.sessionId === undefined ? {} : { sessionId: lent.keys.sessionId }),
        unseal: (box) => lent.unseal(box),
        row: (name) => lent.row(name, (n) => nameHash(lent.keys.indexKey, n)),
        end: () => {
            if (ended)
                return;
            ended = true;
            returnArena(arena);
            lent.done();
        },
    };
}
/** A request's session on keys of its own (the cache is off): all wiped when it ends. */
function ownSession(agent, k, arena) {
    return {
        agent,
        keys: k.keys,
        indexKey: k.indexKey,
        arena,
        ...(k.sessionId === undefined ? {} : { sessionId: k.sessionId }),
        unseal: (box) => openSealed(k.keys, box, arena),
        row: (name) => nameHash(k.indexKey, name),
        end: () => {
            wipe(k.keys.secretKey, k.indexKey);
            arena.wipe();
        },
    };
}
/**
 * The caller cache's check of a kept token against the records now: the
 * agent (and session) still there, not revoked, not expired, and the token's
 * verifier still theirs. Returns the agent as stored, or null.
 */
function stillValid(ctx, k) {
    const store = ctx.store();
    // Checked again in the request's write transaction (access.ts `barred`): a
    // team host's copy may answer here without a round trip (engine.ts readCached).
    const read = store.readCached?.bind(store) ?? store.read.bind(store);
    return read((tx) => {
        const agent = tx.agent(k.agentId);
        if (agent === null || agent.revoked !== null)
            return null;
        if (k.sessionId === undefined)
            return equal(agent.verifier, k.verifier) ? agent : null;
        const r = tx.session(k.sessionId);
        if (r === null || r.agentId !== k.agentId || !sessionLive(r, ctx.now()))
            return null;
        return equal(r.verifier, k.verifier) ? agent : null;
    });
}
/**
 * What a revoked agent token is told: only the owner can make a new one. (A
 * `run` session's token ends with its process and says only "revoked": `run`
 * mints the next.)
 */
export const AGENT_REVOKED = 'Token revoked: ask the owner for a new token (`vault-cli agent add`), then store it with `vault-cli init`.';
/**
 * The agent or session a token's id names, read in one transaction; null when
 * it names neither (or a session of an agent that is gone).
 */
function holderOf(ctx, header, id) {
    return ctx.store().read((tx) => {
        const agent = tx.agent(id);
        if (agent !== null) {
            const barred = agent.revoked !== null ? AGENT_REVOKED : null;
            const slot = slots.agentSecretKey(header.vaultId, id);
            const stateSlot = slots.stateKeyByToken(header.vaultId, id);
            return { agent, record: agent, slot, stateSlot, barred };
        }
        const r = tx.session(id);
        const owner = r === null ? null : tx.agent(r.agentId);
        if (r === null || owner === null)
            return null;
        const barred = owner.revoked !== null || r.revoked !== null
            ? 'Token revoked.'
            : ctx.now() >= r.expires
                ? 'Token expired.'
                : null;
        const slot = slots.sessionSecretKey(header.vaultId, r.id);
        const stateSlot = slots.stateKeyByToken(header.vaultId, r.id);
        return { agent: owner, record: r, sessionId: r.id, slot, stateSlot, barred };
    });
}
/**
 * Gives the host the vault's state key from the token's own record (a token
 * made once the vault was sealed), wrapped under the token's key, so no
 * database holder can have put it there.
 * @throws VaultError VLT-3045 when it does not open or is not the one the host holds.
 */
function learnStateKey(ctx, h, wrapKey, arena) {
    const box = h.record.stateKey;
    if (box === undefined)
        return;
    const key = unwrapKey(wrapKey, box, h.stateSlot, arena);
    if (key === null || !ctx.learnStateKey(key)) {
        throw new VaultError('VLT-3045', 'Rollback detected: the token’s state key is not the vault’s.');
    }
}
/**
 * Opens the caller's keys with the token's secret, for both kinds of token:
 * the verifier compared in constant time (a known id with a wrong secret is
 * audited to the agent the id names), the key pair unwrapped, the index key
 * opened.
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the keys do not open.
 */
function openCaller(ctx, token, secret, h, denied) {
    const arena = new KeyArena();
    const { verifier, wrapKey } = tokenKeys(secret, arena);
    try {
        if (!equal(verifier, h.record.verifier))
            return denied(agentActor(h.agent.name));
        const secretKey = unwrapKey(wrapKey, h.record.secretKey, h.slot, arena);
        if (secretKey === null)
            throw new VaultError('VLT-3003');
        learnStateKey(ctx, h, wrapKey, arena);
        const keys = { publicKey: h.record.publicKey, secretKey };
        const indexKey = openSealed(keys, h.record.indexKey, arena);
        if (indexKey === null)
            throw new VaultError('VLT-3003');
        const k = {
            agentId: h.agent.id,
            ...(h.sessionId === undefined ? {} : { sessionId: h.sessionId }),
            keys,
            indexKey,
            verifier: h.record.verifier,
        };
        return opened(ctx, token, h.agent, k, arena);
    }
    catch (err) {
        arena.wipe();
        throw err;
    }
    finally {
        wipe(wrapKey);
    }
}
/**
 * Audits a refusal, then throws it; if the record cannot be written, VLT-3004
 * instead. A refusal releases nothing, so a flood of them is coalesced
 * (refusal-audit.ts): counted, not each written.
 */
export function refuse(ctx, header, e, err) {
    auditRefusal(ctx, header, e);
    throw err;
}
/** The header, if this build reads the vault's format. @throws VaultError VLT-3023, VLT-3024 */
function currentHeader(ctx) {
    const header = ctx.store().read((tx) => ctx.header(tx));
    if (header.schema > SCHEMA_VERSION)
        throw new VaultError('VLT-3023');
    if (header.schema < SCHEMA_VERSION)
        throw new VaultError('VLT-3024');
    return header;
}
/**
 * Authenticates a token (an agent's, or a `run` session's): well-formed,
 * known, not revoked or expired, verifier equal (constant time). A caller the
 * cache still holds is checked against the records and lent its kept keys.
 * @throws VaultError VLT-2040 (audited), VLT-3003 when the keys do not open,
 *   VLT-3023/3024 for a vault of another format.
 */
export function authenticate(ctx, token, source) {
    const bytes = token.expose();
    let fresh = null;
    const lent = ctx.callers.borrow(bytes, (k) => (fresh = stillValid(ctx, k)) !== null);
    if (lent !== null && fresh !== null)
        return lentSession(fresh, lent);
    const header = currentHeader(ctx);
    const denied = (actor, message) => refuse(ctx, header, accessEvent(ctx, 'denied', 'VLT-2040', actor, source), new VaultError('VLT-2040', message));
    const parsed = parseToken(bytes.toString('utf8'));
    const holder = parsed === null ? null : holderOf(ctx, header, parsed.agentId);
    if (parsed === null || holder === null)
        return denied(UNKNOWN_ACTOR);
    if (holder.barred !== null)
        return denied(agentActor(holder.agent.name), holder.barred);
    return openCaller(ctx, bytes, parsed.secret, holder, denied);
}
/**
 * A token's keys, just opened into `arena`: kept by the caller cache for the
 * caller's next requests (and lent to this one), or this request's alone.
 */
function opened(ctx, token, agent, k, arena) {
    if (!ctx.callers.enabled)
        return ownSession(agent, k, arena);
    return lentSession(agent, ctx.callers.keep(token, k, arena));
}
/**
 * The request is over: every key it opened is wiped; the caller's own keys
 * are wiped too, or given back to the caller cache that keeps them.
 */
export function endSession(s) {
    s.end();
}
