/**
 * Team mode's commit path alone (issue 37), without sockets, CLI processes or
 * the host's request handling: 1, 2 and 3 processes (a host each), each with
 * a PgStore of the build under test on one database, 24 transactions in
 * flight across them, each transaction what a fill writes (its rate record,
 * an audit record chained to the head, the head) plus about 50 µs of work.
 * This tree beside a baseline build (git archive of a ref, built in a temp
 * directory), cells alternated, two rounds, with pgbench's raw-SQL floor.
 * Prints writes a second, writes per commit. Asserts nothing.
 *
 *   node --import tsx bench/team-commit.ts [seconds a cell=4] [baseline ref=0109066]   (after npm run build)
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildBaseline } from './baseline.js';
import { rawSqlFloor } from './pg-floor.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const IN_FLIGHT = 24;

interface Store {
  create(): void;
  read<T>(fn: (tx: never) => T): T;
  writeDurable<T>(fn: (tx: FillTx) => T): Promise<T>;
  close(): Promise<void>;
}
interface FillTx {
  auditHead(): { seq: number; hash: Buffer } | null;
  appendAudit(r: unknown): void;
  putRate(agentId: string, rate: unknown): void;
}

/** A child: one host's store, `lanes` transactions in flight from "go" (stdin) for `ms`. */
async function child(module: string, url: string, lanes: number, ms: number): Promise<void> {
  const { PgStore } = (await import(module)) as { PgStore: { open(url: string): Store } };
  const store = PgStore.open(url);
  store.create();
  store.read(() => 0);
  console.log('ready');
  await new Promise<void>((resolve) =>
    createInterface({ input: process.stdin }).once('line', () => resolve()),
  );
  let writes = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (Date.now() < end) {
        await store.writeDurable((tx) => {
          // About a fill's own work beside its writes (HMACs, decodes): ~50 µs.
          let h = randomBytes(32);
          for (let i = 0; i < 40; i++) h = createHash('sha256').update(h).digest();
          const head = tx.auditHead();
          const seq = (head?.seq ?? 0) + 1;
          tx.putRate(`agent${process.pid}-${lane}`, {
            distinct: [h.subarray(0, 8)],
            at: Date.now(),
          });
          tx.appendAudit({
            seq,
            prev: head?.hash ?? null,
            hash: h,
            action: 'fill',
            at: Date.now(),
          });
        });
        writes++;
      }
    }),
  );
  console.log(JSON.stringify({ writes }));
  await store.close();
  process.exit(0);
}

if (process.argv[2] === '--child') {
  const [module, url, lanes, ms] = process.argv.slice(3);
  await child(module as string, url as string, Number(lanes), Number(ms));
} else {
  await main();
}

async function main(): Promise<void> {
  const { Postgres } = await import('../test/support/postgres.js');
  const args = process.argv.slice(2);
  const SECONDS = Number(args[0] ?? 4);
  const BASE = args[1] ?? '0109066';
  const pgc = await Postgres.start();
  const baseDir = mkdtempSync(join(tmpdir(), 'vault-team-commit-base-'));
  const scratch = mkdtempSync(join(tmpdir(), 'vault-team-commit-'));
  process.once('SIGINT', () => {
    rmSync(baseDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
    void pgc.stop().then(() => process.exit(130));
  });
  chmodSync(scratch, 0o755);

  const floor = (db: string, clients: number): number => rawSqlFloor(pgc, scratch, db, clients);

  /** One cell: `hosts` children of the build whose pg.js is `module`, on a new database. */
  const cell = async (module: string, hosts: number): Promise<[number, number]> => {
    const db = pgc.database();
    const lanes = Math.floor(IN_FLIGHT / hosts);
    const start = () =>
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--child',
          module,
          db.url,
          String(lanes),
          String(SECONDS * 1000),
        ],
        { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
      );
    // One after the other: each makes the tables (IF NOT EXISTS races when at once).
    const kids: ReturnType<typeof start>[] = [];
    const exited: Promise<unknown>[] = [];
    const lines: AsyncIterator<string>[] = [];
    for (let h = 0; h < hosts; h++) {
      const k = start();
      kids.push(k);
      exited.push(new Promise((r) => k.once('exit', r)));
      const l = createInterface({ input: k.stdout })[Symbol.asyncIterator]();
      lines.push(l);
      await l.next();
    }
    for (const k of kids) k.stdin.write('go\n');
    let writes = 0;
    for (const l of lines)
      writes += (JSON.parse((await l.next()).value as string) as { writes: number }).writes;
    await Promise.all(exited);
    const commits = Number(pgc.psql(db.name, 'SELECT version FROM vault_meta').trim());
    return [writes / SECONDS, writes / commits];
  };

  try {
    buildBaseline(BASE, baseDir);
    const builds: [string, string][] = [
      [`base ${BASE}`, join(baseDir, 'dist', 'src', 'store', 'pg', 'pg.js')],
      ['this', join(ROOT, 'dist', 'src', 'store', 'pg', 'pg.js')],
    ];
    const floorDb = pgc.database();
    pgc.psql(
      floorDb.name,
      'CREATE TABLE f_audit (seq bigserial PRIMARY KEY, rec bytea); CREATE TABLE f_rate (agent int PRIMARY KEY, rec bytea)',
    );
    console.log(`team-commit bench: ${SECONDS} s a cell, ${IN_FLIGHT} in flight in all`);
    for (let round = 1; round <= 2; round++) {
      console.log(
        `round ${round}: raw-SQL floor ${floor(floorDb.name, 1).toFixed(0)}/s (1 client), ${floor(floorDb.name, IN_FLIGHT).toFixed(0)}/s (${IN_FLIGHT}); load ${loadavg()[0]?.toFixed(1)}`,
      );
      for (const hosts of [1, 2, 3]) {
        for (const [name, module] of builds) {
          const [rate, per] = await cell(module, hosts);
          console.log(
            `  ${name.padEnd(13)} ${hosts} host${hosts > 1 ? 's' : ' '}: ${rate.toFixed(0).padStart(6)} writes/s, ${per.toFixed(1)} a commit; load ${loadavg()[0]?.toFixed(1)}`,
          );
        }
      }
    }
  } finally {
    await pgc.stop();
    rmSync(baseDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}
