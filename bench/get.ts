/**
 * `vault-cli get` against a warm host, beside a bare `node -e ''` on the same
 * Node, interleaved in one run. Prints medians and the ratio; asserts nothing.
 * With `--baseline <dir>`, a build of another commit (its `dist`, e.g. made by
 * `git worktree add /tmp/base <commit> && (cd /tmp/base && npx tsc -p
 * tsconfig.build.json)`, or a copy of dist/ kept aside) runs `get` on a vault
 * of its own in the same interleaved loop: before and after side by side.
 *
 *   npm run bench            (or: node --import tsx bench/get.ts [runs] [--baseline <dist>])
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Rig } from '../test/support/rig.js';

const args = process.argv.slice(2);
const at = args.indexOf('--baseline');
const baseline = at >= 0 ? args.splice(at, 2)[1] : undefined;
const runs = Number(args[0] ?? 40);

function time(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
const baseRig = new Rig();
try {
  await rig.create();
  await rig.set('Bench', 'bench-value');
  const token = await rig.addAgent('bench', ['Bench']);
  await rig.liftValuesLimit('bench');
  // This sandbox exports NODE_EXTRA_CA_CERTS, which slows every Node start; measure without it.
  const env: NodeJS.ProcessEnv = {
    ...rig.env,
    VAULT_TOKEN: token,
    VAULT_PASSPHRASE_FILE: undefined,
  };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.VAULT_PASSPHRASE_FILE;
  const cli = new URL('../dist/src/cli/main.js', import.meta.url).pathname;
  time(process.execPath, [cli, 'get', 'Bench'], env); // warm the host and the page cache

  let baseCli: string | undefined;
  let baseEnv: NodeJS.ProcessEnv | undefined;
  if (baseline !== undefined) {
    baseCli = resolve(baseline, 'src', 'cli', 'main.js');
    const owner = (argv: string[], input = '') => {
      const r = spawnSync(process.execPath, [baseCli as string, ...argv], {
        env: baseRig.env,
        input,
      });
      if (r.status !== 0) throw new Error(`baseline ${argv.join(' ')}: ${r.stderr.toString()}`);
      return r.stdout.toString();
    };
    owner(['vault', 'create']);
    owner(['entry', 'set', 'Bench'], 'bench-value');
    const baseToken = owner(['agent', 'add', 'bench', '--scope', 'Bench']).trim();
    baseEnv = { ...baseRig.env, VAULT_TOKEN: baseToken };
    delete baseEnv.NODE_EXTRA_CA_CERTS;
    delete baseEnv.VAULT_PASSPHRASE_FILE;
    time(process.execPath, [baseCli, 'get', 'Bench'], baseEnv);
  }

  const bare: number[] = [];
  const version: number[] = [];
  const get: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < runs; i++) {
    bare.push(time(process.execPath, ['-e', ''], env));
    version.push(time(process.execPath, [cli, '--version'], env));
    get.push(time(process.execPath, [cli, 'get', 'Bench'], env));
    if (baseCli !== undefined && baseEnv !== undefined)
      base.push(time(process.execPath, [baseCli, 'get', 'Bench'], baseEnv));
  }
  const b = median(bare);
  const v = median(version);
  const g = median(get);
  console.log(`node ${process.version}, ${runs} runs each, interleaved, warm host`);
  console.log(`${'command'.padEnd(22)}${'median ms'.padStart(10)}${'min ms'.padStart(9)}`);
  console.log(
    `${"node -e ''".padEnd(22)}${b.toFixed(1).padStart(10)}${Math.min(...bare)
      .toFixed(1)
      .padStart(9)}`,
  );
  console.log(
    `${'vault-cli --version'.padEnd(22)}${v.toFixed(1).padStart(10)}${Math.min(...version)
      .toFixed(1)
      .padStart(9)}`,
  );
  console.log(
    `${'vault-cli get'.padEnd(22)}${g.toFixed(1).padStart(10)}${Math.min(...get)
      .toFixed(1)
      .padStart(9)}`,
  );
  if (base.length > 0) {
    const m = median(base);
    console.log(
      `${'baseline get'.padEnd(22)}${m.toFixed(1).padStart(10)}${Math.min(...base)
        .toFixed(1)
        .padStart(9)}`,
    );
    console.log(`ratio get / baseline get: ${(g / m).toFixed(2)}x`);
  }
  // Where a get's time goes, from the medians above: Node's own start, then
  // loading vault-cli's modules and parsing argv (--version stops there),
  // then the token, the connection and the host's answer.
  console.log(
    `breakdown of get: node start ${b.toFixed(1)} ms, modules and argv ${(v - b).toFixed(1)} ms, ` +
      `token and host exchange ${(g - v).toFixed(1)} ms`,
  );
  console.log(`ratio get / bare node: ${(g / b).toFixed(2)}x (target: at most 1.5x, goal 1.25x)`);
} finally {
  await rig.dispose();
  if (baseline !== undefined) {
    spawnSync(process.execPath, [resolve(baseline, 'src', 'cli', 'main.js'), 'daemon', 'stop'], {
      env: baseRig.env,
    });
  }
  rmSync(baseRig.root, { recursive: true, force: true });
}
