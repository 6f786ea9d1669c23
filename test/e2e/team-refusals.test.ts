// What a team host says when its database refuses writes for a reason the
// owner must fix there: a read-only database (a standby, or
// default_transaction_read_only) is named as such, VLT-3004 as LMDB's
// read-only disk, not "unreachable" (VLT-3040); nothing is released, and the
// host serves again once the database takes writes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused, disposeAll, hex } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rig = new Rig();

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  await disposeAll(rig);
  await pg?.stop();
});

test('a read-only database: VLT-3004 naming it, nothing released; served again once it takes writes', async () => {
  const db = pg.database();
  ok(await rig.owner(['vault', 'create', '--store', db.url]));
  const value = `ro-${hex()}`;
  await rig.set('db', value);
  const token = await rig.addAgent('coder', ['db'], ['--per-minute', '100']);

  pg.psql('postgres', `ALTER DATABASE ${db.name} SET default_transaction_read_only = on`);
  await rig.stop(); // the setting applies to new connections
  const refused = await rig.agent(['get', 'db'], token);
  const line = assertRefused(refused, 'VLT-3004', 'read-only database');
  assert.match(line, /read-only/);
  assert.equal(refused.stdout, '');

  pg.psql('postgres', `ALTER DATABASE ${db.name} SET default_transaction_read_only = off`);
  await rig.stop();
  assert.equal(ok(await rig.agent(['get', 'db'], token)), `${value}\n`);
});
