/**
 * A team host's grouped write (pg.ts `writeDurable`): the transactions asked
 * for while the host waits on the database, each with its own outcome, run
 * until one run of them commits.
 */
import type { Tx } from '../tx.js';
import { contended } from './refusals.js';

/**
 * Optimistic tries of one group before it takes the locked path (which
 * always commits): with three hosts committing as fast as they can, a try
 * loses to another host's commit now and then, and each loss brings the rows
 * that beat it, so the next try is on the vault as it then stood.
 */
const TRIES = 8;
/**
 * Runs of a group that met contention the database reports (refusals.ts
 * CONTENTION: a deadlock, a lock not had within the worker's lock_timeout)
 * before it is refused: a try is run again at once. Each waited up to the
 * worker's lock_timeout (0.6 s), so these bound how long one group can keep
 * the host waiting behind a lock held by another session: about 2.4 s.
 */
export const CONTENDED = 4;

export type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

export interface Queued {
  readonly fn: (tx: Tx) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/** Optimistic tries lost to another host's commit, groups that then took the lock, runs again after contention. */
export interface Conflicts {
  lost: number;
  locked: number;
  contended: number;
}

/**
 * The outcomes of the run that committed: `optimistic` TRIES times (null:
 * lost to another host's commit), then `locked` until it commits.
 * Contention the database reports runs the group again too, CONTENDED
 * times at most: several hosts writing at once is no refusal (issue 37: a
 * lock timeout under three hosts' load refused a group).
 * @throws what a run throws, contention past CONTENDED
 */
export function untilCommitted(
  optimistic: () => Outcome[] | null,
  locked: () => Outcome[],
  conflicts: Conflicts,
): Outcome[] {
  for (let tries = 0, contention = 0; ; tries++) {
    try {
      const outcomes = tries < TRIES ? optimistic() : locked();
      if (outcomes !== null) return outcomes;
      conflicts.lost++;
    } catch (err) {
      if (!contended(err) || ++contention === CONTENDED) throw err;
      conflicts.contended++;
    }
  }
}

/** Before a group that met contention runs again: what it did outside its records, put back. */
export function undoFor(err: unknown, undos: (() => void)[]): void {
  if (contended(err)) for (const undo of undos.reverse()) undo();
}

/** Each of `group` told its outcome. */
export function settle(group: readonly Queued[], outcomes: readonly Outcome[]): void {
  group.forEach((q, i) => {
    const o = outcomes[i] as Outcome;
    if (o.ok) q.resolve(o.value);
    else q.reject(o.err);
  });
}
