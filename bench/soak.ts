/**
 * Soaks one vault host (not CI; asserts nothing, prints figures).
 *
 *   node --import tsx bench/soak.ts readers [minutes=1] [agents=50]
 *   node --import tsx bench/soak.ts mixed [minutes=2] [agents=10]
 *
 * `readers`: `agents` agents read one entry each as fast as the host answers,
 * every 5 s a line: reads/s, the host's RSS (anonymous and file-backed: the
 * store is mapped), its peak, its mappings, the store's size, and bytes of
 * store per read. `mixed`: agent reads and fills (resolve, as `render` and the
 * proxy ask), owner writes (a new entry each), backups, and the host killed
 * (SIGKILL) every 20 s and started again by the next call; at the end the
 * counts that must hold: values released vs reads and fills audited, owner
 * writes acknowledged vs present, and the restarts. The calls go through the
 * client library from this one process (the host sees one peer), not one CLI
 * process per call: the host is what is measured.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../src/client/client.js';
import { VaultError } from '../src/core/errors.js';
import { memoryOf, type Memory } from '../test/support/procs.js';
import { CLI, PASSPHRASE, Rig, ok } from '../test/support/rig.js';

const [mode = 'readers', minutesArg, agentsArg] = process.argv.slice(2);
const minutes = Number(minutesArg ?? (mode === 'mixed' ? 2 : 1));
const agents = Number(agentsArg ?? (mode === 'mixed' ? 10 : 50));
const MiB = 1024 * 1024;

const rig = new Rig();
/** SOAK_HOST_NODE_OPTIONS: V8 flags for the host (`--max-semi-space-size=4`), to tell heap sizing from a leak. */
const hostFlags = process.env.SOAK_HOST_NODE_OPTIONS;
const client = {
  vaultDir: rig.vaultDir,
  daemon: {
    node: process.execPath,
    script: CLI,
    env: hostFlags === undefined ? rig.env : { ...rig.env, NODE_OPTIONS: hostFlags },
  },
};

/** The host's pid, or null while none runs. */
async function hostPid(): Promise<number | null> {
  try {
    return (await call({ ...client, autoStart: false }, 'status', {})).pid;
  } catch {
    return null;
  }
}

function proc(pid: number): Memory & { maps: number } {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').length - 1;
  return { ...memoryOf(pid), maps };
}

const storeSize = () => statSync(join(rig.vaultDir, 'vault.mdb')).size;
const mib = (n: number) => `${(n / MiB).toFixed(1)}`;

async function setUp(n: number): Promise<string[]> {
  await rig.create();
  await rig.set('E', 'soak-value');
  await rig.set('F', 'fill-value');
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    tokens.push(
      await rig.addAgent(
        `a${i}`,
        ['E', 'F'],
        ['--per-minute', '100000000', '--per-hour', '100000000'],
      ),
    );
    await rig.liftValuesLimit(`a${i}`);
  }
  return tokens;
}

async function readers(): Promise<void> {
  const tokens = await setUp(agents);
  // The host the readers' first call starts: with SOAK_HOST_NODE_OPTIONS, if set.
  await rig.stop();
  await call(client, 'read', {
    token: tokens[0] ?? '',
    entry: 'E',
    field: 'password',
    mode: 'get',
  });
  const pid = await hostPid();
  if (pid === null) throw new Error('no host');
  if (hostFlags !== undefined) console.log(`host NODE_OPTIONS=${hostFlags}`);
  const end = Date.now() + minutes * 60_000;
  let reads = 0;
  let refused = 0;
  const size0 = storeSize();
  const p0 = proc(pid);
  console.log(`${agents} agents reading for ${minutes} min; host ${pid}`);
  console.log('t(s)  reads/s  rss  anon  file  peak (MiB)  maps  store(MiB)  store B/read');
  console.log(
    `0     -        ${mib(p0.rss)}  ${mib(p0.anon)}  ${mib(p0.file)}  ${mib(p0.hwm)}  ${p0.maps}  ${mib(size0)}`,
  );
  const t0 = Date.now();
  let last = { t: t0, reads: 0 };
  const tick = setInterval(() => {
    const p = proc(pid);
    const now = Date.now();
    const rate = ((reads - last.reads) * 1000) / (now - last.t);
    last = { t: now, reads };
    const grown = storeSize() - size0;
    console.log(
      `${((now - t0) / 1000).toFixed(0).padEnd(5)} ${rate.toFixed(0).padEnd(8)} ${mib(p.rss)}  ${mib(p.anon)}  ${mib(p.file)}  ${mib(p.hwm)}  ${p.maps}  ${mib(storeSize())}  ${reads > 0 ? (grown / reads).toFixed(0) : '-'}`,
    );
  }, 5000);
  await Promise.all(
    tokens.map(async (token) => {
      while (Date.now() < end) {
        try {
          await call(client, 'read', { token, entry: 'E', field: 'password', mode: 'get' });
          reads++;
        } catch {
          refused++;
        }
      }
    }),
  );
  clearInterval(tick);
  if (hostFlags !== undefined) {
    // The owner's client refuses a host run with NODE_OPTIONS: this one goes first.
    process.kill(pid, 'SIGTERM');
    while ((await hostPid()) !== null) await new Promise((r) => setTimeout(r, 100));
  }
  const audit = ok(await rig.owner(['audit', '--json']))
    .split('\n')
    .filter(Boolean).length;
  console.log(
    `reads ${reads}, refused ${refused}; audit records ${audit}; store ${mib(size0)} -> ${mib(storeSize())} MiB (${((storeSize() - size0) / Math.max(1, reads)).toFixed(0)} B per read)`,
  );
}

