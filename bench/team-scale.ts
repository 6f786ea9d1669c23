/**
 * Team mode at scale (issue 37): a vault of N entries on LMDB and on
 * PostgreSQL (a cluster started here, as the tests start one), built by this
 * tree and by a baseline build of an earlier commit, in one run. For each:
 *
 * - import: `vault-cli import` of a .env file of N variables (one entry
 *   each), wall time;
 * - cold start: the host stopped, then an agent's `get` (which starts the
 *   host and has it load the vault), wall time; then a second, warm `get`;
 * - cold again: the host stopped once more and the same `get`: a start with
 *   what the first left (LMDB's clean-close record, a team host's file of
 *   digest shares), as every start after a vault's first is;
 * - RSS: the host's resident and peak memory after those gets
 *   (/proc/<pid>/status VmRSS and VmHWM).
 *
 * Asserts nothing.
 *
 *   node --import tsx bench/team-scale.ts [entries=10000] [baseline git ref=dab84b2] [--no-baseline]
 *
 * The baseline is exported with `git archive` into a temp directory and
 * built there against this tree's node_modules (as bench/resolve.ts does).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Postgres } from '../test/support/postgres.js';
import { ROOT } from '../test/support/rig.js';
import { benchVault, buildBaseline, importBatch, IMPORT_BATCH } from './baseline.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const N = Number(args[0] ?? 10_000);
const BASE = args[1] ?? 'dab84b2';
const WITH_BASELINE = !process.argv.includes('--no-baseline');
const ENGINES = (process.env.BENCH_ENGINES ?? 'lmdb,pg').split(',');

interface Ran {
  readonly ms: number;
  readonly stdout: string;
}

function cli(
  script: string,
  env: NodeJS.ProcessEnv,
  argv: string[],
  input = '',
  extra: readonly string[] = [],
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [...extra, script, ...argv], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const stdout = Buffer.concat(out).toString('utf8');
      if (code !== 0) {
        reject(new Error(`vault-cli ${argv.join(' ')}: ${Buffer.concat(err).toString('utf8')}`));
      } else resolve({ ms, stdout });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

function memOf(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

interface Figures {
  importS: number;
  coldS: number;
  againS: number;
  warmMs: number;
  rss: number;
  hwm: number;
}

async function measure(script: string, store: string | null): Promise<Figures> {
  const { root, env } = benchVault('vault-bench-scale-', {
    VAULT_HOST_IDLE_MS: '600000',
    VAULT_TEST_WEAK_KDF: '1',
  });
  const agentEnv = { ...env, VAULT_PASSPHRASE_FILE: undefined };
  try {
    await cli(script, env, ['vault', 'create', ...(store === null ? [] : ['--store', store])]);
    // One import takes about 5,000 names (its list of names under 512 KiB): files of 4,000.
    let importMs = 0;
    for (let from = 0; from < N; from += IMPORT_BATCH) {
      const file = importBatch(root, from, N);
      importMs += (await cli(script, env, ['import', file])).ms;
    }
    const token = (
      await cli(script, env, ['agent', 'add', 'bench', '--scope', 'BENCH_KEY_000007'])
    ).stdout.trim();
    await cli(script, env, ['daemon', 'stop']);
    const cold = await cli(script, { ...agentEnv, VAULT_TOKEN: token }, [
      'get',
      'BENCH_KEY_000007',
    ]);
    const warm = await cli(script, { ...agentEnv, VAULT_TOKEN: token }, [
      'get',
      'BENCH_KEY_000007',
    ]);
    const status = (await cli(script, env, ['daemon', 'status'])).stdout;
    const pid = Number(/pid (\d+)/.exec(status)?.[1]);
    const mem = memOf(pid);
    await cli(script, env, ['daemon', 'stop']);
    const again = await cli(script, { ...agentEnv, VAULT_TOKEN: token }, [
      'get',
      'BENCH_KEY_000007',
    ]);
    return {
      importS: importMs / 1000,
      coldS: cold.ms / 1000,
      againS: again.ms / 1000,
      warmMs: warm.ms,
      ...mem,
    };
  } finally {
    await cli(script, env, ['daemon', 'stop']).catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

const here = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const baseDir = mkdtempSync(join(tmpdir(), 'vault-bench-scale-base-'));
const pg = ENGINES.includes('pg') ? await Postgres.start() : null;
try {
  const builds: [string, string][] = [['this tree', here]];
  if (WITH_BASELINE) builds.unshift([`baseline ${BASE}`, buildBaseline(BASE, baseDir)]);
  console.log(
    `team-scale bench: ${N} entries; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  console.log(
    `${'build'.padEnd(18)}${'store'.padEnd(12)}${'import s'.padStart(10)}${'cold s'.padStart(9)}${'again s'.padStart(9)}${'warm ms'.padStart(9)}${'RSS MB'.padStart(9)}${'peak MB'.padStart(9)}`,
  );
  for (const engine of ENGINES) {
    for (const [name, script] of builds) {
      const store = engine === 'pg' ? (pg as Postgres).database().url : null;
      const f = await measure(script, store);
      console.log(
        `${name.padEnd(18)}${(engine === 'pg' ? 'PostgreSQL' : 'LMDB').padEnd(12)}${f.importS.toFixed(1).padStart(10)}${f.coldS.toFixed(2).padStart(9)}${f.againS.toFixed(2).padStart(9)}${f.warmMs.toFixed(0).padStart(9)}${f.rss.toFixed(0).padStart(9)}${f.hwm.toFixed(0).padStart(9)}`,
      );
    }
  }
} finally {
  await pg?.stop();
  rmSync(baseDir, { recursive: true, force: true });
}
