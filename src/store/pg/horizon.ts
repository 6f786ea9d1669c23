/**
 * Removals behind a version horizon (issue 37). A removal of a row a host
 * holds is kept in `vault_rows` as a row with no value (a tombstone), so
 * another host's refresh (the rows newer than its copy's version) learns of
 * it. Kept for ever, they grew the table with every `audit archive`. Now:
 *
 * - Each host reports the version its copy is at (the `since` of its latest
 *   request) in `vault_hosts`, with when it last asked anything.
 * - Any host, every `collect` ms, moves `vault_meta.horizon` up to the lowest
 *   version of the hosts heard from within `silent` ms, then deletes the
 *   tombstones at or below it (horizon first: its own commit, then the
 *   deletion, so no tombstone is gone below a horizon not yet written).
 * - A refresh from a version below the horizon gets no rows but `behind`
 *   (pg-worker.ts), in the same statement as the version it reads: the host
 *   loads its copy afresh (pg.ts `reload`), since it cannot tell what was
 *   removed.
 *
 * The hosts' reports only choose the horizon; a wrong one (a host silent too
 * long and counted out, a database that lies) costs a reload or is caught
 * by the sealed digest: a host that misses the removal of a sealed row
 * holds a row the `state` record's digest does not, and refuses with
 * VLT-3045 (test/e2e/team-horizon.test.ts).
 *
 * Rows a host never holds (mirror.ts COLD: audit records, checksums) need
 * no tombstone: their removal is a plain DELETE (pg-worker.ts), so archived
 * audit records leave the table at once.
 */
import type pg from 'pg';

/**
 * The horizon's tables, also for a vault made before them (`upgrade`):
 * idempotent, and cheap when they are there. The partial index finds the
 * tombstones without a scan of every row.
 */
export const HORIZON_SCHEMA = `
ALTER TABLE vault_meta ADD COLUMN IF NOT EXISTS horizon bigint NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS vault_hosts (
  id text PRIMARY KEY,
  version bigint NOT NULL,
  seen timestamptz NOT NULL,
  loads integer NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS vault_rows_removed ON vault_rows (version) WHERE value IS NULL;
`;

/** How long a host may be silent before the horizon passes it, and what follows from it (ms). */
export interface HorizonTimes {
  /** A host that asked nothing for this long is counted out (it reloads if the horizon passed it). */
  readonly silent: number;
  /** How often a host's worker reports its version. */
  readonly report: number;
  /** How often a host's worker moves the horizon and deletes behind it. */
  readonly collect: number;
  /** An idle host refreshes this often (pg.ts), so it is not counted out and need not reload. */
  readonly keep: number;
}

/**
 * One minute by default; VAULT_TEAM_HORIZON_MS sets it (the tests' hosts:
 * seconds). At least 500 ms.
 */
export function horizonTimes(env: NodeJS.ProcessEnv = process.env): HorizonTimes {
  const set = Number(env.VAULT_TEAM_HORIZON_MS);
  const silent = Number.isFinite(set) && set >= 500 ? set : 60_000;
  return {
    silent,
    report: Math.max(100, Math.floor(silent / 12)),
    collect: Math.floor(silent / 2),
    keep: Math.floor(silent / 4),
  };
}

/**
 * Adds the horizon's tables to a vault made before them, once per
 * connection; nothing to a database with no vault (it is not ours).
 */
export async function upgrade(c: pg.Client): Promise<void> {
  const r = await c.query<{ vault: boolean; ready: boolean }>(
    `SELECT to_regclass('vault_meta') IS NOT NULL AS vault,
            to_regclass('vault_hosts') IS NOT NULL
              AND to_regclass('vault_rows_removed') IS NOT NULL
              AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('vault_meta')
                            AND attname = 'horizon' AND NOT attisdropped) AS ready`,
  );
  const got = r.rows[0];
  if (got === undefined || !got.vault || got.ready) return;
  try {
    await c.query(HORIZON_SCHEMA);
  } catch (err) {
    // Two hosts upgrading at once: one's CREATE meets the other's (unique_violation).
    if ((err as { code?: unknown }).code !== '23505') throw err;
    await c.query(HORIZON_SCHEMA);
  }
}