async function mixed(): Promise<void> {
  const tokens = await setUp(agents);
  const end = Date.now() + minutes * 60_000;
  const released = { read: 0, fill: 0 };
  const acknowledged: string[] = [];
  const failures = new Map<string, number>();
  const fail = (what: string, err: unknown) => {
    const k = `${what} ${err instanceof VaultError ? `${err.code} ${err.message.slice(0, 60)}` : String(err)}`;
    failures.set(k, (failures.get(k) ?? 0) + 1);
  };
  const pids = new Set<number>();
  let kills = 0;
  let backups = 0;
  const loops: Promise<void>[] = tokens.map(async (token, i) => {
    while (Date.now() < end) {
      try {
        if (i % 2 === 0) {
          await call(client, 'read', { token, entry: 'E', field: 'password', mode: 'get' });
          released.read++;
        } else {
          await call(client, 'resolve', { token, refs: [{ entry: 'F', field: 'password' }] });
          released.fill++;
        }
      } catch (err) {
        fail(i % 2 === 0 ? 'read' : 'fill', err);
      }
    }
  });
  loops.push(
    (async () => {
      for (let n = 0; Date.now() < end; n++) {
        const name = `W${n}`;
        try {
          await call(client, 'entry.set', {
            passphrase: PASSPHRASE,
            entry: name,
            field: 'password',
            value: Buffer.from(`w-${n}`).toString('base64'),
          });
          acknowledged.push(name);
        } catch (err) {
          fail('owner write', err);
        }
        if (n % 10 === 9) {
          try {
            await call(client, 'vault.backup', {
              passphrase: PASSPHRASE,
              path: join(rig.root, `backup-${n}.mdb`),
            });
            backups++;
          } catch (err) {
            fail('backup', err);
          }
        }
      }
    })(),
  );
  loops.push(
    (async () => {
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20_000));
        const pid = await hostPid();
        if (pid === null || Date.now() >= end) continue;
        pids.add(pid);
        const p = proc(pid);
        console.log(
          `host ${pid}: rss ${mib(p.rss)} MiB (anon ${mib(p.anon)}, file ${mib(p.file)}), store ${mib(storeSize())} MiB; killing it`,
        );
        process.kill(pid, 'SIGKILL');
        kills++;
      }
    })(),
  );
  await Promise.all(loops);
  const last = await hostPid();
  if (last !== null) pids.add(last);
  const audit = ok(await rig.owner(['audit', '--json']))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { action: string; outcome: string; actor: string });
  const audited = (action: string) =>
    audit.filter((r) => r.action === action && r.outcome === 'ok').length;
  const listed = new Set(
    ok(await rig.owner(['entry', 'ls', '--json']))
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => {
        const v = JSON.parse(l) as { name?: string } | { name: string }[];
        return Array.isArray(v) ? v.map((e) => e.name) : [v.name ?? ''];
      }),
  );
  const present = acknowledged.filter((n) => listed.has(n)).length;
  const verify = await rig.owner(['audit', '--verify']);
  const check = await rig.owner(['vault', 'check']);
  console.log(`${minutes} min, ${agents} agents, ${kills} kills`);
  console.log(`reads: released ${released.read}, audited ${audited('ai_read')}`);
  console.log(`fills: released ${released.fill}, audited ${audited('fill')}`);
  console.log(`owner writes: acknowledged ${acknowledged.length}, present ${present}`);
  console.log(`backups: ${backups}; hosts seen ${pids.size}; restarts ${kills}`);
  console.log(`refusals/failures: ${JSON.stringify([...failures])}`);
  console.log(`audit --verify: exit ${verify.code}; vault check: exit ${check.code}`);
  console.log(
    `store ${mib(storeSize())} MiB; files in the vault dir: ${readdirSync(rig.vaultDir).join(' ')}`,
  );
}

try {
  if (mode === 'mixed') await mixed();
  else await readers();
} finally {
  await rig.dispose();
}
