/**
 * The host's CPU per fill, alone: the proxy's fill cell of bench/proxy.ts at
 * one concurrency, with nothing else measured, so one change to the host can
 * be compared against another build in a few seconds (issue 28). Alternates
 * this tree and the builds named by --baseline, `rounds` times, and prints
 * the host's CPU ms per fill (utime + stime of the host, from /proc) and
 * fills/s for each round and their medians. With BENCH_PROF=<dir> the host of
 * this tree runs under --cpu-prof and leaves its profile there.
 *
 *   node --import tsx bench/host-cpu.ts [seconds] [--conc 8] [--rounds 3] [--baseline <checkout>]...
 *
 * Asserts nothing; a figure here is as noisy as the machine it ran on.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request, type Agent } from 'node:https';
import { join, resolve as resolvePath } from 'node:path';
import { HostChannel } from '../src/client/channel.js';
import { TunnelAgent } from './tunnel.js';
import { makeTestCa, startProxy } from '../test/support/proxy.js';
import { cpuMs } from '../test/support/procs.js';
import { CLI, Rig, liftValuesArgs, ok, predatesValuesLimit } from '../test/support/rig.js';

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const at = args.indexOf(name);
  return at < 0 ? dflt : (args[at + 1] ?? dflt);
};
const seconds = Number(
  args.find((a, i) => /^[0-9.]+$/.test(a) && !args[i - 1]?.startsWith('--')) ?? 3,
);
const conc = Number(opt('--conc', '8'));
const rounds = Number(opt('--rounds', '3'));
const baselines = args.flatMap((a, i) => (a === '--baseline' ? [args[i + 1] as string] : []));
const prof = process.env.BENCH_PROF;
/** Node flags for this tree's host (e.g. BENCH_HOST_FLAGS=--max-semi-space-size=16). */
const hostFlags = (process.env.BENCH_HOST_FLAGS ?? '').split(' ').filter((f) => f !== '');

const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** CPU ms by thread name (comm) of a process so far: which of the host's threads does the work. */
function threadMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(pid) ? 'main' : comm;
      out.set(name, (out.get(name) ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / TICKS);
      // The main thread's kernel share: syscalls (commits, socket I/O) against its own JS.
      if (tid === String(pid)) out.set('main sys', (Number(f[12]) * 1000) / TICKS);
    } catch {
      // The thread ended.
    }
  }
  return out;
}

const UPSTREAM = `
  const https = require('node:https');
  const s = https.createServer({ key: process.env.KEY, cert: process.env.CERT, keepAliveTimeout: 60000 },
    (req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); });
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
`;

