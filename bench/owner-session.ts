/**
 * What an owner session saves, in one run:
 *  1. the vault host's CPU while an idle `vault-cli dashboard` is open for
 *     WINDOW_S seconds, read from /proc/<host pid>/stat (utime + stime), for
 *     this build and, with `--baseline <dist>`, for another build (the
 *     dashboard that asked `agent.ls` with the passphrase every second);
 *  2. an owner command's latency (`vault-cli entry ls`, the whole process) on
 *     a terminal with an owner session, and with the passphrase (file) instead.
 * Vaults use the real Argon2id costs (no test KDF): that cost is the point.
 * Prints figures; asserts nothing.
 *
 *   node --import tsx bench/owner-session.ts [--baseline <dist>] [--window <s>]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the bench is the user's terminal: it drives the CLI under a pty
import { spawn, type IPty } from 'node-pty';
import { Rig } from '../test/support/rig.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const baseline = opt('--baseline');
const WINDOW_S = Number(opt('--window') ?? 30);
const RUNS = 5;
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const HZ = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: () => boolean, label: string, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (what()) return;
  throw new Error(`timed out waiting for ${label}`);
}

/** utime + stime of `pid`, in clock ticks. */
function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]);
}

interface Build {
  readonly label: string;
  readonly cli: string;
  readonly rig: Rig;
  readonly env: Record<string, string>;
}

function build(label: string, dist: string): Build {
  const rig = new Rig();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(rig.env))
    if (v !== undefined && k !== 'VAULT_TEST_WEAK_KDF') env[k] = v;
  return { label, cli: resolve(dist, 'src', 'cli', 'main.js'), rig, env };
}

function owner(b: Build, argv: string[], input = ''): string {
  const r = spawnSync(process.execPath, [b.cli, ...argv], { env: b.env, input });
  if (r.status !== 0) throw new Error(`${b.label} ${argv.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function pty(b: Build, file: string, argv: string[]): { pty: IPty; output: () => string } {
  const p = spawn(file, argv, {
    cols: 120,
    rows: 40,
    cwd: b.rig.root,
    env: { ...b.env, PS1: '$ ' },
  });
  let out = '';
  p.onData((d) => (out += d));
  return { pty: p, output: () => out };
}

async function setUp(b: Build): Promise<number> {
  owner(b, ['vault', 'create']);
  owner(b, ['entry', 'set', 'Bench'], 'bench-value');
  owner(b, ['agent', 'add', 'bench', '--scope', 'Bench']);
  const status = JSON.parse(owner(b, ['daemon', 'status', '--json'])) as { pid: number };
  return status.pid;
}

/** Host CPU, % of one core, over WINDOW_S seconds of an idle dashboard. */
async function idleDashboard(b: Build, host: number): Promise<number> {
  const d = pty(b, process.execPath, [b.cli, 'dashboard', '--no-browser']);
  try {
    await until(() => /1 agent ·/.test(d.output()), `${b.label} dashboard data`);
    await sleep(3000); // its start (one unlock) is not idle time
    const t0 = cpuTicks(host);
    const w0 = Date.now();
    await sleep(WINDOW_S * 1000);
    const ticks = cpuTicks(host) - t0;
    return (100 * ticks) / HZ / ((Date.now() - w0) / 1000);
  } finally {
    d.pty.write('q');
    d.pty.kill();
  }
}

/** Median ms of `vault-cli entry ls` typed into one terminal, after `before` there. */
async function latency(b: Build, before: string, env: string): Promise<number> {
  const sh = pty(b, '/bin/sh', ['-i']);
  try {
    await until(() => sh.output().includes('$ '), 'the shell');
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(b.cli)}`;
    const loop =
      `${before.replaceAll('vault-cli', cmd)}; for i in 1 2 3 4 5; do s=$(date +%s%N); ` +
      `${env} ${cmd} entry ls >/dev/null; e=$(date +%s%N); echo "lat""=$(( (e-s)/1000000 ))"; done; echo "do""ne"\r`;
    sh.pty.write(loop);
    await until(() => sh.output().includes('done\r'), 'the latency loop', 120_000);
    const ms = [...sh.output().matchAll(/lat=(\d+)/g)].map((m) => Number(m[1]));
    ms.sort((x, y) => x - y);
    return ms[Math.floor(ms.length / 2)] ?? NaN;
  } finally {
    sh.pty.kill();
  }
}

const builds = [build('this build', new URL('../dist', import.meta.url).pathname)];
if (baseline !== undefined) builds.unshift(build('baseline', baseline));
try {
  console.log(`idle dashboard, ${WINDOW_S} s, vault host CPU (utime+stime, % of one core):`);
  for (const b of builds) {
    const host = await setUp(b);
    const pct = await idleDashboard(b, host);
    console.log(`  ${b.label.padEnd(11)} ${pct.toFixed(2)} %`);
  }
  const now = builds[builds.length - 1] as Build;
  const withPass = await latency(now, 'vault-cli lock', '');
  const withSession = await latency(
    now,
    'vault-cli unlock',
    // The passphrase file is not read with a session; it is dropped to show it.
    'VAULT_PASSPHRASE_FILE=',
  );
  console.log(`owner command (entry ls, whole process), median of ${RUNS}:`);
  console.log(`  with the passphrase  ${withPass} ms`);
  console.log(`  with a session       ${withSession} ms`);
} finally {
  for (const b of builds) {
    spawnSync(process.execPath, [b.cli, 'daemon', 'stop'], { env: b.env });
    b.rig.dispose().catch(() => {});
  }
}
