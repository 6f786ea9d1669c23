/**
 * The agent access path, in the one order that holds everywhere
 * (docs/how-it-works.md), each step a function of its own and release() their
 * sequence:
 * authenticate (authenticate.ts) -> look up -> check (token still good, lock,
 * scope and grant, entry, field, seed, host binding) -> charge the rate
 * windows -> audit -> decrypt -> release. Look up to audit are one write
 * transaction, so the charge, any violation or lock, and the audit record
 * commit together; nothing is released on any failure before the end. The
 * charge writes the agent's rate record alone (Tx.putRate), not its record.
 *
 * No existence oracle: a name that matches no entry and an entry outside the
 * scope take the same path, write the same kind of record and give the same
 * error bytes; and the caller's name index holds its own scope only, so
 * neither the host nor a copy of the store answers for any other name.
 *
 * Keys follow scope (schema 2): the caller's token opens its key pair, which
 * opens the grants of its scope (one data key per entry) and nothing else.
 */
import { ERRORS, VaultError } from '../../core/errors.js';
import { chargeRefused, decideRead, inScope, newSlots, recordViolation, } from '../../core/policy.js';
import { open, wipe } from '../../crypto/aead.js';
import { keyedHash } from '../../crypto/hash.js';
import { Secret } from '../../crypto/secret.js';
import { accessEvent } from '../audit/event.js';
import { authenticate, endSession } from './authenticate.js';
import { coalesceRefusal } from '../audit/refusals.js';
import { RECORD_BYTES } from '../../store/engine.js';
import { retryText, tooManyText } from './limit-text.js';
import { check, checkEntry } from './entry-check.js';
import { slots } from '../keys/slots.js';
import { parseSeed, totpCode } from '../entries/totp.js';
import { accessTokens } from '../entries/oauth.js';
import { asked, audit, auditRefused, keyOf, lockedBy, lookUp, refuseAgain, refuseAll, revokedText, sealedAccess, } from './access-records.js';
// Step 1 of the order has a module of its own; its callers import it from here.
export { authenticate, endSession };
// The proxy's reports have a module of their own, as step 1 does.
export { reportSignal } from './signal.js';
/** A locked agent's request: refused, and audited as `locked`. */
const LOCKED = { action: 'locked', code: 'VLT-2043' };
/** Check, the caller: its token still good and the agent not locked. */
function barred(a, looked) {
    const { agent, dead } = a.view;
    if (agent.revoked !== null || dead) {
        return refuseAgain(a, looked, {
            action: 'denied',
            code: 'VLT-2040',
            message: revokedText(agent),
        });
    }
    if (agent.rate.lock !== null)
        return refuseAgain(a, looked, LOCKED);
    return null;
}
/**
 * Check, one reference: in scope and granted (else VLT-2041, the same as no
 * such name), then the entry (once per entry and name: `entries` keeps it)
 * and the field, as checkEntry() and check() say.
 */
function checkRef(a, l, entries) {
    const { entry, entryId, ref } = l;
    const grant = entryId === null ? undefined : a.view.grants[entryId];
    if (entry === null || !inScope(a.view.scope, entryId) || grant === undefined)
        return { l, code: 'VLT-2041' };
    const k = JSON.stringify([entry.id, ref.entry]);
    let e = entries.get(k);
    if (e === undefined) {
        e = checkEntry(a.session, a.header, entry, grant, ref.entry);
        entries.set(k, e);
    }
    const caveats = a.view.agent.caveats?.[entry.id];
    const c = check(a.tx, entry, e, ref, { purpose: a.purpose, host: a.host, caveats });
    if ('code' in c)
        return { l, code: c.code };
    return { key: keyOf(ref), entry, field: ref.field, ...c };
}
/** Check, every reference: the ones to release, and the ones refused. */
function checkRefs(a, looked) {
    const targets = [];
    const refused = [];
    const absent = new Set();
    const entries = new Map();
    for (const l of looked) {
        const c = checkRef(a, l, entries);
        if ('code' in c && c.code === 'VLT-2044' && l.ref.optional === true)
            absent.add(l);
        else if ('code' in c)
            refused.push(c);
        else
            targets.push(c);
    }
    return { targets, refused, absent };
}
const UNBOUND = 'a reference sent to a host its entry is not bound to';
const OUTSIDE = 'a reference sent in a request its caveats do not allow';
/** Refusals that are attempts to send a value where the owner said it may not go. */
const SENT_ASTRAY = new Set(['VLT-2045', 'VLT-2060']);
/**
 * Any reference refused refuses the request, each bad one named in
 * `problems`. A name refused as out of scope (or unknown: the same) takes a
 * slot in the rate windows as a read would, once per name and window, so
 * guessing names costs the agent its next reads (the guardrail skill says
 * so). The refusal itself stays VLT-2041 (policy.ts chargeRefused).
 *
 * A reference to a host its entry is not bound to (VLT-2045) is an attempt
 * to send the value where the owner said it may not go: the request records
 * one violation however many such references it holds (policy.ts
 * recordViolation), each audited as `exfil` with the destination host, and
 * the second violation locks the agent.
 */
