/**
 * Team mode's throughput as hosts are added (issue 37): fills (`resolve`) and
 * reads (`read`) a second with 24 in flight, through 1, 2 and 3 hosts on one
 * PostgreSQL cluster, with the requests spread over 20 and over 100 agents;
 * beside one LMDB host and the raw-SQL floor (a plain client writing an
 * audit row and a rate row per transaction, no vault). This tree and a
 * baseline build (git archive of a ref, built in a temp directory) in one
 * run, their cells alternated, two rounds, so the machine's load reaches
 * both alike. Also prints the commits each cell made (the vault's version)
 * and so the requests per commit. Asserts nothing.
 *
 *   node --import tsx bench/team-hosts.ts [requests per cell=1500] [baseline ref=0109066] [--no-baseline] [--one-host]
 *   (after npm run build; --one-host: the cells of one host only, for a change to a host's own work)
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostChannel } from '../src/client/channel.js';
import type { ClientOptions } from '../src/client/options.js';
import { Postgres, postgresBin } from '../test/support/postgres.js';
import { CLI, liftValuesArgs, ok, Rig } from '../test/support/rig.js';
import { buildBaseline } from './baseline.js';
import { rawSqlFloor } from './pg-floor.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const N = Number(args[0] ?? 1500);
const BASE = args[1] ?? '0109066';
const WITH_BASELINE = !process.argv.includes('--no-baseline');
const IN_FLIGHT = 24;
const AGENTS = [20, 100];
const HOSTS = process.argv.includes('--one-host') ? [1] : [1, 2, 3];

function client(r: Rig): ClientOptions {
  return { vaultDir: r.vaultDir, daemon: { node: process.execPath, script: r.cli, env: r.env } };
}

type Kind = 'fill' | 'get';

/**
 * One framed channel a host, as the proxy keeps: a connection (and the
 * client's checks of the host it reaches) a request made this bench's own
 * process the limit, 40-140 requests a second in every cell.
 */
const channels = new Map<Rig, HostChannel>();

function channelOf(r: Rig): HostChannel {
  let c = channels.get(r);
  if (c === undefined) channels.set(r, (c = new HostChannel(client(r))));
  return c;
}

async function once(r: Rig, token: string, kind: Kind): Promise<void> {
  const c = channelOf(r);
  if (kind === 'get') await c.call('read', { token, entry: 'db', field: 'password', mode: 'get' });
  else await c.call('resolve', { token, refs: [{ entry: 'db', field: 'password' }] });
}

/** Requests a second with IN_FLIGHT at once, lane w on host w % hosts, request i by agent i % agents. */
async function throughput(hosts: Rig[], tokens: string[], kind: Kind): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, w) => {
      while (next < N) {
        const i = next++;
        await once(hosts[w % hosts.length] as Rig, tokens[i % tokens.length] as string, kind);
      }
    }),
  );
  return N / (Number(process.hrtime.bigint() - t0) / 1e9);
}

interface Vault {
  readonly hosts: Rig[];
  readonly tokens: string[];
  readonly db: string | null;
}

/** A vault with one entry and 100 agents (values limit lifted), served by `hosts` hosts of `cli`. */
async function vault(cli: string, url: string | null, db: string | null): Promise<Vault> {
  const owner = new Rig();
  owner.cli = cli;
  ok(await owner.owner(['vault', 'create', ...(url === null ? [] : ['--store', url])]));
  await owner.set('db', 'bench-value');
  const tokens: string[] = [];
  const max = Math.max(...AGENTS);
  for (let i = 0; i < max; i += 4) {
    const made = await Promise.all(
      [0, 1, 2, 3].map(async (k) => {
        const token = await owner.addAgent(`bench${i + k}`, ['db']);
        ok(await owner.owner(liftValuesArgs(`bench${i + k}`)));
        return token;
      }),
    );
    tokens.push(...made);
  }
  const hosts = [owner];
  if (url !== null) {
    for (let h = 1; h < Math.max(...HOSTS); h++) {
      const r = new Rig();
      r.cli = cli;
      r.env.VAULT_STORE_URL = url;
      hosts.push(r);
    }
  }
  // Warm: every host started, its copy loaded, its connection open.
  for (const h of hosts) await once(h, tokens[0] as string, 'get');
  return { hosts, tokens, db };
}

