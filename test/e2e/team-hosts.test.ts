// Three team hosts on one database, committing optimistically (src/store/pg/pg.ts
// commitQueued): fills of one agent spread over all three at once, while
// other agents' fills through the same hosts make the hosts' commits race
// (a host's try then loses to another's and runs again on its rows). The
// limit stays global (3 distinct a minute in all), every value a client
// received has exactly one audit record, and the one chain verifies from
// every host.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { auditRecords, disposeAll } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { liftValuesArgs, ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rigs: Rig[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const r of rigs) await disposeAll(r);
  await pg?.stop();
});

function rig(url?: string): Rig {
  const r = new Rig();
  if (url !== undefined) r.env.VAULT_STORE_URL = url;
  rigs.push(r);
  return r;
}

function client(r: Rig): Parameters<typeof call>[0] {
  return {
    vaultDir: r.vaultDir,
    daemon: { node: process.execPath, script: r.cli, env: r.env },
  } as Parameters<typeof call>[0];
}

/** The audit actions of a value released. */
const RELEASES = new Set(['fill', 'read', 'ai_read']);

const fill = (r: Rig, token: string, entry: string) =>
  call(client(r), 'resolve', { token, refs: [{ entry, field: 'password' }] });

test('fills of one agent over three hosts at once, beside other agents’ load: 3 distinct in all, one record per value, one chain', async () => {
  const db = pg.database();
  const a = rig();
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const hosts = [a, rig(db.url), rig(db.url)];
  const entries = Array.from({ length: 24 }, (_, i) => `entry ${i}`);
  for (const e of entries) await a.set(e, `value of ${e}`);
  const token = await a.addAgent('spread', entries);
  const busy: string[] = [];
  for (let i = 0; i < 3; i++) {
    busy.push(await a.addAgent(`busy${i}`, [entries[0] as string]));
    ok(await a.owner(liftValuesArgs(`busy${i}`)));
  }
  // Every host has served once: copies loaded, state key learnt.
  for (const h of hosts) await fill(h, busy[0] as string, entries[0] as string);

  let stop = false;
  const served = new Map<string, number>();
  const noise = busy.flatMap((t, i) =>
    hosts.map(async (h) => {
      while (!stop) {
        await fill(h, t, entries[0] as string);
        served.set(`busy${i}`, (served.get(`busy${i}`) ?? 0) + 1);
      }
    }),
  );
  const settled = await Promise.allSettled(
    entries.map((e, i) => fill(hosts[i % hosts.length] as Rig, token, e)),
  );
  stop = true;
  await Promise.all(noise);

  const released = entries.filter((_, i) => settled[i]?.status === 'fulfilled');
  assert.equal(released.length, 3, `released ${released.join(', ')}`);
  for (const s of settled) {
    if (s.status === 'rejected') {
      const code = (s.reason as { code?: unknown }).code;
      assert.ok(code === 'VLT-2042' || code === 'VLT-2043', String(code));
    }
  }

  for (const h of hosts) ok(await h.owner(['audit', '--verify']));
  const records = await auditRecords(a);
  assert.deepEqual(
    records.map((r) => r.seq),
    records.map((_, i) => (records[0]?.seq ?? 0) + i),
    'one sequence',
  );
  const fills = (agent: string) =>
    records.filter(
      (r) => RELEASES.has(r.action) && r.outcome === 'ok' && r.actor === `cli:${agent}`,
    );
  assert.deepEqual(
    fills('spread')
      .map((r) => r.entry)
      .sort(),
    [...released].sort(),
  );
  for (let i = 0; i < busy.length; i++) {
    // The warm-up's one (busy0) and every fill a client received: each audited once.
    const expected = (served.get(`busy${i}`) ?? 0) + (i === 0 ? hosts.length : 0);
    assert.equal(fills(`busy${i}`).length, expected, `busy${i}`);
  }
  const version = Number(pg.psql(db.name, 'SELECT version FROM vault_meta').trim());
  assert.ok(version > 0);
});
