// A vault moved between the engines (`vault migrate --to`): LMDB -> PostgreSQL
// -> LMDB keeps every value, every agent (its token still opens its grants)
// and every audit record, the chain verifying at each step; and backup,
// check, restore and audit archive work on the PostgreSQL store with the
// same backup file format.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords, disposeAll, hex } from '../support/e2e-helpers.js';
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

test('migrate LMDB -> PostgreSQL -> LMDB keeps every value, agent and audit record', async () => {
  const db = pg.database();
  const a = new Rig();
  rigs.push(a);
  await a.create();
  const values = new Map([
    ['Stripe Prod', `s-${hex()}`],
    ['GitHub', `g-${hex()}`],
    ['AWS', `a-${hex()}`],
  ]);
  for (const [name, v] of values) await a.set(name, v);
  const tokens = new Map([
    ['ci', await a.addAgent('ci', ['Stripe Prod', 'GitHub'])],
    ['ops', await a.addAgent('ops', ['AWS'])],
  ]);
  const check = async (where: string) => {
    assert.equal(
      ok(await a.agent(['get', 'Stripe Prod'], tokens.get('ci'))),
      `${values.get('Stripe Prod')}\n`,
      where,
    );
    assert.equal(
      ok(await a.agent(['get', 'GitHub'], tokens.get('ci'))),
      `${values.get('GitHub')}\n`,
      where,
    );
    assert.equal(
      ok(await a.agent(['get', 'AWS'], tokens.get('ops'))),
      `${values.get('AWS')}\n`,
      where,
    );
    assertRefused(
      await a.agent(['get', 'AWS'], tokens.get('ci')),
      'VLT-2041',
      `${where}: scope kept`,
    );
    ok(await a.owner(['audit', '--verify']));
    ok(await a.owner(['vault', 'check']));
  };
  await check('lmdb');
  const before = await auditRecords(a);

  const moved = JSON.parse(ok(await a.owner(['vault', 'migrate', '--to', db.url, '--json']))) as {
    records: number;
  };
  assert.ok(moved.records > 10, String(moved.records));
  assert.ok(existsSync(join(a.vaultDir, 'store.json')));
  assert.equal(existsSync(join(a.vaultDir, 'vault.mdb')), false, 'the LMDB file was moved aside');
  assert.ok(readdirSync(a.vaultDir).some((f) => f.startsWith('vault.mdb.migrated-')));
  await check('postgresql');
  const inPg = await auditRecords(a);
  assert.deepEqual(inPg.slice(0, before.length), before, 'every record kept, in order');
  assert.ok(inPg.some((r) => r.action === 'vault_migrate'));

  // Migrating onto a database that holds a vault already is refused; nothing moves.
  const b = new Rig();
  rigs.push(b);
  await b.create();
  assertRefused(await b.owner(['vault', 'migrate', '--to', db.url]), 'VLT-3043', 'target taken');
  assert.ok(existsSync(join(b.vaultDir, 'vault.mdb')));

  ok(await a.owner(['vault', 'migrate', '--to', 'lmdb']));
  assert.ok(existsSync(join(a.vaultDir, 'vault.mdb')));
  assert.equal(existsSync(join(a.vaultDir, 'store.json')), false);
  await check('back in lmdb');
  const back = await auditRecords(a);
  assert.deepEqual(back.slice(0, inPg.length), inPg, 'every record kept, in order');
  assert.equal(back.filter((r) => r.action === 'vault_migrate').length, 2);
});

test('backup, check, restore and audit archive on a PostgreSQL store', async () => {
  const db = pg.database();
  const a = new Rig();
  rigs.push(a);
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const first = `one-${hex()}`;
  await a.set('db', first);
  const token = await a.addAgent('app', ['db']);
  ok(await a.agent(['get', 'db'], token));
  const file = join(a.root, 'team-backup.mdb');
  const summary = JSON.parse(ok(await a.owner(['vault', 'backup', file, '--json']))) as {
    entries: number;
  };
  assert.equal(summary.entries, 1);
  assert.ok(existsSync(file), 'the backup is an LMDB store file, as from one host');
  ok(await a.owner(['vault', 'check']));

  const second = `two-${hex()}`;
  await a.set('db', second);
  assert.equal(ok(await a.agent(['get', 'db'], token)), `${second}\n`);
  ok(await a.owner(['vault', 'restore', '--yes', file]));
  assert.equal(ok(await a.agent(['get', 'db'], token)), `${first}\n`, 'the value of the backup');
  ok(await a.owner(['vault', 'check']));
  ok(await a.owner(['audit', '--verify']));

  const archive = join(a.root, 'audit.arc');
  ok(await a.owner(['audit', 'archive', '--before', '2099-01-01', archive]));
  assert.ok(existsSync(archive));
  ok(await a.owner(['audit', '--verify']));
  ok(await a.owner(['audit', '--verify', '--archive', archive]));
  // The database still holds no value.
  const dump = pg.dump(db.name);
  for (const v of [first, second]) assert.equal(dump.includes(v), false);
});