/** The machine's CPU ticks so far: busy and total (/proc/stat's first line). */
function ticks(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'latin1').split('\n')[0] ?? '').trim().split(/\s+/);
  const n = f.slice(1).map(Number);
  const total = n.reduce((x, y) => x + y, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - (n[3] ?? 0) - (n[4] ?? 0), total };
}

/**
 * Over a cell: the share of the machine's CPU in use, and of one core this
 * bench's own process used (the client: past about 0.9 it is the limit, not
 * the hosts).
 */
function usage(): () => { machine: number; client: number } {
  const t0 = ticks();
  const c0 = process.cpuUsage();
  const w0 = process.hrtime.bigint();
  return () => {
    const t1 = ticks();
    const c = process.cpuUsage(c0);
    const wall = Number(process.hrtime.bigint() - w0) / 1e3;
    return {
      machine: (t1.busy - t0.busy) / (t1.total - t0.total),
      client: (c.user + c.system) / wall,
    };
  };
}

/** The raw-SQL floor (bench/pg-floor.ts) on `db`. */
const floor = (db: string, clients: number): number => rawSqlFloor(pgc, scratch, db, clients);

/**
 * How much of the time a writer holds (or waits for) the vault's version
 * row: a loop in the database samples pg_locks every 2 ms for a writer's
 * lock on vault_meta (FOR UPDATE's RowShareLock, the optimistic statement's
 * RowExclusiveLock) until `stop` says the cell is over.
 */
