/**
 * The owner's agent operations. An agent's token is shown once and never
 * stored: the store keeps a KDF verifier of its secret, and the agent's box
 * secret key wrapped under a key derived from it. The data key of each entry
 * in its scope, and its own index key, are sealed to the agent's public key
 * (grants.ts), so the owner can widen a scope later without the token, and a
 * token with a copy of the store opens its scope and nothing else. Every
 * change checks the record's MAC first and renews it.
 */
import { VaultError, quote } from '../../core/errors.js';
import { checkSimpleName } from '../../core/names.js';
import { MAX_RULES, onlyNarrows, parseCaveat, showCaveat } from '../../core/caveats.js';
import { FRESH_RATE_STATE, lockByHand, raisesLimits, usage, valuesAvailable, } from '../../core/policy.js';
import { wipe } from '../../crypto/aead.js';
import { addGrants, agentMacHolds, dropGrants, openName, recordIndexKey, rotateEntry, verifyAgent, withAgentMac, } from '../keys/grants.js';
import { appendAudit } from '../audit/log.js';
import { entryIds } from '../entries/entries.js';
import { ownerEvent } from '../audit/event.js';
import { followScope } from './sessions.js';
import { endedRecord, holderKeys, tokenText, withNewToken } from './token-holder.js';
import { agentById, agentByName } from './names.js';
import { rotateEach } from '../keys/rotation.js';
/**
 * Rotates each entry of `ids` that still exists, after the record losing it
 * has dropped its grant: whatever that record saved opens nothing set later,
 * and the entries' current keys are no longer the ones it held.
 */
function rotateLost(tx, s, header, ids) {
    for (const id of ids) {
        const e = tx.entry(id);
        if (e !== null)
            wipe(rotateEntry(tx, s, header, e).dataKey);
    }
}
/**
 * Creates an agent and returns its token (the only time it exists outside the caller).
 * @throws VaultError VLT-4003 name taken, VLT-4001 unknown entry in scope, VLT-1002 bad name.
 */
