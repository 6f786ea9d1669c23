/**
 * Team mode against one host: a get (`read`) and a fill (`resolve`) sent
 * straight to the host's socket, on the LMDB store and on PostgreSQL (a
 * cluster started here, as the tests start one), through one host and
 * through two hosts on one database, side by side. Each request is one
 * transaction that charges the limits and commits its audit record before
 * the value leaves. Prints the median latency of requests one at a time and
 * the throughput of 8 at once; asserts nothing.
 *
 *   node --import tsx bench/team.ts [requests]      (after npm run build)
 */
import { call } from '../src/client/client.js';
import type { ClientOptions } from '../src/client/options.js';
import { Postgres } from '../test/support/postgres.js';
import { CLI, ok, Rig } from '../test/support/rig.js';

const N = Number(process.argv[2] ?? 300);
const PARALLEL = 8;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

function client(r: Rig): ClientOptions {
  return { vaultDir: r.vaultDir, daemon: { node: process.execPath, script: CLI, env: r.env } };
}

type Kind = 'get' | 'fill';

async function once(r: Rig, token: string, kind: Kind): Promise<void> {
  if (kind === 'get')
    await call(client(r), 'read', { token, entry: 'db', field: 'password', mode: 'get' });
  else await call(client(r), 'resolve', { token, refs: [{ entry: 'db', field: 'password' }] });
}

/** Median ms of requests one at a time, spread over `hosts` in turn. */
async function latency(hosts: Rig[], token: string, kind: Kind): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await once(hosts[i % hosts.length] as Rig, token, kind);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

/** Requests a second with PARALLEL in flight, spread over `hosts`. */
async function throughput(hosts: Rig[], token: string, kind: Kind): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: PARALLEL }, async (_, w) => {
      while (next < N) {
        next++;
        await once(hosts[w % hosts.length] as Rig, token, kind);
      }
    }),
  );
  return N / (Number(process.hrtime.bigint() - t0) / 1e9);
}

interface Row {
  readonly name: string;
  readonly hosts: Rig[];
  readonly token: string;
}

async function vault(store: string | null): Promise<{ owner: Rig; token: string }> {
  const owner = new Rig();
  ok(await owner.owner(['vault', 'create', ...(store === null ? [] : ['--store', store])]));
  await owner.set('db', 'bench-value');
  const token = await owner.addAgent('bench', ['db']);
  await owner.liftValuesLimit('bench');
  return { owner, token };
}

const pg = await Postgres.start();
const rigs: Rig[] = [];
try {
  const lmdb = await vault(null);
  const db = pg.database();
  const team = await vault(db.url);
  const second = new Rig();
  second.env.VAULT_STORE_URL = db.url;
  rigs.push(lmdb.owner, team.owner, second);
  const rows: Row[] = [
    { name: 'LMDB, 1 host', hosts: [lmdb.owner], token: lmdb.token },
    { name: 'PostgreSQL, 1 host', hosts: [team.owner], token: team.token },
    { name: 'PostgreSQL, 2 hosts', hosts: [team.owner, second], token: team.token },
  ];
  // Warm: hosts started, mirrors loaded, connections open.
  for (const r of rows) for (const h of r.hosts) await once(h, r.token, 'get');
  console.log(
    `team bench: ${N} requests each; latency one at a time, throughput ${PARALLEL} at once`,
  );
  console.log(
    `${'store'.padEnd(22)}${'get ms'.padStart(9)}${'fill ms'.padStart(9)}${'get/s'.padStart(9)}${'fill/s'.padStart(9)}`,
  );
  for (const r of rows) {
    const g = await latency(r.hosts, r.token, 'get');
    const f = await latency(r.hosts, r.token, 'fill');
    const gt = await throughput(r.hosts, r.token, 'get');
    const ft = await throughput(r.hosts, r.token, 'fill');
    console.log(
      `${r.name.padEnd(22)}${g.toFixed(2).padStart(9)}${f.toFixed(2).padStart(9)}${gt.toFixed(0).padStart(9)}${ft.toFixed(0).padStart(9)}`,
    );
  }
} finally {
  for (const r of rigs) await r.dispose();
  await pg.stop();
}
