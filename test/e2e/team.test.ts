// Team mode (docs/team.md): one vault in a real PostgreSQL, served by one host,
// then by two hosts (two VAULT_DIRs, as two machines would have) at once. The
// limits, the lockdown, revocation and the audit chain hold across both, and
// the database holds no value, name or token.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { assertRefused, auditRecords, disposeAll, hex } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rigs: Rig[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const rig of rigs) await disposeAll(rig);
  await pg?.stop();
});

function rig(): Rig {
  const r = new Rig();
  rigs.push(r);
  return r;
}

/** A second machine's host on the same database: its own VAULT_DIR, the store by VAULT_STORE_URL. */
function joining(url: string): Rig {
  const r = rig();
  r.env.VAULT_STORE_URL = url;
  return r;
}

function client(r: Rig): Parameters<typeof call>[0] {
  return {
    vaultDir: r.vaultDir,
    daemon: { node: process.execPath, script: r.cli, env: r.env },
  } as Parameters<typeof call>[0];
}

test('vault create --store: the vault lives in the database; get, render and audit work through one host', async () => {
  const db = pg.database();
  const a = rig();
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  assert.equal(existsSync(join(a.vaultDir, 'vault.mdb')), false, 'no LMDB file made');
  const config = JSON.parse(readFileSync(join(a.vaultDir, 'store.json'), 'utf8')) as {
    url: string;
  };
  assert.equal(config.url, db.url);
  const value = `v-${hex()}`;
  await a.set('Stripe Prod', value);
  const token = await a.addAgent('ci', ['Stripe Prod']);
  assert.equal(ok(await a.agent(['get', 'Stripe Prod'], token)), `${value}\n`);
  const rendered = ok(
    await a.agent(['render', '-'], token, { input: 'key={{ vault://Stripe Prod/password }}\n' }),
  );
  assert.equal(rendered, `key=${value}\n`);
  const actions = (await auditRecords(a)).map((r) => `${r.action}:${r.outcome}`);
  assert.ok(actions.includes('ai_read:ok') && actions.includes('fill:ok'), actions.join(' '));
  ok(await a.owner(['audit', '--verify']));
  // The rows in the database are what the host wrote: a vault header is there.
  const rows = Number(pg.psql(db.name, "SELECT count(*) FROM vault_rows WHERE key = 'header'"));
  assert.equal(rows, 1);
});

test('a password in a --store URL is refused before anything is made', async () => {
  const db = pg.database();
  const a = rig();
  const r = await a.owner(['vault', 'create', '--store', db.url.replace('vault@', 'vault:pw@')]);
  assertRefused(r, 'VLT-3042');
  assert.equal(existsSync(join(a.vaultDir, 'store.json')), false);
});

test(
  'two hosts on one database: limits, lockdown, revocation and one audit chain hold across both',
  { skip: LIBFAKETIME === null ? 'libfaketime not installed' : false },
  async () => {
    const db = pg.database();
    const a = rig();
    ok(await a.owner(['vault', 'create', '--store', db.url]));
    const b = joining(db.url);
    // Both hosts' clocks moved together, as two machines' synchronised clocks.
    const clocks = [new FakeClock(a), new FakeClock(b)];
    for (const c of clocks) await c.start();
    const at = (seconds: number) => clocks.forEach((c) => c.set(seconds));
    const sentinel = `sentinel-${hex(16)}`;
    const entries = Array.from({ length: 20 }, (_, i) => `entry ${i}`);
    for (const e of entries) await a.set(e, `${sentinel}-${e}`);
    const token = await a.addAgent('fleet', entries);
    at(0);

    // 20 readers of one agent, spread over both hosts at once: 3 distinct a minute in all.
    const settled = await Promise.allSettled(
      entries.map((entry, i) =>
        call(client(i % 2 === 0 ? a : b), 'read', { token, entry, field: 'password', mode: 'get' }),
      ),
    );
    const released = entries.filter((_, i) => settled[i]?.status === 'fulfilled');
    assert.equal(released.length, 3, `released ${released.join(', ')}`);
    for (const s of settled) {
      if (s.status === 'rejected') {
        const code = (s.reason as { code?: unknown }).code;
        assert.equal(code, 'VLT-2042', String(code));
      }
    }
    // A minute on, the window has room again; the second violation, through
    // host b alone, locks the agent on both. The three reads are one render:
    // whichever entry the first violation refused, it asks for something new
    // (a lone retry of that entry would clear the violation, issue 38).
    at(61);
    const fresh = entries.filter((e) => !released.includes(e));
    const three = fresh.slice(0, 3);
    const input = three.map((e, i) => `v${i}=vault://${e}/password`).join('\n') + '\n';
    const rendered = ok(await b.agent(['render', '-'], token, { input }));
    three.forEach((e, i) => assert.ok(rendered.includes(`v${i}=${sentinel}-${e}`), rendered));
    assertRefused(
      await b.agent(['get', fresh[3] as string], token),
      'VLT-2043',
      'second violation',
    );
    for (const host of [a, b]) {
      assertRefused(await host.agent(['get', released[0] as string], token), 'VLT-2043', 'locked');
    }

    // Revoke through one host: refused on the other at once.
    const other = await a.addAgent('other', [entries[1] as string]);
    assert.equal(
      ok(await b.agent(['get', entries[1] as string], other)),
      `${sentinel}-${entries[1]}\n`,
    );
    ok(await a.owner(['agent', 'revoke', 'other']));
    assertRefused(await b.agent(['get', entries[1] as string], other), 'VLT-2040', 'revoked');

    // One chain, holding both hosts' records, verified from either host.
    ok(await b.owner(['audit', '--verify']));
    ok(await a.owner(['audit', '--verify']));
    const records = await auditRecords(b);
    const reads = records.filter(
      (r) => (r.action === 'ai_read' || r.action === 'fill') && r.outcome === 'ok',
    );
    // 3 in the burst (over both hosts), 3 through b (one render: `fill`), 1 by the other agent through b.
    assert.equal(reads.length, 7, JSON.stringify(reads.map((r) => r.entry)));
    assert.deepEqual(
      records.map((r) => r.seq),
      records.map((_, i) => (records[0]?.seq ?? 0) + i),
      'one sequence',
    );

    // What the database holds: no value, no entry name, no token.
    const dump = pg.dump(db.name);
    assert.ok(dump.includes('vault_rows'), 'the dump holds the rows');
    for (const secret of [sentinel, 'entry 1', token, other]) {
      assert.equal(dump.includes(secret), false, `the dump holds ${secret.slice(0, 12)}`);
      assert.equal(
        dump.includes(Buffer.from(secret).toString('hex')),
        false,
        `the dump holds ${secret.slice(0, 12)} in hex`,
      );
    }
    for (const c of clocks) await c.stop();
  },
);
