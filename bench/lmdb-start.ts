/**
 * The LMDB host's cold start at N entries (issue 37), this tree against a
 * baseline build, alternated in one run on one vault:
 *
 * - baseline: the baseline's host stopped, then an agent's `get` (which
 *   starts the host: its full start-up scan), wall time;
 * - killed: this tree's host killed with SIGKILL, then a `get`: no clean
 *   close, so the full scan (the crash-restart figure);
 * - clean: this tree's host stopped (`daemon stop`, a clean close), then a
 *   `get`: the file is the one that host closed, so the scan is skipped
 *   (lmdb/known-good.ts).
 *
 * Each `get` is followed by a warm one. Prints each round and the medians.
 * Asserts nothing.
 *
 *   node --import tsx bench/lmdb-start.ts [entries=100000] [rounds=3] [baseline ref=a3db9a0] [--keep DIR]
 *
 * Building the vault (create, import of N entries) takes about a minute at
 * 100,000; `--keep DIR` builds it into DIR once and reuses it on later runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { knownGoodPath } from '../src/store/lmdb/known-good.js';
import { ROOT } from '../test/support/rig.js';
import { benchVault, buildBaseline, cli, importBatch, IMPORT_BATCH } from './baseline.js';

const argv = process.argv.slice(2);
const keepAt = argv.indexOf('--keep');
const KEEP = keepAt >= 0 ? argv[keepAt + 1] : undefined;
const args = argv.filter((a, i) => !a.startsWith('--') && (keepAt < 0 || i !== keepAt + 1));
const N = Number(args[0] ?? 100_000);
const ROUNDS = Number(args[1] ?? 3);
const BASE = args[2] ?? 'a3db9a0';

/** A vault of N entries and an agent token for one of them, in `root` (made once with `--keep`). */
function buildVault(script: string, root: string, env: NodeJS.ProcessEnv): string {
  const tokenFile = join(root, 'bench-token');
  if (existsSync(tokenFile)) return spawnSync('cat', [tokenFile], { encoding: 'utf8' }).stdout;
  const t0 = Date.now();
  cli(script, env, ['vault', 'create']);
  // One import takes about 5,000 names: files of 4,000.
  for (let from = 0; from < N; from += IMPORT_BATCH) {
    const file = importBatch(root, from, N);
    cli(script, env, ['import', file]);
    rmSync(file);
  }
  const token = cli(script, env, ['agent', 'add', 'bench', '--scope', 'BENCH_KEY_000007']).trim();
  writeFileSync(tokenFile, token, { mode: 0o600 });
  cli(script, env, ['daemon', 'stop']);
  console.log(`built ${N} entries in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return token;
}

/** An agent's `get` by `script`: wall seconds. */
function get(script: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [script, 'get', 'BENCH_KEY_000007'], { env });
    const err: Buffer[] = [];
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.stdout.resume();
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`get: ${Buffer.concat(err).toString('utf8')}`));
      else resolve(Number(process.hrtime.bigint() - t0) / 1e9);
    });
  });
}

/** The running host's pid, or 0 when none runs. */
function hostPid(script: string, env: NodeJS.ProcessEnv): number {
  const r = spawnSync(process.execPath, [script, 'daemon', 'status'], { env, encoding: 'utf8' });
  return Number(/pid (\d+)/.exec(r.stdout)?.[1] ?? 0);
}

async function waitGone(pid: number): Promise<void> {
  while (pid > 0 && existsSync(`/proc/${pid}`)) await new Promise((r) => setTimeout(r, 20));
}

/** Stops the host cleanly (`daemon stop`) and waits until it is gone: its close is done. */
async function stop(script: string, env: NodeJS.ProcessEnv): Promise<void> {
  const pid = hostPid(script, env);
  cli(script, env, ['daemon', 'stop']);
  await waitGone(pid);
}

/** Kills the host with SIGKILL: no clean close. */
async function kill(script: string, env: NodeJS.ProcessEnv): Promise<void> {
  const pid = hostPid(script, env);
  if (pid === 0) throw new Error('no host to kill');
  process.kill(pid, 'SIGKILL');
  await waitGone(pid);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const here = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const baseDir = mkdtempSync(join(tmpdir(), 'vault-bench-start-base-'));
const root = KEEP ?? mkdtempSync(join(tmpdir(), 'vault-bench-start-'));
try {
  const base = buildBaseline(BASE, baseDir);
  const { env } = benchVault('vault-bench-start-env-', { VAULT_HOST_IDLE_MS: '600000' });
  if (!existsSync(join(root, 'pass')))
    cpSync(env.VAULT_PASSPHRASE_FILE as string, join(root, 'pass'));
  rmSync(env.HOME as string, { recursive: true, force: true });
  const owner: NodeJS.ProcessEnv = {
    ...env,
    HOME: root,
    VAULT_DIR: join(root, 'vault'),
    VAULT_CONFIG_DIR: join(root, 'config'),
    VAULT_PASSPHRASE_FILE: join(root, 'pass'),
  };
  const token = buildVault(here, root, owner);
  const agent = { ...owner, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token };
  const size = statSync(join(root, 'vault', 'vault.mdb')).size;
  console.log(
    `${N} entries, store file ${(size / 1e6).toFixed(0)} MB; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const figures = { baseline: [] as number[], clean: [] as number[], killed: [] as number[] };
  const row = (first: string, cells: string[]) =>
    console.log(first.padEnd(7) + cells.map((c) => c.padStart(12)).join(''));
  row('round', ['baseline s', 'clean s', 'killed s']);
  const record = knownGoodPath(join(root, 'vault', 'vault.mdb'));
  const columns = () => [figures.baseline, figures.clean, figures.killed];
  for (let r = 0; r < ROUNDS; r++) {
    await stop(here, owner);
    // The baseline knows no record: one left would only be found stale by this tree's next start.
    rmSync(record, { force: true });
    figures.baseline.push(await get(base, agent));
    await get(base, agent);
    await stop(base, owner);
    // This tree's host, started with no record (the full scan), then closed cleanly.
    await get(here, agent);
    await stop(here, owner);
    figures.clean.push(await get(here, agent));
    await get(here, agent);
    // Killed: no clean close, and its start took the record away: the full scan.
    await kill(here, owner);
    figures.killed.push(await get(here, agent));
    await get(here, agent);
    row(
      String(r + 1),
      columns().map((f) => (f[r] ?? NaN).toFixed(2)),
    );
  }
  row(
    'median',
    columns().map((f) => median(f).toFixed(2)),
  );
  console.log(
    `load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  cli(here, owner, ['daemon', 'stop']);
} finally {
  rmSync(baseDir, { recursive: true, force: true });
  if (KEEP === undefined) rmSync(root, { recursive: true, force: true });
}
