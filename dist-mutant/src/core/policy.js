/**
 * The agent access policy as pure functions: scope, rolling rate windows,
 * violations and the lockdown state machine of the specification. The host
 * carries out the decision inside one write transaction; nothing here does I/O,
 * and the clock is a parameter.
 */
/** The default of Limits.valuesPerMinute: ten a second on average, as many at once. */
export const VALUES_PER_MINUTE = 600;
/** Without valuesPerMinute: an agent made without one has VALUES_PER_MINUTE. */
export const DEFAULT_LIMITS = { perMinute: 3, perHour: 10 };
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
/** A second violation within this span of the first locks the agent. */
export const VIOLATION_SPAN_MS = 2 * HOUR_MS;
export const FRESH_RATE_STATE = {
    reads: {},
    violations: [],
    lock: null,
    quietUntil: null,
};
/**
 * What an agent's rate state reads as when the store holds none for it
 * (damage: its record lost): locked, since the lock and the windows it held
 * are unknown, until the owner unlocks it with the hardware key.
 */
export const LOST_RATE_STATE = {
    reads: {},
    violations: [],
    lock: { at: 0, reason: 'lost' },
    quietUntil: null,
};
/** A window contains a read made less than `span` ms before `now`. */
function inWindow(at, now, span) {
    return now - at < span && at <= now;
}
function prune(state, now) {
    const reads = {};
    for (const [id, at] of Object.entries(state.reads)) {
        if (inWindow(at, now, HOUR_MS))
            reads[id] = at;
    }
    const violations = state.violations.filter((at) => inWindow(at, now, VIOLATION_SPAN_MS));
    const quiet = state.quietUntil ?? null;
    return {
        reads,
        violations,
        lock: state.lock,
        quietUntil: quiet !== null && now < quiet ? quiet : null,
        ...(state.values == null ? {} : { values: state.values }),
        owed: state.owed != null && violations.includes(state.owed.at) ? state.owed : null,
        guessed: state.guessed ?? null,
    };
}
/**
 * The values-a-minute limit of `limits`, whole, and never below the distinct
 * credentials a minute: an owner who allows 1,000 distinct entries a minute
 * (a render of that many) has allowed that many values too.
 */
export function valuesLimit(limits) {
    const given = Math.floor(limits.valuesPerMinute ?? VALUES_PER_MINUTE);
    return Math.max(1, given, Math.floor(limits.perMinute));
}
/** Whether `next` allows more than `old` in any window: a limit raised, or the values bucket. */
export function raisesLimits(old, next) {
    return (next.perMinute > old.perMinute ||
        next.perHour > old.perHour ||
        valuesLimit(next) > valuesLimit(old) ||
        joinsGroup(old, next));
}
/** Whether `next` puts an entry into a group it was not in under `old`: a wider minute. */
function joinsGroup(old, next) {
    return Object.entries(next.groups ?? {}).some(([name, ids]) => ids.length > 1 && ids.some((id) => !(old.groups?.[name] ?? []).includes(id)));
}
/** What the minute window counts an entry as: its group, or itself. */
export function minuteUnit(limits) {
    const of = new Map();
    for (const [name, ids] of Object.entries(limits.groups ?? {}))
        for (const id of ids)
            if (!of.has(id))
                of.set(id, `group:${name}`);
    return (id) => of.get(id) ?? id;
}
/**
 * What the values bucket holds at `now`: what was left, refilled at the
 * limit's rate since, never above the limit (a clock set back refills
 * nothing).
 */
function valuesLeft(state, limits, now) {
    const cap = valuesLimit(limits);
    const b = state.values;
    if (b == null)
        return cap;
    const refill = (Math.max(0, now - b.at) * cap) / MINUTE_MS;
    return Math.min(cap, b.left + refill);
}
/** The units (minuteUnit) read within `span`, each at the latest read of one of its entries. */
function unitTimes(reads, unit, span, now) {
    const times = new Map();
    for (const [id, at] of Object.entries(reads)) {
        if (!inWindow(at, now, span))
            continue;
        const u = unit(id);
        times.set(u, Math.max(at, times.get(u) ?? at));
    }
    return times;
}
/**
 * When a window would have room for `wanted`: the time the oldest reads not in
 * `wanted` have aged out far enough, or null if `wanted` alone is too many.
 */
function retryTime(reads, wanted, w, now) {
    const asked = new Set([...wanted].map(w.unit));
    const others = [...unitTimes(reads, w.unit, w.span, now)]
        .filter(([u]) => !asked.has(u))
        .map(([, at]) => at)
        .sort((a, b) => a - b);
    const excess = others.length + asked.size - w.limit;
    if (excess > others.length)
        return null;
    const t = others[excess - 1];
    return t === undefined ? now : t + w.span;
}
function distinctInWindow(reads, wanted, span, now, unit = (id) => id) {
    const units = new Set(unitTimes(reads, unit, span, now).keys());
    for (const id of wanted)
        units.add(unit(id));
    return units.size;
}
function windowsOf(limits) {
    return [
        { window: 'minute', limit: limits.perMinute, span: MINUTE_MS, unit: minuteUnit(limits) },
        { window: 'hour', limit: limits.perHour, span: HOUR_MS, unit: (id) => id },
    ];
}
/**
 * The slots the latest refusal's names took (RateState.guessed), given over
 * to the names this request reads for the first time in the hour, one each:
 * the retry of a typo takes its slot instead of a second one.
 */