/**
 * The host's side: while it is idle, its copy is refreshed every `keep` ms
 * (`refresh`), so its worker keeps reporting a current version, the horizon
 * moves on, and the host needs no reload at its next request. `idleFor`:
 * how long the host has asked nothing (0: not now).
 */
export function keepAlive(idleFor: () => number, refresh: () => void): NodeJS.Timeout {
  const { keep } = horizonTimes();
  const timer = setInterval(() => {
    if (idleFor() < keep) return;
    try {
      refresh();
    } catch {
      // The next request meets the same and answers for it.
    }
  }, keep);
  timer.unref();
  return timer;
}

const REPORT = `
INSERT INTO vault_hosts (id, version, seen, loads)
  VALUES ($1, $2, now() - $3::bigint * interval '1 millisecond', $4)
ON CONFLICT (id) DO UPDATE
  SET version = EXCLUDED.version, seen = EXCLUDED.seen, loads = EXCLUDED.loads`;

const ADVANCE = `
UPDATE vault_meta m SET horizon = h.v
  FROM (SELECT min(version) AS v FROM vault_hosts
         WHERE seen > now() - $1::bigint * interval '1 millisecond') h
 WHERE m.id = 1 AND h.v > m.horizon`;

/** Tombstones at or below the horizon, a bounded batch a statement. */
const SWEEP = `
DELETE FROM vault_rows WHERE key IN (
  SELECT key FROM vault_rows WHERE value IS NULL AND version <= $1 LIMIT 10000)`;

/**
 * The worker's side: what version the host's copy is at, reported and
 * collected behind on a connection of its own (a report or a deletion must
 * not land inside the host's open transaction or a load's snapshot).
 */
export class Keeper {
  private applied = 0;
  private loads = 0;
  private lastAsk = performance.now();
  private lastCollect = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private conn: pg.Client | null = null;
  private busy = false;

  constructor(
    private readonly self: string,
    private readonly newClient: () => pg.Client,
    private readonly times: HorizonTimes = horizonTimes(),
  ) {}

  /** The host asked something with its copy at `version`. */
  saw(version: number): void {
    if (version > this.applied) this.applied = version;
    this.lastAsk = performance.now();
  }

  /** The host's copy was loaded afresh at `version`: reported from now on. */
  loaded(version: number): void {
    this.loads++;
    this.applied = version;
    this.lastAsk = performance.now();
    if (this.timer === null) {
      this.timer = setInterval(() => void this.tick(), this.times.report);
      this.timer.unref();
    }
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const c = await this.connected();
      const quiet = Math.max(0, Math.floor(performance.now() - this.lastAsk));
      await c.query(REPORT, [this.self, this.applied, quiet, this.loads]);
      if (performance.now() - this.lastCollect >= this.times.collect) {
        this.lastCollect = performance.now();
        await this.collect(c);
      }
    } catch {
      // A database away or read-only: the next tick tries again; tombstones wait.
      const c = this.conn;
      this.conn = null;
      c?.end().catch(() => {});
    } finally {
      this.busy = false;
    }
  }

  /** The horizon moved up first (its own commit), then the tombstones behind it deleted. */
  private async collect(c: pg.Client): Promise<void> {
    await c.query(ADVANCE, [this.times.silent]);
    const h = await c.query<{ horizon: string }>('SELECT horizon FROM vault_meta WHERE id = 1');
    const horizon = Number(h.rows[0]?.horizon ?? 0);
    for (;;) {
      const gone = await c.query(SWEEP, [horizon]);
      if ((gone.rowCount ?? 0) < 10_000) break;
    }
    // A host not heard from for ten times that is gone for good (a new process has a new id).
    await c.query(
      `DELETE FROM vault_hosts WHERE seen < now() - $1::bigint * interval '1 millisecond'`,
      [this.times.silent * 10],
    );
  }

  private async connected(): Promise<pg.Client> {
    if (this.conn !== null) return this.conn;
    const c = this.newClient();
    c.on('error', () => {
      if (this.conn === c) this.conn = null;
    });
    await c.connect();
    this.conn = c;
    return c;
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const c = this.conn;
    this.conn = null;
    await c?.end().catch(() => {});
  }
}
