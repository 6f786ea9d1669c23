/**
 * A team host's cold start at scale (issue 37), this tree against a baseline
 * build on one vault: the vault of N entries is built once (PostgreSQL, a
 * cluster started here as the tests start one), then the two builds take
 * turns, `rounds` times, at two measures:
 *
 * - load: a fresh process opens the store, holding the state key, and runs
 *   the host's first sealed check (`assertSealed`: the first load and the
 *   sealed digest); wall time and the process's CPU (user + sys, both threads);
 * - cold get: the host stopped, an agent's `get` (which starts the host and has
 *   it load the vault); wall time, the host's CPU and its resident memory
 *   after it, from /proc.
 *
 * This tree runs twice a round: with no file of digest shares in the host's
 * directory (src/store/pg/digest-chunks.ts: removed before its load and its
 * get, so every MAC computed, as a host's first start), and with the file the
 * previous start wrote (a host's start again); "chunks" says how many of the
 * load's chunks came from the file and how many were computed.
 *
 * Both builds read the same rows, so the digest's format must be the same in
 * both. With BENCH_PROF=<dir> this tree's first load with the file runs
 * under --cpu-prof (both threads) and leaves its profiles there. Asserts
 * nothing.
 *
 *   node --import tsx bench/team-load.ts [entries=100000] [baseline ref=HEAD] [rounds=3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Postgres } from '../test/support/postgres.js';
import { ROOT } from '../test/support/rig.js';
import { benchVault, buildBaseline, importBatch, IMPORT_BATCH } from './baseline.js';

const args = process.argv.slice(2);
const N = Number(args[0] ?? 100_000);
const BASE = args[1] ?? 'HEAD';
const ROUNDS = Number(args[2] ?? 3);
const PROF = process.env.BENCH_PROF;
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

function run(script: string, env: NodeJS.ProcessEnv, argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [script, ...argv], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const err: Buffer[] = [];
    child.stdout.resume();
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        reject(new Error(`vault-cli ${argv.join(' ')}: ${Buffer.concat(err).toString()}`));
      else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
    });
  });
}

function out(script: string, env: NodeJS.ProcessEnv, argv: string[]): string {
  const r = spawnSync(process.execPath, [script, ...argv], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vault-cli ${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The first load alone, in a process of its own: its wall ms and CPU ms. */
const LOAD = `
const [dist, url, keyFile, dir] = process.argv.slice(2);
const { readFileSync } = await import('node:fs');
const { PgStore } = await import(dist + '/src/store/pg/pg.js');
// The host's directory (a baseline takes no second argument).
const s = PgStore.open(url, dir);
s.sealWith(readFileSync(keyFile));
const c0 = process.cpuUsage();
const t0 = performance.now();
s.read((tx) => tx.assertSealed());
const ms = performance.now() - t0;
const c = process.cpuUsage(c0);
await s.close();
const chunks = s.digestChunks ? s.digestChunks.reused + '/' + s.digestChunks.computed : '-';
console.log(JSON.stringify({ ms, cpu: (c.user + c.system) / 1000, chunks }));
process.exit(0);
`;

function load(
  child: string,
  dist: string,
  url: string,
  keyFile: string,
  prof: boolean,
): { ms: number; cpu: number; chunks: string } {
  const flags = prof && PROF !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [];
  const dir = join(keyFile, '..');
  const r = spawnSync(process.execPath, [...flags, child, dist, url, keyFile, dir], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`load: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as {
    ms: number;
    cpu: number;
    chunks: string;
  };
}

/** The host's resident memory (VmRSS), MB. */
function rssMb(pid: number): number {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? NaN) / 1024;
}

function hostCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const here = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const baseDir = mkdtempSync(join(tmpdir(), 'vault-bench-load-base-'));
const pg = await Postgres.start();
const { root, env } = benchVault('vault-bench-load-', {
  VAULT_HOST_IDLE_MS: '600000',
  VAULT_TEST_WEAK_KDF: '1',
});
try {
  // [name, CLI, whether the host's file of digest shares is removed first]
  const builds: [string, string, boolean][] = [
    [`baseline ${BASE}`, buildBaseline(BASE, baseDir), true],
    ['this tree, no file', here, true],
    ['this tree, file', here, false],
  ];
  const url = pg.database().url;
  const t0 = Date.now();
  out(here, env, ['vault', 'create', '--store', url]);
  for (let from = 0; from < N; from += IMPORT_BATCH) {
    const file = importBatch(root, from, N);
    out(here, env, ['import', file]);
  }
  const token = out(here, env, ['agent', 'add', 'bench', '--scope', 'BENCH_KEY_000007']).trim();
  out(here, env, ['daemon', 'stop']);
  const agentEnv = { ...env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token };
  const keyFile = join(env.VAULT_DIR as string, 'state.key');
  const chunksFile = join(env.VAULT_DIR as string, 'pg-digest-chunks');
  const child = join(root, 'load.mjs');
  writeFileSync(child, LOAD);
  console.log(
    `team-load bench: ${N} entries, built in ${((Date.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg()}`,
  );
  console.log(
    `${'round'.padEnd(7)}${'build'.padEnd(22)}${'load s'.padStart(8)}${'CPU s'.padStart(8)}${'chunks'.padStart(10)}${'cold get s'.padStart(12)}${'host CPU s'.padStart(12)}${'RSS MB'.padStart(8)}  load avg`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, script, fresh] of builds) {
      const dist = join(script, '..', '..', '..');
      if (fresh) rmSync(chunksFile, { force: true });
      const l = load(child, dist, url, keyFile, script === here && round === 1 && !fresh);
      if (fresh) rmSync(chunksFile, { force: true });
      const ms = await run(script, agentEnv, ['get', 'BENCH_KEY_000007']);
      const pid = Number(/pid (\d+)/.exec(out(script, env, ['daemon', 'status']))?.[1]);
      const cpu = hostCpuMs(pid);
      const rss = rssMb(pid);
      out(script, env, ['daemon', 'stop']);
      console.log(
        `${String(round).padEnd(7)}${name.padEnd(22)}${(l.ms / 1000).toFixed(2).padStart(8)}${(l.cpu / 1000).toFixed(2).padStart(8)}${l.chunks.padStart(10)}${(ms / 1000).toFixed(2).padStart(12)}${(cpu / 1000).toFixed(2).padStart(12)}${rss.toFixed(0).padStart(8)}  ${loadavg()}`,
      );
    }
  }
} finally {
  spawnSync(process.execPath, [here, 'daemon', 'stop'], { env });
  await pg.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(baseDir, { recursive: true, force: true });
}
