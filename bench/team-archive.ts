/**
 * Team mode under a steady fill rate with `audit archive` every minute
 * (issue 37's must-show: "table rows and host memory level off"). Per
 * build, a vault on one PostgreSQL cluster served by two hosts, agents
 * filling through both (8 in flight, 4 a host), and the owner archiving the
 * audit log every interval, then adding and removing an entry (tombstones of
 * rows the hosts hold); after that, per build: the fills of that
 * interval, `vault_rows`' rows (of them tombstones and audit records), the
 * table's size with its indexes and TOAST, and each host's RSS and
 * anonymous memory. This tree and a baseline build (default: a3db9a0, the
 * build before the horizon) run at the same time on the same cluster, so
 * the machine's load reaches both alike. Asserts nothing; the last lines
 * give each series' change over the second half.
 *
 *   node --import tsx bench/team-archive.ts [minutes=10] [--interval <s>=60] [--baseline <ref>] [--no-baseline]
 *   (after npm run build)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../src/client/client.js';
import type { ClientOptions } from '../src/client/options.js';
import { hostPid } from '../test/support/e2e-helpers.js';
import { Postgres } from '../test/support/postgres.js';
import { memoryOf } from '../test/support/procs.js';
import { CLI, liftValuesArgs, ok, Rig } from '../test/support/rig.js';
import { buildBaseline } from './baseline.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
};
const positional = argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
const MINUTES = Number(positional[0] ?? 10);
const INTERVAL_MS = Number(opt('--interval') ?? 60) * 1000;
const BASE = argv.includes('--no-baseline') ? null : (opt('--baseline') ?? 'a3db9a0');
const IN_FLIGHT = 8;
const AGENTS = 10;
const MiB = 1024 * 1024;

interface Build {
  readonly label: string;
  readonly db: string;
  readonly hosts: Rig[];
  readonly pids: number[];
  readonly tokens: string[];
  fills: number;
  refused: number;
  readonly rows: Sample[];
}

interface Sample {
  readonly rows: number;
  readonly tombstones: number;
  readonly audit: number;
  readonly mb: number;
  readonly hosts: { rss: number; anon: number }[];
}

function client(r: Rig): ClientOptions {
  return { vaultDir: r.vaultDir, daemon: { node: process.execPath, script: r.cli, env: r.env } };
}

async function vault(pg: Postgres, label: string, cli: string): Promise<Build> {
  const { url, name } = pg.database();
  const rig = (): Rig => {
    const r = new Rig();
    r.cli = cli;
    r.env.VAULT_STORE_URL = url;
    // The hosts stay up between the archives whatever the fills' pace.
    r.env.VAULT_HOST_IDLE_MS = String(10 * 60_000);
    return r;
  };
  const a = rig();
  ok(await a.owner(['vault', 'create', '--store', url]));
  await a.set('db', 'bench-value');
  const tokens: string[] = [];
  for (let i = 0; i < AGENTS; i++) {
    tokens.push(await a.addAgent(`bench${i}`, ['db']));
    ok(await a.owner(liftValuesArgs(`bench${i}`)));
  }
  const hosts = [a, rig()];
  for (const h of hosts) await fill(h, tokens[0] as string);
  const pids = await Promise.all(hosts.map((h) => hostPid(h)));
  return { label, db: name, hosts, pids, tokens, fills: 0, refused: 0, rows: [] };
}

const fill = (r: Rig, token: string) =>
  call(client(r), 'resolve', { token, refs: [{ entry: 'db', field: 'password' }] });

/** Fills through both hosts, IN_FLIGHT at once, until `stop()` says so. */
async function lanes(b: Build, stop: () => boolean): Promise<void> {
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, w) => {
      for (let i = w; !stop(); i += IN_FLIGHT) {
        try {
          await fill(b.hosts[w % 2] as Rig, b.tokens[i % AGENTS] as string);
          b.fills++;
        } catch {
          b.refused++;
        }
      }
    }),
  );
}

function sample(pg: Postgres, b: Build): Sample {
  const [rows, tombstones, audit, bytes] = pg
    .psql(
      b.db,
      `SELECT count(*) || ' ' || count(*) FILTER (WHERE value IS NULL) || ' ' ||
              count(*) FILTER (WHERE key LIKE 'audit/%') || ' ' ||
              pg_total_relation_size('vault_rows') FROM vault_rows`,
    )
    .trim()
    .split(' ')
    .map(Number);
  return {
    rows: rows ?? 0,
    tombstones: tombstones ?? 0,
    audit: audit ?? 0,
    mb: (bytes ?? 0) / MiB,
    hosts: b.pids.map((p) => {
      const m = memoryOf(p);
      return { rss: m.rss / MiB, anon: m.anon / MiB };
    }),
  };
}

