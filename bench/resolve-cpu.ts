/**
 * The host's CPU per resolve with no socket, proxy or client in the way:
 * authenticate and release (access.ts), `conc` at a time, in a process of its
 * own per build, on one vault; CPU from process.cpuUsage (every thread of it,
 * LMDB's included). The builds take turns, `rounds` times, so load from
 * elsewhere falls on each alike. Fewer moving parts than bench/proxy.ts's
 * cells, so a change to the host's work per resolve shows through the noise
 * of a shared machine.
 *
 *   node --import tsx bench/resolve-cpu.ts [seconds] [--conc 8] [--rounds 5] [--baseline <checkout>]...
 *
 * A baseline checkout needs its node_modules (its src/ is run through tsx).
 * With BENCH_PROF=<dir>, this tree's runs leave a --cpu-prof profile there.
 * Prints each run and the medians; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, Rig } from '../test/support/rig.js';

interface Run {
  readonly n: number;
  /** CPU ms per resolve: all, user, system. */
  readonly ms: number;
  readonly user: number;
  readonly sys: number;
}

/** The child: resolves against VAULT_DIR with TOKEN, as the build at TREE does them. */
async function child(): Promise<void> {
  const tree = process.env.TREE as string;
  const { HostContext } = (await import(`${tree}/src/host/context.ts`)) as {
    HostContext: new (dir: string) => { close(): Promise<void> };
  };
  type Released = { wipe(): void }[];
  // A --baseline tree from before the host's rooms has access.ts one folder up.
  const accessPath = existsSync(`${tree}/src/host/agent/access.ts`)
    ? `${tree}/src/host/agent/access.ts`
    : `${tree}/src/host/access.ts`;
  const access = (await import(accessPath)) as {
    authenticate(ctx: unknown, token: unknown, source: string): unknown;
    endSession(s: unknown): void;
    release(
      ctx: unknown,
      s: unknown,
      refs: unknown,
      purpose: unknown,
      source: string,
    ): Promise<Released>;
  };
  const { Secret } = (await import(`${tree}/src/crypto/secret.ts`)) as {
    Secret: new (b: Buffer) => unknown;
  };
  const seconds = Number(process.env.SECONDS_EACH);
  const conc = Number(process.env.CONC);
  const ctx = new HostContext(process.env.VAULT_DIR as string);
  const token = process.env.TOKEN as string;
  const refs = [{ entry: 'Bench', field: 'token' }];
  const purpose = { kind: 'fill', host: 'localhost' };
  const one = async () => {
    const s = access.authenticate(ctx, new Secret(Buffer.from(token, 'utf8')), 'pid:1');
    try {
      for (const v of await access.release(ctx, s, refs, purpose, 'pid:1')) v.wipe();
    } finally {
      access.endSession(s);
    }
  };
  // Warm: the JIT, the caller cache, the decoded records.
  for (let i = 0; i < 300; i++) await one();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() - t0 < seconds * 1000) {
        await one();
        n++;
      }
    }),
  );
  const c = process.cpuUsage(c0);
  const run: Run = {
    n,
    ms: (c.user + c.system) / n / 1000,
    user: c.user / n / 1000,
    sys: c.system / n / 1000,
  };
  console.log(JSON.stringify(run));
  await ctx.close();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const at = args.indexOf(name);
    return at < 0 ? dflt : (args[at + 1] ?? dflt);
  };
  const seconds = args.find((a, i) => /^[0-9.]+$/.test(a) && !args[i - 1]?.startsWith('--')) ?? '3';
  const conc = opt('--conc', '8');
  const rounds = Number(opt('--rounds', '5'));
  const trees = [
    { name: 'this tree', dir: ROOT },
    ...args.flatMap((a, i) =>
      a === '--baseline'
        ? [{ name: args[i + 1] as string, dir: resolvePath(args[i + 1] as string) }]
        : [],
    ),
  ];
  const rig = new Rig();
  try {
    await rig.create();
    await rig.set('Bench', 'bench-secret-value', 'token');
    const token = await rig.addAgent(
      'bench',
      ['Bench'],
      ['--per-minute', '100000', '--per-hour', '100000'],
    );
    await rig.liftValuesLimit('bench');
    // The runs open the store themselves: one process per LMDB store at a time.
    await rig.stop();
    const runs = trees.map(() => [] as Run[]);
    for (let r = 0; r < rounds; r++) {
      for (const [i, t] of trees.entries()) {
        const prof =
          i === 0 && process.env.BENCH_PROF !== undefined
            ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`]
            : [];
        const proc = spawn(
          process.execPath,
          [...prof, '--import', 'tsx', fileURLToPath(import.meta.url)],
          {
            cwd: ROOT,
            env: {
              ...rig.env,
              VAULT_PASSPHRASE_FILE: undefined,
              CHILD: '1',
              TREE: t.dir,
              TOKEN: token,
              SECONDS_EACH: seconds,
              CONC: conc,
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        let out = '';
        proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
        await new Promise((done) => proc.once('exit', done));
        const run = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Run;
        runs[i]?.push(run);
        console.log(
          `round ${r + 1} ${t.name.padEnd(24)} ${run.ms.toFixed(4)} ms CPU/resolve (user ${run.user.toFixed(4)}, sys ${run.sys.toFixed(4)}), ${run.n} resolves`,
        );
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    for (const [i, t] of trees.entries()) {
      const got = runs[i] ?? [];
      console.log(
        `median ${t.name.padEnd(24)} ${med(got.map((x) => x.ms)).toFixed(4)} ms CPU/resolve (user ${med(got.map((x) => x.user)).toFixed(4)}, sys ${med(got.map((x) => x.sys)).toFixed(4)}) at c=${conc}`,
      );
    }
  } finally {
    await rig.dispose();
  }
}

await (process.env.CHILD === '1' ? child() : main());
