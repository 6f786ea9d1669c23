/**
 * Refusals coalesced, so a caller cannot grow the audit log without bound.
 * A refusal releases nothing, yet each one used to append (and fsync) a
 * record: a loop of garbage tokens from an agent's shell filled the disk to
 * the free-space reserve, after which the host refused everyone, the owner
 * included. Here every refusal is still accounted for, in fewer records:
 *
 * - A kind of refusal (action, outcome, actor) from one source (`pid:<n>
 *   uid:<n>`) is recorded in full FULL_PER_WINDOW times per window; the next
 *   one is recorded in full with a note that counting starts (the marker),
 *   and the rest are only counted. When the window ends, the host stops, or
 *   the owner reads the log, one record carries the count.
 * - A shell loop is a new pid per request: each pid's first refusal of a
 *   kind is recorded in full, for SOURCES_PER_WINDOW pids of one group (the
 *   source with its pid left out: same uid, same path in) per window; later
 *   pids' refusals of that kind are counted under the group (`pid:* uid:<n>`).
 *
 * The first refusal of each kind from each source is in full (up to the
 * group's budget); another agent's refusals are another kind (its actor), and
 * another uid another group, so a flood does not hide them. Successful actions
 * never come here.
 *
 * What a kill loses: the counts of the windows still open, never silently:
 * each open count follows a marker record, and a marker with no count after
 * it says that refusals were counted and the count was lost with the host.
 */
import type { AuditEvent } from '../../core/audit.js';
import type { Tx } from '../../store/tx.js';
import type { VaultHeader } from '../../store/schema.js';
import { appendAudit } from './log.js';
import type { HostContext } from '../context.js';
import { RECORD_BYTES } from '../../store/engine.js';

/** How long a window counts: a count reaches the log within a minute, and a kill loses at most one. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Refusals of one kind from one source recorded in full per window, before the marker. */
export const FULL_PER_WINDOW = 3;
/** Sources of one group whose refusals of one kind get records of their own, per window. */
export const SOURCES_PER_WINDOW = 10;

/** How long counts that could not be written wait before the next try. */
const RETRY_MS = 5_000;

/** One kind of refusal from one source (or a whole group), in the current window. */
interface Tally {
  /** The event the count record repeats: who, what, outcome, from where. */
  readonly like: AuditEvent;
  readonly start: number;
  readonly end: number;
  full: number;
  marked: boolean;
  /** Refusals counted and not yet written in a count record, and since when. */
  counted: number;
  countedSince: number;
}

/** A group's window for one kind: how many of its sources have tallies of their own. */
interface GroupWindow {
  readonly end: number;
  sources: number;
}

/** What one refusal writes (possibly nothing), and how to take it back if the commit fails. */
export interface RefusalPlan {
  readonly events: readonly AuditEvent[];
  /** The commit failed: the counts this plan wrote are counted again. */
  undo(): void;
}

/** The source with the pid left out: the processes of one user coming in one way. */
export function groupOf(source: string): string {
  return source.replace(/\bpid:\d+/, 'pid:*');
}

function kindOf(e: AuditEvent): string {
  return JSON.stringify([e.action, e.outcome, e.actor]);
}

function at(ms: number): string {
  return new Date(ms).toISOString();
}

/** The record of refusals counted: the kind repeated, the count in the (sealed) entry. */
function countEvent(t: Tally, now: number): AuditEvent {
  const n = t.counted;
  const entry = `(${n} more refusal${n === 1 ? '' : 's'} of this kind from this source, ${at(t.countedSince)} to ${at(now)})`;
  return { ...t.like, at: now, entryId: null, entry, field: null, host: null };
}

function markerEvent(e: AuditEvent, t: Tally): AuditEvent {
  const entry = `(further refusals of this kind from this source are counted until ${at(t.end)})`;
  return { ...e, entryId: null, entry, field: null };
}