function refuseRefs(a, q, refused) {
    const { agent } = a.view;
    const now = a.ctx.now();
    let rate = agent.rate;
    const guessed = refused
        .filter((r) => r.code === 'VLT-2041')
        .map((r) => `?${keyedHash(a.session.indexKey, 'refused', r.l.ref.entry).toString('hex')}`);
    const unique = [...new Set(guessed)];
    const fresh = unique.length > 0 ? newSlots(rate, agent.limits, unique, now) : 0;
    if (unique.length > 0)
        rate = chargeRefused(rate, agent.limits, unique, now);
    const sent = refused.filter((r) => SENT_ASTRAY.has(r.code));
    const counted = sent.length > 0 ? recordViolation(rate, now) : null;
    if (counted !== null && counted.kind !== 'locked')
        rate = counted.state;
    if (rate !== agent.rate)
        a.tx.putRate(agent.id, rate);
    const denied = refused.filter((r) => !SENT_ASTRAY.has(r.code));
    if (sent.length === 0 && fresh === 0) {
        // Nothing new: names the hour already counts (or a full hour), a missing
        // field. Asked again and again, such refusals would fill the disk one
        // record each; they are coalesced per source like a locked agent's.
        const first = denied[0]?.code ?? 'VLT-2041';
        const e = accessEvent(a.ctx, 'denied', first, a.actor, a.source);
        coalesceRefusal(a.ctx, a.tx, a.header, e, () => auditRefused(a, 'denied', denied));
    }
    else
        auditRefused(a, 'denied', denied);
    auditRefused(a, 'exfil', sent);
    const why = sent.some((r) => r.code === 'VLT-2045') ? UNBOUND : OUTSIDE;
    if (counted?.kind === 'lockdown')
        return lockedBy(a, why);
    const problems = refused
        .flatMap(({ l, code }) => (q.positions.get(keyOf(l.ref)) ?? []).map((index) => ({ index, code })))
        .sort((x, y) => x.index - y.index);
    const first = problems[0]?.code ?? 'VLT-2041';
    const counts = counted === null
        ? ''
        : ` Violation recorded (${why}); a second within two hours locks the agent.`;
    const message = q.refs.length === 1
        ? first === 'VLT-2044'
            ? `Field not found: ${JSON.stringify(q.refs[0]?.field)}.`
            : counted === null
                ? undefined
                : `${ERRORS[first].message}${counts}`
        : `${problems.length} of ${q.refs.length} references cannot be resolved; nothing was released.${counts}`;
    return { ok: false, err: new VaultError(first, message, { problems }) };
}
/**
 * Charge: the entries to release, against the rate windows (policy.ts
 * decideRead). A violation is recorded and refuses the request; the second
 * locks the agent.
 */
function charge(a, looked, targets) {
    const { agent } = a.view;
    const ids = [...new Set(targets.map((t) => t.entry.id))];
    const d = decideRead(agent.rate, agent.limits, ids, a.ctx.now());
    if (d.kind === 'locked')
        return refuseAgain(a, looked, LOCKED);
    if (d.kind === 'too-many') {
        const message = tooManyText(a.view.agent.name, d);
        return refuseAgain(a, looked, { action: 'limited', code: 'VLT-2042', message });
    }
    a.tx.putRate(agent.id, d.state);
    if (d.kind === 'lockdown') {
        return refuseAll(a, looked, {
            ...LOCKED,
            message: 'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
        });
    }
    if (d.kind === 'limited') {
        // A retry while the violation's quiet time runs repeats it: coalesced like
        // a locked agent's, or a loop of them would write a record each for up to
        // an hour (the hour window's quiet time).
        const why = { action: 'limited', code: 'VLT-2042', message: retryText(d) };
        return d.counted ? refuseAll(a, looked, why) : refuseAgain(a, looked, why);
    }
    return null;
}
/**
 * Audit the release: one record per credential released (an entry, as
 * docs/how-it-works.md says), naming its fields, as the limits charged it.
 */