function takeOver(s, wanted) {
    const guessed = s.guessed ?? [];
    if (guessed.length === 0)
        return s;
    let fresh = [...wanted].filter((id) => s.reads[id] === undefined).length;
    const reads = { ...s.reads };
    for (const g of guessed) {
        if (fresh === 0)
            break;
        if (reads[g] === undefined)
            continue;
        delete reads[g];
        fresh--;
    }
    return { ...s, reads, guessed: null };
}
/**
 * After an allowed request: the violation owed forgiven if this was its
 * retry, asking for nothing new (no entry outside the refused request the
 * hour has not counted); given up if the request asked for something new.
 */
function settle(s, wanted) {
    const owed = s.owed ?? null;
    if (owed === null || s.quietUntil != null)
        return s;
    const ids = [...wanted];
    if (!asksNothingNew(s, owed, ids))
        return { ...s, owed: null };
    if (!ids.some((id) => owed.ids.includes(id)))
        return s;
    const violations = [...s.violations];
    const i = violations.indexOf(owed.at);
    if (i >= 0)
        violations.splice(i, 1);
    return { ...s, violations, owed: null };
}
/** Whether `ids` ask for nothing outside the owed request the hour has not counted. */
const asksNothingNew = (s, owed, ids) => ids.every((id) => owed.ids.includes(id) || s.reads[id] !== undefined);
/** Whether `wanted` is the owed request again: allowed at its retry time, it forgives the violation. */
function retriesOwed(s, wanted) {
    const owed = s.owed ?? null;
    const ids = [...wanted];
    return owed !== null && asksNothingNew(s, owed, ids) && ids.some((id) => owed.ids.includes(id));
}
/**
 * The windows `wanted` would take over their limit. A request that adds
 * nothing to a window (re-reads) is never over it, even when refused names
 * have filled it.
 */
function overs(reads, wanted, windows, now) {
    return windows.filter((w) => {
        const after = distinctInWindow(reads, wanted, w.span, now, w.unit);
        return after > w.limit && after > distinctInWindow(reads, new Set(), w.span, now, w.unit);
    });
}
/**
 * Decides a read of `entryIds` (all of them or none: render charges at once).
 * Re-reading an entry already counted in a window costs nothing in that
 * window; every entry released takes one from the values bucket, re-reads
 * too. While a violation's quiet time runs a re-read does not renew its
 * entry's time, so the retry time the agent was told stays true; the retry
 * itself, asking for nothing new, forgives the violation (settle).
 */
export function decideRead(state, limits, entryIds, now) {
    if (state.lock !== null)
        return { kind: 'locked' };
    const wanted = new Set(entryIds);
    const base = prune(state, now);
    const s = takeOver(base, wanted);
    // Refused, the request takes nothing over: the names keep their slots.
    const kept = { ...base, guessed: null };
    const windows = windowsOf(limits);
    // Not over-reading but a request too big for the limits: told, never counted.
    const alone = windows.find((w) => new Set([...wanted].map(w.unit)).size > w.limit);
    if (alone !== undefined) {
        const n = new Set([...wanted].map(alone.unit)).size;
        return { kind: 'too-many', window: alone.window, limit: alone.limit, wanted: n };
    }
    if (overs(s.reads, wanted, windows, now).length > 0) {
        // Judged as the state stands without the take-over, so the retry time
        // told fits the state kept.
        const over = overs(kept.reads, wanted, windows, now);
        const retries = over.map((w) => retryTime(kept.reads, wanted, w, now));
        const retryAt = retries.includes(null) ? null : Math.max(...retries);
        const worst = over[over.length - 1];
        return violated(kept, wanted, retryAt, worst?.window ?? 'minute', now, worst?.span ?? MINUTE_MS);
    }
    const cap = valuesLimit(limits);
    const left = valuesLeft(s, limits, now);
    if (wanted.size > left) {
        // Never more than the bucket holds: the minute's distinct limit, which passed, is at most cap.
        const retryAt = now + Math.ceil(((wanted.size - left) * MINUTE_MS) / cap);
        return violated(kept, wanted, retryAt, 'values a minute', now, MINUTE_MS);
    }
    const quiet = s.quietUntil != null;
    const reads = { ...s.reads };
    for (const id of wanted)
        if (!quiet || reads[id] === undefined)
            reads[id] = now;
    const values = { left: left - wanted.size, at: now };
    return { kind: 'allow', state: { ...settle(s, wanted), reads, values } };
}
/**
 * A read over a limit: refused, and a violation unless it belongs to the one
 * whose quiet time runs (the second within VIOLATION_SPAN_MS locks).
 */