/** The coalescing state of one host's vault. */
export class RefusalAudit {
  readonly #tallies = new Map<string, Tally>();
  readonly #groups = new Map<string, GroupWindow>();
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly ctx: HostContext) {}

  /**
   * What to append for refusal `e` (in the caller's transaction): the counts
   * of windows that have ended, then `e` itself, its marker, or nothing (it is
   * counted). The state changes at once; `undo` when the commit fails.
   * Without `withDue`, ended windows' counts are left to the timer.
   */
  plan(e: AuditEvent, withDue = true): RefusalPlan {
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
      } else {
        key = `${group}\0${kind}`;
        // A group's tally starts at its marker: its sources' first refusals were in full.
        t = this.#tallies.get(key) ?? this.#open(key, { ...e, source: group }, FULL_PER_WINDOW);
      }
    }
    // Without `withDue` a tally may be past its end: it goes on counting, and
    // the timer (due 10 ms after that end) writes its count with the rest.
    const mine = t;
    let unwrite = (): void => {};
    if (mine.full < FULL_PER_WINDOW) {
      mine.full++;
      events.push(e);
      unwrite = () => void mine.full--;
    } else if (!mine.marked) {
      mine.marked = true;
      events.push(markerEvent({ ...e, source: mine.like.source }, mine));
      unwrite = () => void (mine.marked = false);
    } else {
      const since = mine.countedSince;
      if (mine.counted === 0) mine.countedSince = e.at;
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
  flush(): void {
    this.#write(this.#takeDue(this.ctx.now(), true));
  }

  #open(key: string, e: AuditEvent, full = 0): Tally {
    const t: Tally = {
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

  #groupWindow(group: string, now: number): GroupWindow {
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
  #takeDue(now: number, all: boolean): [string, Tally, AuditEvent][] {
    const out: [string, Tally, AuditEvent][] = [];
    for (const [key, t] of this.#tallies) {
      const ended = t.end <= now;
      if (ended) this.#tallies.delete(key);
      if (t.counted > 0 && (ended || all)) {
        out.push([key, { ...t }, countEvent(t, now)]);
        t.counted = 0;
      }
    }
    for (const [group, g] of this.#groups) if (g.end <= now) this.#groups.delete(group);
    return out;
  }

  /** A commit that failed: its counts go back into the tallies, to be written later. */
  #recount(due: readonly [string, Tally, AuditEvent][]): void {
    for (const [key, was] of due) {
      const t = this.#tallies.get(key);
      if (t === undefined) {
        // Tried again a little later, not at once: the store may stay unwritable for a while.
        this.#tallies.set(key, { ...was, end: this.ctx.now() + RETRY_MS });
      } else {
        t.counted += was.counted;
        t.countedSince = Math.min(t.countedSince, was.countedSince);
      }
    }
    this.#schedule();
  }

  #write(due: [string, Tally, AuditEvent][]): void {
    if (due.length === 0) return;
    try {
      this.ctx.commit((tx) => {
        const header: VaultHeader = this.ctx.header(tx);
        for (const [, , ev] of due) appendAudit(tx, header, ev);
      }, due.length * RECORD_BYTES);
    } catch {
      // Not written now (disk full, store closed): kept, and tried again at the next window's end.
      this.#recount(due);
    }
  }

  /** A timer for the earliest window's end, so a count is written without waiting for a request. */
  #schedule(): void {
    if (this.#timer !== null || this.#tallies.size === 0) return;
    let end = Infinity;
    for (const t of this.#tallies.values()) end = Math.min(end, t.end);
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#write(this.#takeDue(this.ctx.now(), false));
        this.#schedule();
      },
      Math.max(0, end - this.ctx.now()) + 10,
    );
    // A pending count does not keep the host alive: the idle stop flushes it (see refusalsOf).
    this.#timer.unref();
  }

  /** Stops the timer (the host closes); the caller flushes first. */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

const perHost = new WeakMap<HostContext, RefusalAudit>();

/**
 * The host's refusal audit, made on first use: it writes what it still counts
 * when the host closes (context.ts emits 'close' while the store is open).
 */
export function refusalsOf(ctx: HostContext): RefusalAudit {
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
export function auditRefusal(ctx: HostContext, header: VaultHeader, e: AuditEvent): void {
  const p = refusalsOf(ctx).plan(e);
  if (p.events.length === 0) return;
  try {
    ctx.commit((tx) => {
      for (const ev of p.events) appendAudit(tx, header, ev);
    }, p.events.length * RECORD_BYTES);
  } catch (err) {
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
export function coalesceRefusal(
  ctx: HostContext,
  tx: Tx,
  header: VaultHeader,
  e: AuditEvent,
  write: () => void,
): void {
  const p = refusalsOf(ctx).plan(e, false);
  // Run again (team mode, another host committed first): planned again, from the same tallies.
  tx.onUndo(p.undo);
  for (const ev of p.events) {
    if (ev === e) write();
    else appendAudit(tx, header, ev);
  }
}