export function addAgent(ctx, s, req, source) {
    const name = checkSimpleName('agent', req.name);
    return withNewToken((t) => {
        ctx.commit((tx) => {
            // The name is taken by a live record that carries it, whatever the rows say: a row
            // is only a hint (agent-names.ts). A row of the name that leads elsewhere (one
            // moved in the store, left behind by `agent revoke --id`) is overwritten below.
            if (tx.agents().some((a) => a.revoked === null && a.name === name)) {
                throw new VaultError('VLT-4003', `An agent named ${quote(name)} already exists.`);
            }
            const header = ctx.header(tx);
            const id = t.id.toString('hex');
            const entries = entryIds(tx, s, [...new Set(req.scope)]);
            const record = withAgentMac(s, {
                id,
                name,
                kind: req.kind,
                scope: entries.map((e) => e.id),
                limits: req.limits,
                rate: FRESH_RATE_STATE,
                ...holderKeys(s, header, 'agent', t, entries),
                created: ctx.now(),
                revoked: null,
                mac: Buffer.alloc(0),
            });
            tx.putAgent(record);
            tx.putAgentName(name, id);
            appendAudit(tx, header, ownerEvent(ctx, 'agent_add', source, { subject: name }));
        });
        return { token: tokenText(t) };
    });
}
function entryName(s, header, e) {
    const dataKey = s.dataKey(header, e);
    try {
        const name = openName(header, dataKey, e);
        if (name === null)
            throw new VaultError('VLT-3003');
        return name;
    }
    finally {
        wipe(dataKey);
    }
}
function summarise(tx, s, header, a, now) {
    const scope = a.scope
        .map((id) => tx.entry(id))
        .filter((e) => e !== null)
        .map((e) => entryName(s, header, e))
        .sort((x, y) => x.localeCompare(y));
    const recent = a.rate.violations.filter((t) => now - t < 2 * 3_600_000);
    const state = a.revoked !== null
        ? 'revoked'
        : !agentMacHolds(s, a)
            ? 'altered'
            : a.rate.lock !== null
                ? 'locked'
                : recent.length > 0
                    ? 'violation'
                    : 'active';
    return {
        id: a.id,
        name: a.name,
        kind: a.kind,
        state,
        scope,
        // Groups by entry name, as the owner named them (stored by id).
        limits: { ...a.limits, ...groupNames(tx, s, header, a) },
        usage: usage(a.rate, now),
        valuesLeft: valuesAvailable(a.rate, a.limits, now),
        violations: recent,
        lockedAt: a.rate.lock?.at ?? null,
        created: a.created,
        caveats: Object.entries(a.caveats ?? {})
            .map(([id, rules]) => {
            const e = tx.entry(id);
            return { entry: e === null ? id : entryName(s, header, e), rules };
        })
            .sort((x, y) => x.entry.localeCompare(y.entry)),
    };
}
function groupNames(tx, s, header, a) {
    if (a.limits.groups === undefined)
        return {};
    const name = (id) => {
        const e = tx.entry(id);
        return e === null ? id : entryName(s, header, e);
    };
    const groups = Object.entries(a.limits.groups).map(([g, ids]) => [g, ids.map(name)]);
    return { groups: Object.fromEntries(groups) };
}
export function listAgents(ctx, s) {
    const now = ctx.now();
    return ctx.store().read((tx) => {
        const header = ctx.header(tx);
        return tx
            .agents()
            .filter((a) => a.revoked === null)
            .map((a) => summarise(tx, s, header, a, now))
            .sort((x, y) => x.name.localeCompare(y.name));
    });
}
export function showAgent(ctx, s, name) {
    return ctx
        .store()
        .read((tx) => summarise(tx, s, ctx.header(tx), agentByName(tx, name), ctx.now()));
}
/** One owner change to an agent, with its audit record, in one transaction. */
function changeAgent(ctx, s, name, source, change) {
    return ctx.commit((tx) => {
        const header = ctx.header(tx);
        const { next, events } = change(tx, header, verifyAgent(s, agentByName(tx, name)));
        // Summarised as stored, with its new MAC: the record before it would read as `altered`.
        const stored = withAgentMac(s, next);
        tx.putAgent(stored);
        for (const e of events)
            appendAudit(tx, header, e);
        return summarise(tx, s, header, stored, ctx.now());
    });
}
export function scopeAgent(ctx, s, req, source) {
    return changeAgent(ctx, s, req.name, source, (tx, header, a) => {
        const added = entryIds(tx, s, req.add);
        const removed = entryIds(tx, s, req.rm);
        const gone = new Set(removed.map((e) => e.id).filter((id) => a.scope.includes(id)));
        const scope = [...new Set([...a.scope, ...added.map((e) => e.id)])].filter((id) => !gone.has(id));
        const indexKey = recordIndexKey(s, 'agent', a.id);
        const kept = dropGrants(a, gone);
        const fresh = added.filter((e) => !gone.has(e.id));
        // Taking entries out only tightens; putting one in needs the passphrase itself.
        if (fresh.some((e) => !a.scope.includes(e.id)))
            s.requireProof('Widening a scope');
        const granted = addGrants(s, header, a.publicKey, indexKey, kept, fresh);
        // The agent's own record and its live sessions first, without the lost
        // grants, so the rotation does not re-grant them; the sessions gain what
        // the agent gains here, while the owner's key is at hand (issue 23).
        const next = withAgentMac(s, { ...a, scope, ...granted });
        tx.putAgent(next);
        followScope(tx, s, header, next, { gained: fresh, lost: gone }, ctx.now());
        rotateLost(tx, s, header, gone);
        const current = tx.agent(a.id) ?? a;
        // One record per name asked, `+` or `-`, with the entry it named.
        const scoped = (field, names, found) => names.map((entry, i) => ownerEvent(ctx, 'agent_scope', source, {
            subject: a.name,
            entry,
            field,
            entryId: found[i]?.id,
        }));
        const events = [...scoped('+', req.add, added), ...scoped('-', req.rm, removed)];
        return { next: current, events };
    });
}
/** A values-a-minute limit as stored: absent (the default) until the owner sets one. */
const values = (n) => (n === undefined ? {} : { valuesPerMinute: n });
export function setLimits(ctx, s, req, source) {
    return changeAgent(ctx, s, req.name, source, (_tx, _h, a) => {
        const limits = {
            perMinute: req.perMinute ?? a.limits.perMinute,
            perHour: req.perHour ?? a.limits.perHour,
            ...values(req.valuesPerMinute ?? a.limits.valuesPerMinute),
        };
        // Lowering a limit only tightens; raising one needs the passphrase itself.
        if (raisesLimits(a.limits, limits))
            s.requireProof('Raising an agent limit');
        return {
            next: { ...a, limits },
            events: [ownerEvent(ctx, 'agent_limits', source, { subject: a.name })],
        };
    });
}
/**
 * Sets the request caveats of agent `name` for `entry` (core/caveats.ts):
 * `rules` replace the ones it had, `clear` lifts them. Rules are kept in
 * their one written form. Going from none to some, or keeping only rules it
 * had, narrows; anything else needs the passphrase itself (VLT-2055).
 * @throws VaultError VLT-2062 a rule that does not parse, VLT-1001 neither or both of rules and clear.
 */
