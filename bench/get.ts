/**
 * `vault-cli get`, `totp`, `render` of a small file and `--version` against a
 * warm host, beside a bare `node -e ''` on the same Node, interleaved in one
 * run: median and minimum CPU (user + sys of the child, from wait4) and wall
 * time, each command's ratio to `node -e ''`, and where a get's CPU goes.
 * Asserts nothing. CPU is the figure to compare on a shared machine: wall
 * time counts the waits for a core too. The children are timed by a python3
 * helper (Node's child_process reports no child rusage); without python3,
 * wall time only.
 *
 * With `--baseline <dist>`, a build of another commit (its `dist`, e.g. made
 * by `git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm
 * run build)`, or a copy of dist/ kept aside) runs the same commands on a
 * vault of its own in the same interleaved loop: before and after side by side.
 *
 *   node --import tsx bench/get.ts [runs=40] [--baseline <dist>]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ROOT, Rig, liftValuesArgs, predatesValuesLimit } from '../test/support/rig.js';

const args = process.argv.slice(2);
const at = args.indexOf('--baseline');
const baseline = at >= 0 ? args.splice(at, 2)[1] : undefined;
const runs = Number(args[0] ?? 40);

interface Cmd {
  readonly label: string;
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}
interface Times {
  readonly cpu: number[] | null;
  readonly wall: number[];
}

/**
 * Runs `cmds` round-robin `runs` times, each with stdout a pipe (get refuses
 * anything else), and returns each one's CPU ms (the child's ru_utime +
 * ru_stime) and wall ms, start to reaped.
 */
const TIMER = `
import json, os, subprocess, sys, time
spec = json.load(sys.stdin)
out = {c["label"]: {"cpu": [], "wall": []} for c in spec["cmds"]}
for _ in range(spec["runs"]):
    for c in spec["cmds"]:
        t0 = time.perf_counter()
        p = subprocess.Popen(c["argv"], env=c["env"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.read()
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = 0
        wall = (time.perf_counter() - t0) * 1000
        if status != 0:
            sys.exit(c["label"] + " failed: " + err.decode())
        out[c["label"]]["wall"].append(wall)
        out[c["label"]]["cpu"].append((ru.ru_utime + ru.ru_stime) * 1000)
json.dump(out, sys.stdout)
`;

