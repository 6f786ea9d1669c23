// Issue 36: whoever holds the database password (a DBA, a backup, any team
// host's PGPASSFILE) runs SQL against a real PostgreSQL. Copying genuine
// earlier rows back (every per-row MAC and checksum holds) must not lift a
// lock or undo a revocation, and a record appended to the audit table must
// not verify: the sealed state (src/store/seal.ts) finds each, the hosts
// refuse to serve on it (VLT-3045), `vault check` and `audit --verify` say so.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeRecord, encodeRecord } from '../../src/store/pg/mirror.js';
import { recordSum, type AuditRecord } from '../../src/store/schema.js';
import { recordHash } from '../../src/host/audit/log.js';
import { assertRefused, disposeAll, hex } from '../support/e2e-helpers.js';
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

/** Two hosts on a new database (two machines), an entry, and an agent served by both. */
async function team(): Promise<{ a: Rig; b: Rig; db: string; token: string; value: string }> {
  const db = pg.database();
  const a = new Rig();
  const b = new Rig();
  rigs.push(a, b);
  b.env.VAULT_STORE_URL = db.url;
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const value = `v-${hex()}`;
  await a.set('db', value);
  const token = await a.addAgent('ci', ['db']);
  for (const host of [a, b]) assert.equal(ok(await host.agent(['get', 'db'], token)), `${value}\n`);
  return { a, b, db: db.name, token, value };
}

/** The attacker's SQL: the saved rows back as they were, with a version that makes every host fetch them. */
const PUT_BACK = `
  UPDATE vault_rows r SET value = s.value, version = (SELECT version FROM vault_meta) + 1
    FROM saved s WHERE r.key = s.key;
  UPDATE vault_meta SET version = version + 1;`;

/** What the owner sees: `vault check` and `audit --verify` both name the rollback. */
async function reported(r: Rig): Promise<void> {
  const check = await r.owner(['vault', 'check']);
  assert.notEqual(check.code, 0, check.stdout);
  assert.match(check.stderr, /VLT-3045: state: rollback detected/);
  assertRefused(await r.owner(['audit', '--verify']), 'VLT-3045', 'audit --verify');
}

test('an agent’s earlier rate record copied back after a lockdown: refused on every host, not unlocked, reported', async () => {
  const { a, b, db, token } = await team();
  const id = pg.psql(db, "SELECT substr(key, 6) FROM vault_rows WHERE key LIKE 'rate/%'").trim();
  assert.match(id, /^[0-9a-f]+$/);
  pg.psql(
    db,
    `CREATE TABLE saved AS SELECT key, value FROM vault_rows WHERE key IN ('rate/${id}', 'sum/rate/${id}')`,
  );
  ok(await a.owner(['agent', 'lock', 'ci']));
  for (const host of [a, b]) assertRefused(await host.agent(['get', 'db'], token), 'VLT-2043');
  pg.psql(db, PUT_BACK);
  // Host b served this agent before; host c starts on the database as it is now.
  const c = new Rig();
  rigs.push(c);
  c.env.VAULT_STORE_URL = pg.url(db);
  for (const host of [a, b, c]) {
    assertRefused(await host.agent(['get', 'db'], token), 'VLT-3045', 'rolled-back rate record');
  }
  await reported(a);
  // The owner's commands in between did not bless the copy: still refused, still reported.
  assertRefused(await b.agent(['get', 'db'], token), 'VLT-3045', 'after the owner looked');
  await reported(b);
});

test('agent, entry and field rows from before `agent revoke` copied back: the revoked token stays refused, reported', async () => {
  const { a, b, db, token } = await team();
  pg.psql(
    db,
    `CREATE TABLE saved AS SELECT key, value FROM vault_rows
       WHERE key ~ '^(sum/)?(agent|agent-name|rate|entry|field|name)/'`,
  );
  ok(await a.owner(['agent', 'revoke', 'ci']));
  for (const host of [a, b]) assertRefused(await host.agent(['get', 'db'], token), 'VLT-2040');
  pg.psql(db, PUT_BACK);
  for (const host of [a, b]) {
    assertRefused(await host.agent(['get', 'db'], token), 'VLT-3045', 'un-revoked by SQL');
  }
  await reported(a);
});

test('a record appended to the audit table by SQL fails audit --verify', async () => {
  const { a, db } = await team();
  ok(await a.owner(['audit', '--verify']));
  const last = pg
    .psql(
      db,
      "SELECT encode(value, 'hex') FROM vault_rows WHERE key LIKE 'audit/%' ORDER BY key DESC LIMIT 1",
    )
    .trim();
  const prev = decodeRecord(Buffer.from(last, 'hex')) as AuditRecord;
  // A well-formed next link of the chain, as anyone can compute it (the chain's hash is unkeyed).
  const rest = Object.fromEntries(
    Object.entries(prev).filter(([k]) => k !== 'mac' && k !== 'hash'),
  ) as Omit<AuditRecord, 'hash'>;
  const body = { ...rest, seq: prev.seq + 1, prev: prev.hash, action: 'unlocked' as const };
  const forged: AuditRecord = { ...body, hash: recordHash(body) };
  const head = { seq: forged.seq, hash: forged.hash };
  const rows: [string, unknown][] = [
    [`audit/${String(forged.seq).padStart(12, '0')}`, forged],
    ['audit-head', head],
    ['sum/audit-head', recordSum(head)],
  ];
  const values = rows
    .map(([k, v]) => `('${k}', decode('${encodeRecord(v).toString('hex')}', 'hex'))`)
    .join(', ');
  pg.psql(
    db,
    `CREATE TABLE saved AS SELECT * FROM (VALUES ${values}) AS t(key, value);
     INSERT INTO vault_rows (key, value, version)
       SELECT key, value, (SELECT version FROM vault_meta) + 1 FROM saved
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version;
     UPDATE vault_meta SET version = version + 1;`,
  );
  const verify = await a.owner(['audit', '--verify']);
  const body2 = assertRefused(verify, 'VLT-3045', 'audit --verify');
  assert.match(body2, new RegExp(`audit record ${forged.seq} was not written by a vault host`));
});