const once = (agent: Agent, upPort: number) =>
  new Promise<void>((resolve, reject) => {
    const headers = { authorization: 'Bearer vault://Bench/token' };
    const req = request({ host: 'localhost', port: upPort, path: '/', agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });

interface Setup {
  readonly name: string;
  readonly rig: Rig;
  readonly stop: () => Promise<void>;
  readonly hostPid: number;
  readonly fill: () => Promise<{ hostMs: number; rps: number; threads: string }>;
}

async function setUp(
  name: string,
  dist: string | null,
  ca: ReturnType<typeof makeTestCa>,
  upPort: number,
): Promise<Setup> {
  const rig = new Rig();
  const env = rig.env as Record<string, string | undefined>;
  const cli = dist === null ? CLI : join(dist, 'src', 'cli', 'main.js');
  // The rig runs CLI; another build is run by pointing the rig's commands at it.
  const run = (argv: string[], input?: string) =>
    new Promise<string>((done, fail) => {
      const p = spawn(process.execPath, [cli, ...argv], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (c: Buffer) => (out += c.toString()));
      p.stderr.on('data', (c: Buffer) => (err += c.toString()));
      p.stdin.end(input ?? '');
      p.once('exit', (code) =>
        code === 0 ? done(out) : fail(new Error(`${argv.join(' ')}: ${err}`)),
      );
    });
  if (dist === null) {
    await rig.create();
    await rig.set('Bench', 'bench-secret-value', 'token');
  } else {
    await run(['vault', 'create']);
    await run(['entry', 'set', 'Bench', '--field', 'token'], 'bench-secret-value');
  }
  const token = (
    dist === null
      ? await rig.addAgent('bench', ['Bench'], ['--per-minute', '100000', '--per-hour', '100000'])
      : await run([
          'agent',
          'add',
          'bench',
          '--scope',
          'Bench',
          '--per-minute',
          '100000',
          '--per-hour',
          '100000',
        ])
  ).trim();
  if (dist === null) await rig.liftValuesLimit('bench');
  else
    await run(liftValuesArgs('bench')).catch((err: Error) => {
      if (!predatesValuesLimit(err.message)) throw err;
    });
  await run(['daemon', 'stop']);
  const flags = [
    ...hostFlags,
    ...(prof === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${prof}`]),
  ];
  if (flags.length > 0 && dist === null) {
    // A host a client starts gets no NODE_OPTIONS (hostEnv strips them): this one is started here.
    const host = spawn(process.execPath, [...flags, cli, 'daemon'], {
      env,
      stdio: 'ignore',
    });
    for (let i = 0; i < 200; i++) {
      try {
        await run(['daemon', 'status']);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
      if (host.exitCode !== null) throw new Error('profiled host exited');
    }
  }
  let proxy;
  if (dist === null) proxy = await startProxy(rig, token, ca);
  else {
    // startProxy runs CLI: for another build, the same by hand.
    const { freePort } = await import('../test/support/proxy.js');
    const port = await freePort();
    const penv = { ...env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined };
    const proc = spawn(
      process.execPath,
      [cli, 'proxy', '--port', String(port), '--upstream-ca', ca.caFile],
      {
        env: penv,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    await new Promise<void>((r, f) => {
      let e = '';
      proc.stderr.on('data', (c: Buffer) => {
        e += c.toString();
        if (/proxy on http/.test(e)) r();
      });
      proc.once('exit', () => f(new Error(e)));
    });
    proxy = { port, proc, stop: async () => void proc.kill('SIGTERM') };
  }
  const ours = readFileSync(ok(await rig.agent(['proxy', 'ca'], token)).trim(), 'utf8');
  const ch = new HostChannel({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: cli, env },
    autoStart: false,
  });
  const hostPid = (await ch.call('status', {})).pid;
  ch.close();
  const p = proxy;
  const fill = async () => {
    const agent = new TunnelAgent(p.port, upPort, ours, conc);
    await Promise.all(Array.from({ length: conc }, () => once(agent, upPort)));
    let n = 0;
    const c0 = cpuMs(hostPid);
    const t0s = threadMs(hostPid);
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      Array.from({ length: conc }, async () => {
        while (performance.now() < end) {
          await once(agent, upPort);
          n++;
        }
      }),
    );
    const el = (performance.now() - t0) / 1000;
    const hostMs = (cpuMs(hostPid) - c0) / n;
    const threads = [...threadMs(hostPid)]
      .map(([k, v]) => [k, (v - (t0s.get(k) ?? 0)) / n] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ');
    agent.destroy();
    return { hostMs, rps: n / el, threads };
  };
  return {
    name,
    rig,
    hostPid,
    fill,
    stop: async () => {
      await p.stop();
      await rig.dispose();
    },
  };
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const root = new Rig();
  const procs: ChildProcess[] = [];
  const setups: Setup[] = [];
  try {
    const ca = makeTestCa(root.root);
    const up = spawn(process.execPath, ['-e', UPSTREAM], {
      env: { PATH: process.env.PATH, KEY: ca.key, CERT: ca.cert },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    procs.push(up);
    const upPort = await new Promise<number>((r) =>
      up.stdout.once('data', (c: Buffer) => r(Number(c.toString()))),
    );
    setups.push(await setUp('this tree', null, ca, upPort));
    for (const b of baselines) setups.push(await setUp(b, resolvePath(b, 'dist'), ca, upPort));
    const got = setups.map(() => [] as { hostMs: number; rps: number }[]);
    for (let r = 0; r < rounds; r++) {
      for (const [i, s] of setups.entries()) {
        const c = await s.fill();
        got[i]?.push(c);
        console.log(
          `round ${r + 1} ${s.name.padEnd(24)} host ${c.hostMs.toFixed(3)} ms/fill  ${c.rps.toFixed(0)} fills/s  (${c.threads})`,
        );
      }
    }
    for (const [i, s] of setups.entries()) {
      const g = got[i] ?? [];
      console.log(
        `median ${s.name.padEnd(24)} host ${med(g.map((c) => c.hostMs)).toFixed(3)} ms/fill  ${med(g.map((c) => c.rps)).toFixed(0)} fills/s (c=${conc})`,
      );
    }
  } finally {
    for (const s of setups) await s.stop();
    for (const p of procs) p.kill();
    await root.dispose();
  }
}

await main();