function auditRelease(a, looked) {
    const action = a.purpose.kind === 'fill'
        ? 'fill'
        : a.purpose.kind === 'ssh'
            ? 'ssh_sign'
            : a.view.agent.kind === 'ai'
                ? 'ai_read'
                : 'read';
    const byEntry = new Map();
    for (const l of looked) {
        const group = byEntry.get(l.entryId ?? '');
        if (group === undefined)
            byEntry.set(l.entryId ?? '', [l]);
        else
            group.push(l);
    }
    for (const [first, ...more] of byEntry.values()) {
        if (first === undefined)
            continue;
        const fields = [first, ...more].map((l) => l.ref.field).join(', ');
        audit(a, action, 'ok', { ...first, ref: { ...first.ref, field: fields } });
    }
}
/**
 * Look up, check, charge and audit, in the one write transaction: a refusal
 * at any step is audited (and charged, where the limits say so) and commits
 * with it; the request goes on to decrypt only when every step passed.
 */
function decide(a, q) {
    const looked = lookUp(a, q.distinct);
    const bar = barred(a, looked);
    if (bar !== null)
        return bar;
    const { targets, refused, absent } = checkRefs(a, looked);
    if (refused.length > 0)
        return refuseRefs(a, q, refused);
    const present = absent.size === 0 ? looked : looked.filter((l) => !absent.has(l));
    // A public key is no secret: listing one is audited, never charged (ssh.ts).
    const limited = a.purpose.kind === 'ssh_public' ? null : charge(a, present, targets);
    if (limited !== null)
        return limited;
    auditRelease(a, present);
    return { ok: true, targets, header: a.header };
}
/**
 * Decrypt, after the audit record is committed: every target's value (for
 * `totp`, the current code), or none, the ones opened wiped, on any failure.
 * @throws VaultError VLT-3003
 */
function decrypt(ctx, header, targets, purpose) {
    const values = new Map();
    try {
        for (const t of targets) {
            if (t.oauth !== undefined)
                continue;
            const value = open(t.dataKey, t.record.value, slots.field(header.vaultId, t.entry.id, t.field, t.record.version, t.record.gen));
            if (!value)
                throw new VaultError('VLT-3003');
            values.set(t.key, totpOr(purpose, value, ctx.now()));
        }
        return values;
    }
    catch (err) {
        for (const v of values.values())
            v.wipe();
        throw err;
    }
}
/**
 * Releases the fields `refs` name, all of them or none: for `get` and `totp`
 * one reference, for a render or a proxy fill all distinct references of the
 * request at once, charged to the limits together. Values come back in the
 * order of `refs` (duplicates resolved once; an optional field the entry
 * lacks is undefined). The order of every access
 * (docs/how-it-works.md): look up, check, charge, audit (one write transaction),
 * then decrypt and release.
 * @throws VaultError VLT-2040/2041/2042/2043/2044 (each audited; for several
 *   references, `problems` names each bad one), VLT-3003, VLT-3004.
 */
export async function release(ctx, session, refs, purpose, source) {
    const q = asked(refs);
    const host = purpose.kind === 'fill' ? purpose.host : purpose.kind === 'ssh' ? purpose.server : null;
    // Grouped with the other requests of this moment: one durable flush for all.
    const decided = await ctx.commitGrouped((tx) => decide(sealedAccess(tx, ctx, session, source, purpose, host), q), 
    // At most one record per distinct reference (AUDITED_REFUSALS + 1 when refused), and a lock's.
    (q.distinct.length + 1) * RECORD_BYTES);
    if (!decided.ok)
        throw decided.err;
    const values = decrypt(ctx, decided.header, decided.targets, purpose);
    const who = { agent: session.agent.name, source, host };
    await accessTokens(ctx, decided.header, decided.targets, values, who);
    return refs.map((r) => values.get(keyOf(r)));
}
function totpOr(purpose, value, now) {
    if (purpose.kind !== 'totp')
        return new Secret(value);
    try {
        return Secret.fromString(totpCode(parseSeed(value.toString('utf8')), now));
    }
    finally {
        wipe(value);
    }
}