export function setCaveats(ctx, s, req, source) {
    if (req.clear === req.rules.length > 0)
        throw new VaultError('VLT-1001', 'Give --allow <rule> (one or more), or --clear.');
    const rules = [...new Set(req.rules.map(parsedRule))];
    if (rules.length > MAX_RULES)
        throw new VaultError('VLT-2062', `At most ${MAX_RULES} rules per agent and entry.`);
    return changeAgent(ctx, s, req.name, source, (tx, _h, a) => {
        const [entry] = entryIds(tx, s, [req.entry]);
        if (entry === undefined)
            throw new VaultError('VLT-4001');
        const before = a.caveats?.[entry.id] ?? null;
        const after = req.clear ? null : rules;
        if (!onlyNarrows(before, after))
            s.requireProof('Widening or lifting request caveats');
        const caveats = Object.fromEntries(Object.entries(a.caveats ?? {}).filter(([id]) => id !== entry.id));
        if (after !== null)
            caveats[entry.id] = after;
        const rest = { ...a };
        delete rest.caveats;
        const next = Object.keys(caveats).length === 0 ? rest : { ...rest, caveats };
        const field = req.clear ? '-' : rules.join(' | ');
        return {
            next,
            events: [
                ownerEvent(ctx, 'agent_caveats', source, {
                    subject: a.name,
                    entry: req.entry,
                    entryId: entry.id,
                    field,
                }),
            ],
        };
    });
}
/**
 * Declares `entries` one credential for the agent's minute window (its hour
 * still counts each), or, with none, removes the group. Each entry must be in
 * the agent's scope. Declaring or growing a group lets the agent read more a
 * minute, so it needs the passphrase itself, as raising a limit does.
 * @throws VaultError VLT-4001 an entry that does not exist; VLT-1002 one
 *   outside the agent's scope; VLT-2055 widening without the passphrase.
 */
