import { appendAudit } from './log.js';
import { RECORD_BYTES } from '../../store/engine.js';
/** How long a window counts: a count reaches the log within a minute, and a kill loses at most one. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Refusals of one kind from one source recorded in full per window, before the marker. */
export const FULL_PER_WINDOW = 3;
/** Sources of one group whose refusals of one kind get records of their own, per window. */
export const SOURCES_PER_WINDOW = 10;
/** How long counts that could not be written wait before the next try. */
const RETRY_MS = 5_000;
/** The source with the pid left out: the processes of one user coming in one way. */
export function groupOf(source) {
    return source.replace(/\bpid:\d+/, 'pid:*');
}
function kindOf(e) {
    return JSON.stringify([e.action, e.outcome, e.actor]);
}
function at(ms) {
    return new Date(ms).toISOString();
}
/** The record of refusals counted: the kind repeated, the count in the (sealed) entry. */
function countEvent(t, now) {
    const n = t.counted;
    const entry = `(${n} more refusal${n === 1 ? '' : 's'} of this kind from this source, ${at(t.countedSince)} to ${at(now)})`;
    return { ...t.like, at: now, entryId: null, entry, field: null, host: null };
}
function markerEvent(e, t) {
    const entry = `(further refusals of this kind from this source are counted until ${at(t.end)})`;
    return { ...e, entryId: null, entry, field: null };
}
/** The coalescing state of one host's vault. */
export class RefusalAudit {
    ctx;
    #tallies = new Map();
    #groups = new Map();
    #timer = null;
    constructor(ctx) {
        this.ctx = ctx;
    }
    /**
     * What to append for refusal `e` (in the caller's transaction): the counts
     * of windows that have ended, then `e` itself, its marker, or nothing (it is
     * counted). The state changes at once; `undo` when the commit fails.
     * Without `withDue`, ended windows' counts are left to the timer.
     */
    plan(e, withDue = true) {
        const due = withDue ? this.#takeDue(e.at, false) : [];
        const events = due.map(([, , ev]) => ev);
        const kind = kindOf(e);
        let key = `${e.source}\0${kind}`;
        let t = this.#tallies.get(key);
        if (t === undefined) {
            const group = groupOf(e.source);
            // Per kind too: one kind of refusal flooding in does not use up another kind's budget.
            const g = this.#groupWindow(`${group}\0${kind}`, e.at);
            if (g.sources < SOURCES_PER_WINDOW || group === e.source) {
                g.sources++;
                t = this.#open(key, e);
            }
            else {
                key = `${group}\0${kind}`;
                // A group's tally starts at its marker: its sources' first refusals were in full.
                t = this.#tallies.get(key) ?? this.#open(key, { ...e, source: group }, FULL_PER_WINDOW);
            }
        }
        // Without `withDue` a tally may be past its end: it goes on counting, and
        // the timer (due 10 ms after that end) writes its count with the rest.
        const mine = t;
        let unwrite = () => { };
        if (mine.full < FULL_PER_WINDOW) {
            mine.full++;
            events.push(e);
            unwrite = () => void mine.full--;
        }
        else if (!mine.marked) {
            mine.marked = true;
            events.push(markerEvent({ ...e, source: mine.like.source }, mine));
            unwrite = () => void (mine.marked = false);
        }
        else {
            const since = mine.countedSince;
            if (mine.counted === 0)
                mine.countedSince = e.at;
            mine.counted++;
            unwrite = () => {
                mine.counted--;
                mine.countedSince = since;
            };
        }
        return {
            events,
            undo: () => {
                unwrite();
                this.#recount(due);
            },
        };
    }
    /** Writes every count not yet written (the owner reads the log, or the host stops). */
    flush() {
        this.#write(this.#takeDue(this.ctx.now(), true));
    }
    #open(key, e, full = 0) {
        const t = {
            like: e,
            start: e.at,
            end: e.at + REFUSAL_WINDOW_MS,
            full,
            marked: false,
            counted: 0,
            countedSince: e.at,
        };
        this.#tallies.set(key, t);
        this.#schedule();
        return t;
    }
    #groupWindow(group, now) {
        let g = this.#groups.get(group);
        if (g === undefined || g.end <= now) {
            g = { end: now + REFUSAL_WINDOW_MS, sources: 0 };
            this.#groups.set(group, g);
        }
        return g;
    }
    /**
     * Takes the counts to write: of every window ended by `now` (whose tally
     * goes), or of every tally (`all`: the tallies stay, their counts start again).
     */
    #takeDue(now, all) {
        const out = [];
        for (const [key, t] of this.#tallies) {
            const ended = t.end <= now;
            if (ended)
                this.#tallies.delete(key);
            if (t.counted > 0 && (ended || all)) {
                out.push([key, { ...t }, countEvent(t, now)]);
                t.counted = 0;
            }
        }
        for (const [group, g] of this.#groups)
            if (g.end <= now)
                this.#groups.delete(group);
        return out;
    }
    /** A commit that failed: its counts go back into the tallies, to be written later. */
    #recount(due) {
        for (const [key, was] of due) {
            const t = this.#tallies.get(key);
            if (t === undefined) {
                // Tried again a little later, not at once: the store may stay unwritable for a while.
                this.#tallies.set(key, { ...was, end: this.ctx.now() + RETRY_MS });
            }
            else {
                t.counted += was.counted;
                t.countedSince = Math.min(t.countedSince, was.countedSince);
            }
        }
        this.#schedule();
    }
    #write(due) {
        if (due.length === 0)
            return;
        try {
            this.ctx.commit((tx) => {
                const header = this.ctx.header(tx);
                for (const [, , ev] of due)
                    appendAudit(tx, header, ev);
            }, due.length * RECORD_BYTES);
        }
        catch {
            // Not written now (disk full, store closed): kept, and tried again at the next window's end.
            this.#recount(due);
        }
    }
    /** A timer for the earliest window's end, so a count is written without waiting for a request. */
    #schedule() {
        if (this.#timer !== null || this.#tallies.size === 0)
            return;
        let end = Infinity;
        for (const t of this.#tallies.values())
            end = Math.min(end, t.end);
        this.#timer = setTimeout(() => {
            this.#timer = null;
            this.#write(this.#takeDue(this.ctx.now(), false));
            this.#schedule();
        }, Math.max(0, end - this.ctx.now()) + 10);
        // A pending count does not keep the host alive: the idle stop flushes it (see refusalsOf).
        this.#timer.unref();
    }
    /** Stops the timer (the host closes); the caller flushes first. */
    stop() {
        if (this.#timer !== null)
            clearTimeout(this.#timer);
        this.#timer = null;
    }
}
const perHost = new WeakMap();
/**
 * The host's refusal audit, made on first use: it writes what it still counts
 * when the host closes (context.ts emits 'close' while the store is open).
 */
export function refusalsOf(ctx) {
    let r = perHost.get(ctx);
    if (r === undefined) {
        const made = new RefusalAudit(ctx);
        ctx.events.once('close', () => {
            made.flush();
            made.stop();
            perHost.delete(ctx);
        });
        perHost.set(ctx, made);
        r = made;
    }
    return r;
}
/**
 * Records refusal `e` as the coalescing rules say, in a transaction of its
 * own when anything is to be written; a refusal only counted writes nothing.
 * @throws VaultError VLT-3004 when the record cannot be written.
 */
export function auditRefusal(ctx, header, e) {
    const p = refusalsOf(ctx).plan(e);
    if (p.events.length === 0)
        return;
    try {
        ctx.commit((tx) => {
            for (const ev of p.events)
                appendAudit(tx, header, ev);
        }, p.events.length * RECORD_BYTES);
    }
    catch (err) {
        p.undo();
        throw err;
    }
}
/**
 * For a refusal inside a request's own write transaction (access.ts: a
 * locked or revoked agent asking again): `write` puts the refusal's own
 * records when the rules record it in full; otherwise its marker, or nothing.
 * Ended windows' counts are not put in this transaction (a failed commit would
 * lose them with it): the timer writes them.
 */
export function coalesceRefusal(ctx, tx, header, e, write) {
    const p = refusalsOf(ctx).plan(e, false);
    // Run again (team mode, another host committed first): planned again, from the same tallies.
    tx.onUndo(p.undo);
    for (const ev of p.events) {
        if (ev === e)
            write();
        else
            appendAudit(tx, header, ev);
    }
}
