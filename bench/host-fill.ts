/**
 * One host's CPU per request under team-hosts.ts's load (issue 37): fills
 * (`resolve`) and reads (`read`) through one HostChannel, 24 in flight, 20
 * agents, against one LMDB host and one PostgreSQL (team) host; for this tree
 * and, with --base <ref>, a baseline build (git archive of the ref, built in
 * a temp directory), their cells alternated `rounds` times so the machine's
 * load reaches both alike. Prints requests/s and the host's own CPU ms per
 * request (utime + stime from /proc, every thread of it), which a loaded
 * machine disturbs far less than the rate. The hosts are started here, so
 * with BENCH_PROF=<dir> each runs under --cpu-prof and leaves its profile
 * there (named by build and engine) when the bench stops it;
 * BENCH_HOST_FLAGS adds node flags to every host (e.g. --trace-gc), and
 * BENCH_HOST_OUT=<path> keeps each host's stdout in <path>.<build and engine>.
 *
 *   node --import tsx bench/host-fill.ts [requests per cell=3000] [--rounds 3] [--base <ref>] [--engine lmdb|pg]
 *   (after npm run build)
 *
 * Asserts nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostChannel } from '../src/client/channel.js';
import { Postgres } from '../test/support/postgres.js';
import { CLI, Rig } from '../test/support/rig.js';
import { benchAgents, buildBaseline } from './baseline.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
};
const N = Number(argv.find((a, i) => /^\d+$/.test(a) && !argv[i - 1]?.startsWith('--')) ?? 3000);
const ROUNDS = Number(opt('--rounds') ?? 3);
const BASE = opt('--base');
const ENGINES = (opt('--engine') ?? 'lmdb,pg').split(',');
const PROF = process.env.BENCH_PROF;
const IN_FLIGHT = 24;
/** USER_HZ: the unit of /proc/<pid>/stat's times, 100 on Linux. */
const TICKS = 100;

/** The user and system CPU ms a process has used so far (/proc/<pid>/stat). */
function cpuOf(pid: number): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: (Number(f[11]) * 1000) / TICKS, sys: (Number(f[12]) * 1000) / TICKS };
  } catch {
    return { user: 0, sys: 0 };
  }
}
const AGENTS = 20;

type Kind = 'fill' | 'get';

interface Host {
  readonly name: string;
  readonly rig: Rig;
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly channel: HostChannel;
  readonly tokens: string[];
}

async function once(h: Host, token: string, kind: Kind): Promise<void> {
  if (kind === 'get')
    await h.channel.call('read', { token, entry: 'db', field: 'password', mode: 'get' });
  else await h.channel.call('resolve', { token, refs: [{ entry: 'db', field: 'password' }] });
}

interface Cell {
  readonly rate: number;
  /** The host's CPU ms a request: all, and its system share. */
  readonly ms: number;
  readonly sys: number;
}

/** N requests, IN_FLIGHT at once: their rate and the host's CPU ms each. */
async function cell(h: Host, kind: Kind): Promise<Cell> {
  let next = 0;
  const c0 = cpuOf(h.pid);
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < N) {
        const i = next++;
        await once(h, h.tokens[i % h.tokens.length] as string, kind);
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const c1 = cpuOf(h.pid);
  return { rate: N / s, ms: (c1.user + c1.sys - c0.user - c0.sys) / N, sys: (c1.sys - c0.sys) / N };
}

/** A vault of one entry and AGENTS agents made by `cli`, then its host started here (profiled under BENCH_PROF). */
async function host(name: string, cli: string, url: string | null): Promise<Host> {
  const rig = new Rig();
  rig.cli = cli;
  const tokens = await benchAgents(rig, AGENTS, url === null ? [] : ['--store', url]);
  await rig.stop();
  let flags = (process.env.BENCH_HOST_FLAGS ?? '').split(' ').filter((f) => f !== '');
  if (PROF !== undefined) {
    const dir = join(PROF, name.replace(/[^a-z0-9]+/gi, '-'));
    mkdirSync(dir, { recursive: true });
    flags = [...flags, '--cpu-prof', `--cpu-prof-dir=${dir}`];
  }
  // A host a client starts gets no node flags (hostEnv strips NODE_OPTIONS): this one is started here.
  const proc = spawn(process.execPath, [...flags, cli, 'daemon'], {
    env: rig.env,
    stdio: [
      'ignore',
      process.env.BENCH_HOST_OUT === undefined
        ? 'ignore'
        : openSync(`${process.env.BENCH_HOST_OUT}.${name.replace(/[^a-z0-9]+/gi, '-')}`, 'w'),
      'ignore',
    ],
  });
  const channel = new HostChannel({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: cli, env: rig.env },
    autoStart: false,
  });
  let pid = 0;
  for (let i = 0; i < 400 && pid === 0; i++) {
    try {
      pid = (await channel.call('status', {})).pid;
    } catch {
      if (proc.exitCode !== null) throw new Error(`${name}: the host exited`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const h = { name, rig, proc, pid, channel, tokens };
  // Warm: the copy loaded, the code compiled.
  // (200 left the first rounds of every build slower than the later ones.)
  for (let i = 0; i < 1000; i++)
    await once(h, tokens[i % AGENTS] as string, i % 2 ? 'fill' : 'get');
  return h;
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const pg = ENGINES.includes('pg') ? await Postgres.start() : null;
const baseDir = mkdtempSync(join(tmpdir(), 'vault-host-fill-base-'));
const hosts: Host[] = [];
try {
  const builds: [string, string][] = [['this', CLI]];
  if (BASE !== undefined) builds.push([`base ${BASE}`, buildBaseline(BASE, baseDir)]);
  for (const engine of ENGINES)
    for (const [b, cli] of builds)
      hosts.push(await host(`${engine} ${b}`, cli, engine === 'pg' ? pg!.database().url : null));
  console.log(
    `host-fill bench: ${N} requests a cell, ${IN_FLIGHT} in flight, ${AGENTS} agents; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const got = new Map<string, Cell[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const h of hosts) {
      for (const kind of ['fill', 'get'] as const) {
        const c = await cell(h, kind);
        const key = `${h.name.padEnd(16)} ${kind}`;
        got.set(key, [...(got.get(key) ?? []), c]);
        console.log(
          `round ${round} ${key}: ${c.rate.toFixed(0).padStart(5)}/s, host ${c.ms.toFixed(3)} ms CPU each (sys ${c.sys.toFixed(3)}); load ${loadavg()[0]?.toFixed(1)}`,
        );
      }
    }
  }
  for (const [key, cs] of got)
    console.log(
      `median  ${key}: ${med(cs.map((c) => c.rate))
        .toFixed(0)
        .padStart(
          5,
        )}/s, host ${med(cs.map((c) => c.ms)).toFixed(3)} ms CPU each (sys ${med(cs.map((c) => c.sys)).toFixed(3)})`,
    );
} finally {
  for (const h of hosts) {
    h.channel.close();
    // `daemon stop` ends the host cleanly, so --cpu-prof writes its profile.
    await h.rig.dispose().catch(() => {});
  }
  await pg?.stop();
  rmSync(baseDir, { recursive: true, force: true });
}
