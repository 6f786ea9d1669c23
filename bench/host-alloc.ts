/**
 * What one fill allocates in the host, by function (issue 37): the access
 * path (authenticate, release) run in this process on an LMDB vault of one
 * entry and 20 agents, 24 at a time, under V8's sampling heap profiler with
 * the objects the young and old collections took kept in the samples. Bytes
 * allocated are nearly the same from run to run on a loaded machine, where
 * CPU time is not; each byte is later work for the collector. Prints the
 * bytes a fill by allocating function (self) and the total, for the build in
 * `--dist` (default this tree's dist/; a baseline's dist/ beside its own
 * node_modules compares another build). Asserts nothing.
 *
 *   node --import tsx bench/host-alloc.ts [fills=3000] [--dist <dir>] [--top 30]
 *
 * With --cpu (and node --cpu-prof), no heap sampler: the CPU of the same fills alone.
 */
import { Session } from 'node:inspector/promises';
import { resolve as resolvePath } from 'node:path';
import { ROOT, Rig } from '../test/support/rig.js';
import { benchAgents } from './baseline.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
};
const FILLS = Number(
  argv.find((a, i) => /^\d+$/.test(a) && !argv[i - 1]?.startsWith('--')) ?? 3000,
);
const DIST = resolvePath(opt('--dist') ?? `${ROOT}/dist`);
const TOP = Number(opt('--top') ?? 30);
const CPU_ONLY = argv.includes('--cpu');
const AGENTS = 20;
const IN_FLIGHT = 24;

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const rig = new Rig();
try {
  const tokens = await benchAgents(rig, AGENTS);
  // This process opens the store: no host may hold it meanwhile.
  await rig.stop();
  process.env.VAULT_DIR = rig.vaultDir;
  process.env.HOME = rig.root;
  const { HostContext } = (await import(`${DIST}/src/host/context.js`)) as {
    HostContext: new (dir: string) => { close(): Promise<void> };
  };
  const access = (await import(`${DIST}/src/host/agent/access.js`)) as {
    authenticate(ctx: unknown, token: unknown, source: string): unknown;
    endSession(s: unknown): void;
    release(...a: unknown[]): Promise<{ wipe(): void }[]>;
  };
  const { Secret } = (await import(`${DIST}/src/crypto/secret.js`)) as {
    Secret: new (b: Buffer) => unknown;
  };
  const ctx = new HostContext(rig.vaultDir);
  const refs = [{ entry: 'db', field: 'password' }];
  const fill = async (i: number) => {
    const token = new Secret(Buffer.from(tokens[i % AGENTS] as string, 'utf8'));
    const s = access.authenticate(ctx, token, 'pid:1');
    try {
      const out = await access.release(ctx, s, refs, { kind: 'fill', host: null }, 'pid:1');
      for (const v of out) v.wipe();
    } finally {
      access.endSession(s);
    }
  };
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < n) await fill(next++);
      }),
    );
  };
  // Warm: the JIT, the caller cache, the kept records.
  await run(1000);
  if (CPU_ONLY) {
    const c0 = process.cpuUsage();
    await run(FILLS);
    const c = process.cpuUsage(c0);
    console.log(`${DIST}: CPU ${((c.user + c.system) / FILLS / 1000).toFixed(3)} ms a fill`);
    await ctx.close();
    process.exit(0);
  }
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const c0 = process.cpuUsage();
  await run(FILLS);
  const cpu = process.cpuUsage(c0);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as {
    profile: { head: Node };
  };
  session.disconnect();
  const self = new Map<string, number>();
  let total = 0;
  const name = (n: Node) => {
    const f = n.callFrame;
    const url = f.url.replace(/.*\/(dist|node_modules)\//, '$1/');
    return `${f.functionName || '(anon)'} ${url}:${f.lineNumber + 1}`;
  };
  // A built-in or Node's own (sort, Map, Buffer...) is named with the script that called it.
  const builtin = (n: Node) => n.callFrame.url === '' || n.callFrame.url.startsWith('node:');
  const walk = (n: Node, caller: string) => {
    const own = name(n);
    const k = builtin(n) ? `${own} < ${caller}` : own;
    self.set(k, (self.get(k) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c, builtin(n) ? caller : own);
  };
  walk(profile.head, '');
  console.log(
    `${DIST}: ${FILLS} fills, ${(total / FILLS / 1024).toFixed(1)} KiB allocated a fill; CPU ${((cpu.user + cpu.system) / FILLS / 1000).toFixed(3)} ms a fill (profiler on)`,
  );
  for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`${(b / FILLS).toFixed(0).padStart(7)} B  ${k}`);
  await ctx.close();
} finally {
  await rig.dispose();
}
