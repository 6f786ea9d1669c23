/**
 * The raw-SQL floor the team benches print beside the vault (bench/team-commit.ts,
 * bench/team-hosts.ts): pgbench's transactions a second for `clients`, each
 * transaction writing an audit row and a rate row (synchronous_commit on), on
 * `db` (its f_audit and f_rate tables made by the caller).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Postgres } from '../test/support/postgres.js';

export function rawSqlFloor(
  pgc: Postgres,
  scratch: string,
  db: string,
  clients: number,
  seconds = 2,
): number {
  const script = join(scratch, 'floor.sql');
  writeFileSync(
    script,
    `\\set a random(0, 99)
BEGIN;
INSERT INTO f_audit (rec) VALUES (decode(repeat('07', 300), 'hex'));
INSERT INTO f_rate VALUES (:a, decode(repeat('07', 300), 'hex')) ON CONFLICT (agent) DO UPDATE SET rec = EXCLUDED.rec;
END;
`,
    { mode: 0o644 },
  );
  const out = pgc.run('pgbench', [
    ...['-n', '-h', pgc.socketDir, '-U', 'vault', '-d', db],
    ...['-c', String(clients), '-j', '1', '-T', String(seconds), '-f', script],
  ]);
  return Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
}