const row = (minute: string, b: Build, s: Sample, fills: number) =>
  `${minute.padStart(4)} ${b.label.padEnd(9)} ${String(fills).padStart(6)} ${String(s.rows).padStart(7)} ${String(s.tombstones).padStart(7)} ${String(s.audit).padStart(6)} ${s.mb.toFixed(1).padStart(6)} ` +
  s.hosts.map((h) => `${h.rss.toFixed(0).padStart(5)} ${h.anon.toFixed(0).padStart(5)}`).join('  ');

/** A series' change from the middle sample to the last, per interval. */
function slope(xs: number[]): string {
  const mid = Math.floor((xs.length - 1) / 2);
  const d =
    ((xs[xs.length - 1] as number) - (xs[mid] as number)) / Math.max(1, xs.length - 1 - mid);
  return `${(xs[mid] as number).toFixed(1)} -> ${(xs[xs.length - 1] as number).toFixed(1)} (${d >= 0 ? '+' : ''}${d.toFixed(1)}/interval)`;
}

async function main(): Promise<void> {
  const pg = await Postgres.start();
  const work = mkdtempSync(join(tmpdir(), 'vault-bench-archive-'));
  const builds: Build[] = [];
  try {
    const cliBase = BASE === null ? null : buildBaseline(BASE, mkdtempSync(join(work, 'base-')));
    builds.push(await vault(pg, 'this', CLI));
    if (cliBase !== null) builds.push(await vault(pg, BASE as string, cliBase));
    console.log(
      `${MINUTES} intervals of ${INTERVAL_MS / 1000} s; ${IN_FLIGHT} fills in flight per build over 2 hosts and ${AGENTS} agents; ` +
        `\`audit archive --before 0m\` after each interval; load average at start ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
    console.log(
      `${'min'.padStart(4)} ${'build'.padEnd(9)} ${'fills'.padStart(6)} ${'rows'.padStart(7)} ${'tombst'.padStart(7)} ${'audit'.padStart(6)} ${'MB'.padStart(6)} ${'A rss'.padStart(5)} ${'anon'.padStart(5)}  ${'B rss'.padStart(5)} ${'anon'.padStart(5)}`,
    );
    for (const b of builds) console.log(row('0', b, sample(pg, b), 0));
    let stop = false;
    const running = builds.map((b) => lanes(b, () => stop));
    for (let m = 1; m <= MINUTES; m++) {
      const before = builds.map((b) => b.fills);
      await sleep(INTERVAL_MS);
      const archived = await Promise.all(
        builds.map((b) =>
          (b.hosts[0] as Rig).owner([
            'audit',
            'archive',
            '--before',
            '0m',
            join(work, `${b.label}-${m}.archive`),
          ]),
        ),
      );
      // A removal of rows the hosts hold (an entry's): its tombstones wait for the horizon.
      for (const b of builds) {
        const owner = b.hosts[0] as Rig;
        await owner.set(`churn ${m}`, 'churn');
        ok(await owner.owner(['entry', 'rm', `churn ${m}`]));
      }
      archived.forEach((r, i) => {
        if (r.code !== 0) console.log(`# ${builds[i]?.label}: archive refused: ${r.stderr.trim()}`);
        rmSync(join(work, `${builds[i]?.label}-${m}.archive`), { force: true });
      });
      builds.forEach((b, i) => {
        const s = sample(pg, b);
        b.rows.push(s);
        console.log(row(String(m), b, s, b.fills - (before[i] as number)));
      });
      console.log(`#    load average ${loadavg()[0]?.toFixed(1)}`);
    }
    stop = true;
    await Promise.all(running);
    for (const b of builds) {
      const s = b.rows;
      console.log(
        `${b.label}: second half: rows ${slope(s.map((x) => x.rows))}; MB ${slope(s.map((x) => x.mb))}; ` +
          s[0]?.hosts
            .map(
              (_, h) =>
                `host ${'AB'[h]} rss ${slope(s.map((x) => x.hosts[h]?.rss ?? 0))}, anon ${slope(s.map((x) => x.hosts[h]?.anon ?? 0))}`,
            )
            .join('; ') +
          `; fills ${b.fills}, refused ${b.refused}`,
      );
    }
  } finally {
    for (const b of builds) for (const h of b.hosts) await h.dispose().catch(() => {});
    await pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