function sampleLock(db: string): { stop: () => Promise<number> } {
  const sql = `DO $$
DECLARE held int := 0; total int := 0;
BEGIN
  WHILE NOT EXISTS (SELECT 1 FROM bench_stop) LOOP
    total := total + 1;
    IF EXISTS (SELECT 1 FROM pg_locks WHERE relation = 'vault_meta'::regclass AND granted
               AND mode IN ('RowShareLock', 'RowExclusiveLock')) THEN held := held + 1; END IF;
    PERFORM pg_sleep(0.002);
  END LOOP;
  RAISE NOTICE 'held % of %', held, total;
END $$;`;
  const child = spawn(
    join(postgresBin() as string, 'psql'),
    ['-h', pgc.socketDir, '-U', 'vault', '-d', db, '-X', '-q', '-c', sql],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const done = new Promise<number>((resolve) =>
    child.on('close', () => {
      const m = /held (\d+) of (\d+)/.exec(err);
      resolve(m === null ? NaN : Number(m[1]) / Number(m[2]));
    }),
  );
  return {
    stop: async () => {
      pgc.psql(db, 'INSERT INTO bench_stop VALUES (1)');
      const share = await done;
      pgc.psql(db, 'DELETE FROM bench_stop');
      return share;
    },
  };
}

const pgc = await Postgres.start();
// Stopped (Ctrl-C): the cluster and the temp directories go too.
process.once('SIGINT', () => void pgc.stop().then(() => process.exit(130)));
const rigs: Rig[] = [];
const baseDir = mkdtempSync(join(tmpdir(), 'vault-team-hosts-base-'));
const scratch = mkdtempSync(join(tmpdir(), 'vault-team-hosts-'));
// The cluster's own user reads the pgbench script.
chmodSync(scratch, 0o755);
const version = (db: string) => Number(pgc.psql(db, 'SELECT version FROM vault_meta').trim());
try {
  const builds: [string, string][] = [['this', CLI]];
  if (WITH_BASELINE) builds.unshift([`base ${BASE}`, buildBaseline(BASE, baseDir)]);
  const vaults = new Map<string, Vault>();
  for (const [name, cli] of builds) {
    const db = pgc.database();
    const v = await vault(cli, db.url, db.name);
    pgc.psql(db.name, 'CREATE TABLE bench_stop (x int)');
    vaults.set(name, v);
    rigs.push(...v.hosts);
  }
  // One LMDB host of each build: a change to a host's own work shows on both engines.
  const lmdbs = new Map<string, Vault>();
  for (const [name, cli] of builds) {
    const v = await vault(cli, null, null);
    lmdbs.set(name, v);
    rigs.push(...v.hosts);
  }
  const floorDb = pgc.database();
  pgc.psql(
    floorDb.name,
    'CREATE TABLE f_audit (seq bigserial PRIMARY KEY, rec bytea); CREATE TABLE f_rate (agent int PRIMARY KEY, rec bytea)',
  );
  console.log(
    `team-hosts bench: ${N} requests a cell, ${IN_FLIGHT} in flight; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (let round = 1; round <= 2; round++) {
    const f1 = floor(floorDb.name, 1);
    const f24 = floor(floorDb.name, IN_FLIGHT);
    console.log(
      `round ${round}: raw-SQL floor ${f1.toFixed(0)}/s (1 client), ${f24.toFixed(0)}/s (${IN_FLIGHT} clients)`,
    );
    for (const agents of AGENTS) {
      for (const [name] of builds) {
        const lmdb = lmdbs.get(name) as Vault;
        const used = usage();
        const l = await throughput(lmdb.hosts, lmdb.tokens.slice(0, agents), 'fill');
        const cpu = used();
        const lg = await throughput(lmdb.hosts, lmdb.tokens.slice(0, agents), 'get');
        console.log(
          `  LMDB ${name.padEnd(13)} 1 host , ${String(agents).padStart(3)} agents: fill ${l.toFixed(0).padStart(5)}/s, get ${lg.toFixed(0).padStart(5)}/s; CPU ${(cpu.machine * 100).toFixed(0)}% (client ${(cpu.client * 100).toFixed(0)}% of a core); load ${loadavg()[0]?.toFixed(1)}`,
        );
      }
      for (const hosts of HOSTS) {
        for (const [name] of builds) {
          const v = vaults.get(name) as Vault;
          const on = v.hosts.slice(0, hosts);
          const tokens = v.tokens.slice(0, agents);
          const before = version(v.db as string);
          const lock = sampleLock(v.db as string);
          const t0 = process.hrtime.bigint();
          const used = usage();
          const fill = await throughput(on, tokens, 'fill');
          const cpu = used();
          const wall = Number(process.hrtime.bigint() - t0) / 1e6;
          const held = await lock.stop();
          const commits = version(v.db as string) - before;
          const get = await throughput(on, tokens, 'get');
          console.log(
            `  ${name.padEnd(13)} ${hosts} host${hosts > 1 ? 's' : ' '}, ${String(agents).padStart(3)} agents: fill ${fill
              .toFixed(0)
              .padStart(
                5,
              )}/s (${(N / commits).toFixed(1)} a commit; row held ${(held * 100).toFixed(0)}%, ${((held * wall) / commits).toFixed(2)} ms a commit), get ${get
              .toFixed(0)
              .padStart(
                5,
              )}/s; CPU ${(cpu.machine * 100).toFixed(0)}% (client ${(cpu.client * 100).toFixed(0)}% of a core); load ${loadavg()[0]?.toFixed(1)}`,
          );
        }
      }
    }
  }
} catch (err) {
  // What the hosts logged before a refusal ended the bench, shown before the rigs (and their logs) go.
  for (const r of rigs) {
    const log = join(r.vaultDir, 'host.log');
    const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
    const shown = lines.filter((l) => !/owner passphrase derived/.test(l)).slice(-40);
    console.error(`--- ${log}\n${shown.join('\n')}`);
  }
  throw err;
} finally {
  for (const c of channels.values()) c.close();
  for (const r of rigs) await r.dispose().catch(() => {});
  await pgc.stop();
  rmSync(baseDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
