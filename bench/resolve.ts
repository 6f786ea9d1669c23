/**
 * One `resolve` naming many unknown references (issue 16: 10,000 of them held
 * the host for half a minute and grew the store by ~520 bytes each), timed on
 * this tree's host and on a baseline build of an earlier commit, in one run.
 * Prints the host's time to answer (the request's round trip on a warm host),
 * the growth of the store file, and how long a `get` sent meanwhile waited;
 * asserts nothing.
 *
 *   node --import tsx bench/resolve.ts [sizes, e.g. 1000,10000] [baseline git ref]
 *
 * The agent's limits are raised out of the way (100,000 a minute and an hour):
 * the figures are the request's own cost, not a rate-limit refusal.
 *
 * The baseline (default: 8ea27c6, the tree before issue 16) is exported with
 * `git archive` into a temp directory and built there against this tree's
 * node_modules.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawPost } from '../test/support/raw-host.js';
import { ROOT, liftValuesArgs, predatesValuesLimit } from '../test/support/rig.js';
import { benchVault, buildBaseline, cli } from './baseline.js';

const SIZES = (process.argv[2] ?? '1000,10000').split(',').map(Number);
const BASE = process.argv[3] ?? '8ea27c6';

/** A raw request to the host, timed from before the connection to the end of the reply. */
async function post(
  socket: string,
  op: string,
  body: object,
): Promise<{ ms: number; reply: string }> {
  const t0 = process.hrtime.bigint();
  const reply = await rawPost(socket, op, body);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, reply };
}

interface Figures {
  resolveMs: number;
  getMs: number;
  growth: number;
  code: string;
}

async function measure(script: string, n: number): Promise<Figures> {
  const { root, env } = benchVault('vault-bench-resolve-', { VAULT_HOST_IDLE_MS: '60000' });
  try {
    cli(script, env, ['vault', 'create']);
    cli(script, env, ['entry', 'set', 'Known'], 'known-value');
    const token = cli(script, env, [
      'agent',
      'add',
      'bench',
      '--scope',
      'Known',
      '--per-minute',
      '100000',
      '--per-hour',
      '100000',
    ]).trim();
    try {
      cli(script, env, liftValuesArgs('bench'));
    } catch (err) {
      if (!predatesValuesLimit((err as Error).message)) throw err;
    }
    const socket = join(env.VAULT_DIR as string, 'host.sock');
    const store = join(env.VAULT_DIR as string, 'vault.mdb');
    const refs = Array.from({ length: n }, (_, i) => ({
      entry: `unknown ${i}`,
      field: 'password',
    }));
    const before = statSync(store).size;
    const big = post(socket, 'resolve', { token, refs });
    // A small request sent just after: how long every other client waits.
    await new Promise((r) => setTimeout(r, 50));
    const small = await post(socket, 'read', {
      token,
      entry: 'Known',
      field: 'password',
      mode: 'get',
    });
    const r = await big;
    const code =
      /"code":"(VLT-[0-9]+)"/.exec(r.reply)?.[1] ?? (r.reply.includes('"ok":true') ? 'ok' : '?');
    const growth = statSync(store).size - before;
    cli(script, env, ['daemon', 'stop']);
    return { resolveMs: r.ms, getMs: small.ms, growth, code };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const baseDir = mkdtempSync(join(tmpdir(), 'vault-bench-base-'));
try {
  const baseline = buildBaseline(BASE, baseDir);
  const current = join(ROOT, process.env.VAULT_TEST_DIST ?? 'dist', 'src', 'cli', 'main.js');
  const rows: [string, number, Figures][] = [];
  for (const n of SIZES) {
    rows.push([`baseline ${BASE}`, n, await measure(baseline, n)]);
    rows.push(['this tree', n, await measure(current, n)]);
  }
  console.log(`one resolve of n unknown references, warm host, node ${process.version}`);
  console.log(
    `${'build'.padEnd(20)}${'n'.padStart(7)}${'resolve ms'.padStart(12)}${'get meanwhile ms'.padStart(18)}${'store growth B'.padStart(16)}  reply`,
  );
  for (const [name, n, f] of rows) {
    console.log(
      `${name.padEnd(20)}${String(n).padStart(7)}${f.resolveMs.toFixed(0).padStart(12)}${f.getMs.toFixed(0).padStart(18)}${String(f.growth).padStart(16)}  ${f.code}`,
    );
  }
} finally {
  rmSync(baseDir, { recursive: true, force: true });
}
