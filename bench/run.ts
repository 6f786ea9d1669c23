/**
 * Start-up of `vault-cli run -- true` in its sandbox beside `--no-sandbox`,
 * with `node -e ''` and a bare `bwrap ... true` as floors, interleaved in one
 * run against a warm host. Prints medians; asserts nothing.
 *
 *   node --import tsx bench/run.ts [runs]
 */
import { spawnSync } from 'node:child_process';
import { Rig } from '../test/support/rig.js';

const runs = Number(process.argv[2] ?? 15);

function time(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, cwd: rig.root, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const rig = new Rig();
try {
  await rig.create();
  await rig.set('Bench', 'bench-value');
  await rig.addAgent('bench', ['Bench']);
  const env: NodeJS.ProcessEnv = { ...rig.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const cli = new URL('../dist/src/cli/main.js', import.meta.url).pathname;
  const sandboxed = [cli, 'run', '--agent', 'bench', '--', 'true'];
  const plain = [cli, 'run', '--agent', 'bench', '--no-sandbox', '--', 'true'];
  const bwrap = ['--unshare-user', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/'];
  time(process.execPath, plain, env); // warm the host and the page cache

  const cells: Record<string, number[]> = {
    "node -e ''": [],
    'bwrap ... true': [],
    'run --no-sandbox -- true': [],
    'run -- true': [],
  };
  for (let i = 0; i < runs; i++) {
    cells["node -e ''"]?.push(time(process.execPath, ['-e', ''], env));
    cells['bwrap ... true']?.push(time('bwrap', [...bwrap, '--', '/bin/true'], env));
    cells['run --no-sandbox -- true']?.push(time(process.execPath, plain, env));
    cells['run -- true']?.push(time(process.execPath, sandboxed, env));
  }
  console.log(`node ${process.version}, ${runs} runs each, interleaved, warm host`);
  console.log(`${'command'.padEnd(28)}${'median ms'.padStart(10)}${'min ms'.padStart(9)}`);
  for (const [name, xs] of Object.entries(cells))
    console.log(
      `${name.padEnd(28)}${median(xs).toFixed(1).padStart(10)}${Math.min(...xs)
        .toFixed(1)
        .padStart(9)}`,
    );
  const extra =
    median(cells['run -- true'] ?? []) - median(cells['run --no-sandbox -- true'] ?? []);
  console.log(`the sandbox adds ${extra.toFixed(1)} ms to run's start-up (median)`);
} finally {
  await rig.dispose();
}
