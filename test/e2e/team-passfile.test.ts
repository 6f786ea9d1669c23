// A team vault whose database asks for a password: the host reads it from
// PGPASSFILE itself (src/store/pg/passfile.ts), as libpq would, with no
// deprecation warning from the `pg` client in the host's log (its own
// PGPASSFILE support printed one at every start and goes away in pg 9); a
// file others can read is not used, and the host refuses (VLT-3040).
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, disposeAll, hex } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rig = new Rig();
const password = `pw-${hex()}`;

before(async () => {
  pg = await Postgres.start();
  // A role that must give its password on the socket (scram), where others are trusted.
  pg.psql('postgres', `CREATE ROLE vaultpw LOGIN PASSWORD '${password}'`);
  pg.psql('postgres', 'CREATE DATABASE teampw OWNER vaultpw');
  const hba = join(pg.dir, 'data', 'pg_hba.conf');
  const rest = readFileSync(hba, 'utf8');
  writeFileSync(hba, `local all vaultpw scram-sha-256\n${rest}`);
  pg.psql('postgres', 'SELECT pg_reload_conf()');
});

after(async () => {
  await disposeAll(rig);
  await pg?.stop();
});

test('the host reads the password from PGPASSFILE, without pg’s deprecation warning; a file others can read is refused', async () => {
  const url = `postgresql://vaultpw@/teampw?host=${encodeURIComponent(pg.socketDir)}`;
  const passfile = join(rig.root, 'pgpass');
  // A line for another database first, then a wildcard host and port for ours.
  writeFileSync(
    passfile,
    `# team vault\nlocalhost:5432:other:vaultpw:wrong\n*:*:teampw:vaultpw:${password}\n`,
    { mode: 0o600 },
  );
  rig.env.PGPASSFILE = passfile;
  ok(await rig.owner(['vault', 'create', '--store', url]));
  const value = `team-${hex()}`;
  await rig.set('db', value);
  const token = await rig.addAgent('coder', ['db'], ['--per-minute', '100']);
  assert.equal(ok(await rig.agent(['get', 'db'], token)), `${value}\n`);

  const log = join(rig.vaultDir, 'host.log');
  assert.ok(existsSync(log));
  assert.doesNotMatch(readFileSync(log, 'utf8'), /pgpass support is deprecated/);
  assert.doesNotMatch(readFileSync(log, 'utf8'), new RegExp(password));

  // Readable by its group: libpq ignores such a file, and so does the host.
  await rig.stop();
  chmodSync(passfile, 0o640);
  assertRefused(await rig.agent(['get', 'db'], token), 'VLT-3040', 'group-readable passfile');
  chmodSync(passfile, 0o600);
  appendFileSync(passfile, '\n');
  await rig.stop();
  assert.equal(ok(await rig.agent(['get', 'db'], token)), `${value}\n`);
});