export function groupAgent(ctx, s, req, source) {
    return changeAgent(ctx, s, req.name, source, (tx, _h, a) => {
        const found = entryIds(tx, s, req.entries);
        const ids = [...new Set(found.map((e) => e.id))];
        const others = Object.fromEntries(Object.entries(a.limits.groups ?? {}).filter(([g]) => g !== req.group));
        const groups = ids.length > 0 ? { ...others, [req.group]: ids } : others;
        const limits = { ...a.limits, groups };
        // First: a hook on an unlocked terminal learns nothing about the scope.
        if (raisesLimits(a.limits, limits))
            s.requireProof('Grouping entries as one credential');
        const outside = req.entries.find((_n, i) => !a.scope.includes(found[i]?.id ?? ''));
        if (outside !== undefined) {
            throw new VaultError('VLT-1002', `${quote(outside)} is not in ${quote(a.name)}'s scope: \`vault-cli agent scope ${a.name} --add <entry>\` first.`);
        }
        return {
            next: { ...a, limits },
            events: [ownerEvent(ctx, 'agent_limits', source, { subject: a.name, entry: req.group })],
        };
    });
}
/** A rule the owner gave, in its one written form; VLT-2062 naming what is wrong with it. */
function parsedRule(rule) {
    const c = parseCaveat(rule);
    if ('problem' in c)
        throw new VaultError('VLT-2062', `Not a request caveat: ${JSON.stringify(rule)}: ${c.problem}.`);
    return showCaveat(c);
}
/** Locks by hand. Lifting a lock needs the hardware key; nothing here can. */
export function lockAgent(ctx, s, name, source) {
    // No MAC check and no new MAC: a lock only tightens, so it must work on an
    // altered record too, and must not vouch for what was altered (the rate
    // state is outside the MAC).
    return ctx.commit((tx) => {
        const header = ctx.header(tx);
        const a = agentByName(tx, name);
        const next = { ...a, rate: lockByHand(a.rate, ctx.now()) };
        tx.putRate(a.id, next.rate);
        appendAudit(tx, header, ownerEvent(ctx, 'agent_lock', source, { subject: a.name }));
        return summarise(tx, s, header, next, ctx.now());
    });
}
/**
 * Revokes for good: the verifier and wrapped keys are erased, the record stays
 * (so its token is told "revoked", not "unknown") and the name is free again;
 * its rate record goes (Tx.putAgent of a revoked agent).
 * The revocation is its own commit and comes first: an entry the agent held
 * whose rotation fails (a field record it altered, VLT-3020) must not leave
 * it able to read. Each entry it held is then rotated in a commit of its own;
 * those that fail are returned (by name, or id when the name does not open)
 * and stay queued for rotation at the owner's next command.
 * @throws VaultError VLT-4002 no such agent, VLT-3021 its name row was altered.
 */
export function revokeAgent(ctx, s, target, source) {
    const lost = ctx.commit((tx) => {
        const header = ctx.header(tx);
        const a = 'id' in target ? agentById(tx, target.id) : agentByName(tx, target.name);
        // No MAC check: a tampered agent is still revoked. Its sessions go with it.
        tx.putAgent(withAgentMac(s, endedRecord(a, ctx.now())));
        const held = new Set(Object.keys(a.grants ?? {}));
        for (const r of tx.sessions()) {
            if (r.agentId !== a.id || r.revoked !== null)
                continue;
            for (const id of Object.keys(r.grants ?? {}))
                held.add(id);
            tx.putSession(endedRecord(r, ctx.now()));
        }
        // Only the row that leads to this record: a row of its name moved elsewhere is not its own.
        if (tx.agentIdByName(a.name) === a.id)
            tx.removeAgentName(a.name);
        // Queued first, so an entry whose rotation below fails is tried again later.
        tx.putPendingRotation([...new Set([...tx.pendingRotation(), ...held])]);
        appendAudit(tx, header, ownerEvent(ctx, 'agent_revoke', source, { subject: a.name }));
        return [...held];
    });
    const unrotated = rotateEach(ctx, s, lost).map(({ id, code }) => ({
        entry: shownEntry(ctx, s, id),
        code,
    }));
    return { unrotated };
}
/** An entry's name for a report, or its id when the name does not open. */
function shownEntry(ctx, s, id) {
    try {
        return ctx.store().read((tx) => {
            const e = tx.entry(id);
            return e === null ? id : entryName(s, ctx.header(tx), e);
        });
    }
    catch {
        return id;
    }
}