function violated(s, wanted, retryAt, window, now, span) {
    if (s.quietUntil !== null && s.quietUntil !== undefined) {
        // The same request again is told the same; another is told it clears nothing.
        const clears = retriesOwed(s, wanted);
        return { kind: 'limited', state: s, retryAt, window, counted: false, clears };
    }
    const violations = [...s.violations, now];
    if (s.violations.length > 0) {
        const lock = { at: now, reason: 'violations' };
        const state = { ...s, violations, lock, quietUntil: null, owed: null };
        return { kind: 'lockdown', state };
    }
    const quietUntil = retryAt ?? now + span;
    // A loop over the values bucket retries the same request too: only a
    // distinct window's violation can be forgiven by its retry.
    const owed = window === 'values a minute' ? null : { at: now, ids: [...wanted] };
    return {
        kind: 'limited',
        state: { ...s, violations, quietUntil, owed },
        retryAt,
        window,
        counted: true,
        clears: owed !== null,
    };
}
/**
 * Charges names refused as out of scope (or unknown: the same) to the rate
 * windows, as reads of credentials would be: each distinct name takes a slot
 * in the minute and the hour, so an agent that guesses runs into VLT-2042 on
 * its next read. The refusal itself stays VLT-2041 and records no violation
 * (the specification: a read outside the scope leaves the agent active).
 * Names are added only while the hour has room, so the stored state stays
 * within the agent's own hourly limit however much it guesses.
 */
export function chargeRefused(state, limits, ids, now) {
    const s = prune(state, now);
    // Told to wait for its retry time, the agent is charged nothing more, so
    // the retry at that time still fits ("retry after T" stays true).
    if (s.quietUntil != null)
        return s;
    const reads = { ...s.reads };
    const guessed = [];
    let room = limits.perHour - distinctInWindow(reads, new Set(), HOUR_MS, now);
    for (const id of ids) {
        if (reads[id] !== undefined) {
            reads[id] = now;
            guessed.push(id);
        }
        else if (room > 0) {
            reads[id] = now;
            guessed.push(id);
            room--;
        }
    }
    return { ...s, reads, guessed };
}
/**
 * How many new slots charging `ids` (chargeRefused) would take in the hour:
 * names not counted there yet, as far as the hour has room. Zero means the
 * refusal only repeats what the windows already hold, or the hour is full:
 * the host then audits it coalesced (refusal-audit.ts), so a loop of refused
 * names, the same one or a new one each time, cannot fill the disk.
 */
export function newSlots(state, limits, ids, now) {
    const s = prune(state, now);
    if (s.quietUntil != null)
        return 0;
    const room = limits.perHour - distinctInWindow(s.reads, new Set(), HOUR_MS, now);
    const fresh = new Set(ids.filter((id) => s.reads[id] === undefined)).size;
    return Math.max(0, Math.min(room, fresh));
}
/**
 * Records a violation of the agent's limits that is no read: an attempt to
 * send a value where it may not go (a reference to a host its entry is not
 * bound to, a Host that is not the tunnel's destination). It counts toward
 * the two-strike lockdown exactly as an exceeded rate limit does, and the two
 * kinds add up. Never merged into a rate limit's quiet time: that time holds
 * the refusals of one burst over the limits, and an exfiltration attempt is
 * no retry of a read.
 */
export function recordViolation(state, now) {
    if (state.lock !== null)
        return { kind: 'locked' };
    const s = prune(state, now);
    const violations = [...s.violations, now];
    if (s.violations.length > 0) {
        const lock = { at: now, reason: 'violations' };
        return { kind: 'lockdown', state: { ...s, violations, lock, quietUntil: null } };
    }
    return { kind: 'recorded', state: { ...s, violations } };
}
/** The owner locks an agent by hand. */
export function lockByHand(state, now) {
    if (state.lock !== null)
        return state;
    return { ...state, lock: { at: now, reason: 'manual' } };
}
/**
 * The owner lifts a lock with the hardware key: the violations that led to it
 * are forgiven too, so the next one is a first violation again. Reads stay in
 * their windows.
 */
export function unlock(state) {
    return { ...state, lock: null, violations: [], quietUntil: null, owed: null, guessed: null };
}
/** Distinct reads in the current minute and hour, for `agent show` and the dashboard. */
export function usage(state, now) {
    const none = new Set();
    return {
        minute: distinctInWindow(state.reads, none, MINUTE_MS, now),
        hour: distinctInWindow(state.reads, none, HOUR_MS, now),
    };
}
/** How many credentials the values bucket would release now (`agent show`). */
export function valuesAvailable(state, limits, now) {
    return Math.floor(valuesLeft(state, limits, now));
}
/** The scope check: a set of entry ids the agent may read. */
export function inScope(scope, entryId) {
    return entryId !== null && scope.includes(entryId);
}