function timeAll(cmds: readonly Cmd[]): Map<string, Times> {
  const spec = JSON.stringify({ runs, cmds });
  const py = spawnSync('python3', ['-c', TIMER], { input: spec, maxBuffer: 64 << 20 });
  if (py.error === undefined && py.status === 0) {
    const got = JSON.parse(py.stdout.toString()) as Record<
      string,
      { cpu: number[]; wall: number[] }
    >;
    return new Map(
      Object.entries(got).map(([k, v]) => [
        k,
        { cpu: v.cpu.length > 0 ? v.cpu : null, wall: v.wall },
      ]),
    );
  }
  if (py.error === undefined) throw new Error(`timer: ${py.stderr.toString()}`);
  console.log('python3 not found: wall time only');
  const out = new Map<string, Times>(cmds.map((c) => [c.label, { cpu: null, wall: [] }]));
  for (let i = 0; i < runs; i++) {
    for (const c of cmds) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(c.argv[0] as string, c.argv.slice(1), { env: c.env, stdio: 'pipe' });
      if (r.status !== 0) throw new Error(`${c.label} failed: ${r.stderr.toString()}`);
      out.get(c.label)?.wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return out;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** A vault of `cli`'s with an entry (a value and a TOTP seed), an agent, a template: the agent's env. */
function vaultFor(cli: string, rig: Rig): NodeJS.ProcessEnv {
  const owner = (argv: string[], input = '') => {
    const r = spawnSync(process.execPath, [cli, ...argv], { env: rig.env, input });
    if (r.status !== 0 && !predatesValuesLimit(r.stderr.toString())) {
      throw new Error(`${cli} ${argv.join(' ')}: ${r.stderr.toString()}`);
    }
    return r.stdout.toString();
  };
  owner(['vault', 'create']);
  owner(['entry', 'set', 'Bench'], 'bench-value');
  owner(['entry', 'set', 'Bench', '--field', 'totp'], 'JBSWY3DPEHPK3PXP');
  const token = owner(['agent', 'add', 'bench', '--scope', 'Bench']).trim();
  owner(liftValuesArgs('bench'));
  writeFileSync(join(rig.root, 'app.env'), 'TOKEN=vault://Bench/password\n');
  // This sandbox exports NODE_EXTRA_CA_CERTS, which slows every Node start; measure without it.
  const env: NodeJS.ProcessEnv = { ...rig.env, VAULT_TOKEN: token };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.VAULT_PASSPHRASE_FILE;
  return env;
}

/**
 * get, totp, render and --version of `cli`'s build, labelled with `who`, each
 * run from the file bin/vault-cli runs for them: pipe.cjs where the build has
 * one, main.js before it.
 */
function commandsOf(who: string, cli: string, rig: Rig, env: NodeJS.ProcessEnv): Cmd[] {
  const node = process.execPath;
  const pipe = join(dirname(cli), 'pipe.cjs');
  const entry = existsSync(pipe) ? pipe : cli;
  return [
    { label: `${who} get`, argv: [node, entry, 'get', 'Bench'], env },
    { label: `${who} totp`, argv: [node, entry, 'totp', 'Bench'], env },
    { label: `${who} render`, argv: [node, entry, 'render', join(rig.root, 'app.env')], env },
    { label: `${who} --version`, argv: [node, entry, '--version'], env },
  ];
}

const rigs: { rig: Rig; cli: string }[] = [];
try {
  const rig = new Rig();
  const cli = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  rigs.push({ rig, cli });
  const env = vaultFor(cli, rig);
  const cmds: Cmd[] = [
    { label: "node -e ''", argv: [process.execPath, '-e', ''], env },
    ...commandsOf('after', cli, rig, env),
    // What a user runs: the sh launcher and then the same get.
    {
      label: 'after get (bin/vault-cli)',
      argv: [join(ROOT, 'bin', 'vault-cli'), 'get', 'Bench'],
      env,
    },
    // Run as main.js, through the ESM loader first (what a script naming main.js gets).
    { label: 'after get (main.js)', argv: [process.execPath, cli, 'get', 'Bench'], env },
  ];
  if (baseline !== undefined) {
    const baseRig = new Rig();
    const baseCli = resolve(baseline, 'src', 'cli', 'main.js');
    rigs.push({ rig: baseRig, cli: baseCli });
    cmds.push(...commandsOf('before', baseCli, baseRig, vaultFor(baseCli, baseRig)));
  }
  // Warm the hosts and the page cache.
  for (const c of cmds) spawnSync(c.argv[0] as string, c.argv.slice(1), { env: c.env });

  const load = () => (process.getBuiltinModule('node:os').loadavg()[0] ?? 0).toFixed(2);
  const loadBefore = load();
  const times = timeAll(cmds);
  const bare = times.get("node -e ''") as Times;
  const cpuOf = (t: Times) => (t.cpu === null ? NaN : median(t.cpu));
  const b = { cpu: cpuOf(bare), wall: median(bare.wall) };
  console.log(
    `node ${process.version}, ${runs} runs each, interleaved, warm host; load average ${loadBefore} before, ${load()} after`,
  );
  const col = (s: string, n: number) => s.padStart(n);
  console.log(
    `${'command'.padEnd(28)}${col('cpu med', 9)}${col('cpu min', 9)}${col('x node', 8)}` +
      `${col('wall med', 10)}${col('wall min', 10)}${col('x node', 8)}`,
  );
  for (const c of cmds) {
    const t = times.get(c.label) as Times;
    const cpu = cpuOf(t);
    const wall = median(t.wall);
    console.log(
      `${c.label.padEnd(28)}${col(cpu.toFixed(1), 9)}${col(t.cpu === null ? '-' : Math.min(...t.cpu).toFixed(1), 9)}` +
        `${col((cpu / b.cpu).toFixed(2), 8)}${col(wall.toFixed(1), 10)}${col(Math.min(...t.wall).toFixed(1), 10)}` +
        `${col((wall / b.wall).toFixed(2), 8)}`,
    );
  }
  // Where a get's CPU goes, from the medians above: Node's own start, then
  // loading vault-cli's modules and parsing argv (--version stops there, and
  // builds process.stdout's stream for its line), then the token, the
  // connection and the host's answer.
  for (const who of baseline === undefined ? ['after'] : ['before', 'after']) {
    const v = cpuOf(times.get(`${who} --version`) as Times);
    const g = cpuOf(times.get(`${who} get`) as Times);
    console.log(
      `${who}: breakdown of get (cpu): node start ${b.cpu.toFixed(1)} ms, modules and argv ` +
        `${(v - b.cpu).toFixed(1)} ms, token and host exchange ${(g - v).toFixed(1)} ms`,
    );
  }
  console.log('target: get at most 1.5x node -e (goal 1.25x); the same for totp and render');
} finally {
  // Each host stopped by its own build: another build's owner client refuses it (VLT-3010).
  for (const { rig, cli } of rigs) {
    spawnSync(process.execPath, [cli, 'daemon', 'stop'], { env: rig.env });
    rmSync(rig.root, { recursive: true, force: true });
  }
}
