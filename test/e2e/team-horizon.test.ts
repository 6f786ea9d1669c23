// Team mode's removals behind a version horizon (issue 37; src/store/pg/horizon.ts):
// archived audit records leave `vault_rows`, the tombstones of removed rows
// are deleted once every host heard from has seen them, a host the horizon
// passed (suspended for longer than the horizon's silence) loads its copy
// afresh and serves the vault as it is, a host kept up to date refreshes
// incrementally, and a database that deletes tombstones without saying so
// is refused, not believed (the sealed digest). Real hosts, real PostgreSQL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { assertRefused, disposeAll, hostPid } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { CLI, liftValuesArgs, ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rigs: Rig[] = [];
const stopped: number[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const pid of stopped.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone already.
    }
  }
  for (const r of rigs) await disposeAll(r);
  await pg?.stop();
});

/** A host's rig on the database `url` (the first one creates the vault), with the horizon's silence `ms`. */
function rig(url: string | null, ms: number): Rig {
  const r = new Rig();
  if (url !== null) r.env.VAULT_STORE_URL = url;
  r.env.VAULT_TEAM_HORIZON_MS = String(ms);
  rigs.push(r);
  return r;
}

const num = (db: string, sql: string) => Number(pg.psql(db, sql).trim());

async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** Each host's loads of its copy, by its id in `vault_hosts`. */
function loads(db: string): Map<string, number> {
  const out = pg.psql(db, `SELECT id || ' ' || loads FROM vault_hosts ORDER BY id`).trim();
  return new Map(
    out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const [id, n] = l.trim().split(' ');
        return [id as string, Number(n)];
      }),
  );
}

test('after archive and a removal, vault_rows holds only live rows; a host the horizon passed reloads and serves the vault as it is; a host kept up to date does not reload', async () => {
  const db = pg.database();
  const silent = 2_000;
  const a = rig(null, silent);
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const b = rig(db.url, silent);
  await a.set('keep', 'kept value');
  await a.set('doomed', 'doomed value');
  const token = await a.addAgent('ci', ['keep', 'doomed']);
  ok(await a.owner(liftValuesArgs('ci')));
  // A's copy loaded and reported: the one host in vault_hosts so far.
  assert.equal(ok(await a.agent(['get', 'keep'], token)), 'kept value\n');
  await until('a reports', () => loads(db.name).size === 1);
  const idA = [...loads(db.name).keys()][0] as string;
  assert.equal(ok(await b.agent(['get', 'doomed'], token)), 'doomed value\n');
  await until('b reports', () => loads(db.name).size === 2);
  const idB = [...loads(db.name).keys()].find((id) => id !== idA) as string;

  for (let i = 0; i < 20; i++) ok(await a.agent(['get', 'keep'], token));
  const archive = join(a.root, 'old.archive');
  ok(await a.owner(['audit', 'archive', '--before', '0m', archive]));
  // B is suspended (a laptop asleep) before it sees the removal or the new value.
  const pidB = await hostPid(b);
  process.kill(pidB, 'SIGSTOP');
  stopped.push(pidB);
  ok(await a.owner(['entry', 'rm', 'doomed']));
  await a.set('keep', 'value set after');

  // B counted out after `silent`; A keeps its copy current: the horizon passes
  // B, and the tombstones behind it go.
  await until('tombstones collected', () => {
    return num(db.name, 'SELECT count(*) FROM vault_rows WHERE value IS NULL') === 0;
  });
  const version = num(db.name, 'SELECT version FROM vault_meta');
  const horizon = num(db.name, 'SELECT horizon FROM vault_meta');
  const bAt = num(db.name, `SELECT version FROM vault_hosts WHERE id = '${idB}'`);
  assert.ok(horizon > bAt, `horizon ${horizon} past b's ${bAt} (vault at ${version})`);
  // Only live rows: no tombstone, no archived audit record.
  assert.equal(
    num(db.name, 'SELECT count(*) FROM vault_rows'),
    num(db.name, 'SELECT count(*) FROM vault_rows WHERE value IS NOT NULL'),
  );
  const base = num(db.name, `SELECT count(*) FROM vault_rows WHERE key LIKE 'audit/%'`);
  assert.ok(base <= 3, `audit rows left after the archive: ${base}`);

  process.kill(pidB, 'SIGCONT');
  stopped.splice(stopped.indexOf(pidB), 1);
  // B loads afresh: the removed entry stays removed, the value set after is seen.
  assertRefused(await b.agent(['get', 'doomed'], token), 'VLT-2041', 'removed while b slept');
  assert.equal(ok(await b.agent(['get', 'keep'], token)), 'value set after\n');
  ok(await b.owner(['audit', '--verify']));
  await until('b reports its reload', () => (loads(db.name).get(idB) ?? 0) >= 2);
  assert.equal(loads(db.name).get(idB), 2, 'b loaded twice: at its start and behind the horizon');
  assert.equal(loads(db.name).get(idA), 1, 'a, kept up to date, never reloaded');
  assert.equal(ok(await a.agent(['get', 'keep'], token)), 'value set after\n');
});

test('a database that deletes tombstones without moving the horizon: the host that missed the removal refuses (VLT-3045), it does not serve the removed entry', async () => {
  const db = pg.database();
  // No collection during the test: only the database's own deletion.
  const a = rig(null, 600_000);
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const b = rig(db.url, 600_000);
  await a.set('keep', 'kept value');
  await a.set('doomed', 'doomed value');
  const token = await a.addAgent('ci', ['keep', 'doomed']);
  assert.equal(ok(await b.agent(['get', 'doomed'], token)), 'doomed value\n');

  ok(await a.owner(['entry', 'rm', 'doomed']));
  const removed = num(db.name, 'SELECT count(*) FROM vault_rows WHERE value IS NULL');
  assert.ok(removed > 0, 'the removal left tombstones');
  pg.psql(db.name, 'DELETE FROM vault_rows WHERE value IS NULL');
  assert.equal(num(db.name, 'SELECT horizon FROM vault_meta'), 0);

  // B's refresh does not learn of the removal; its copy's digest and the
  // sealed state A wrote disagree: every value refused, none released.
  assertRefused(await b.agent(['get', 'doomed'], token), 'VLT-3045', 'the removed entry');
  assertRefused(await b.agent(['get', 'keep'], token), 'VLT-3045', 'any entry');
  assertRefused(await a.agent(['get', 'doomed'], token), 'VLT-2041', 'removed, on a');
});

test('with every LISTEN connection gone, `audit --follow` on another host still streams a record within its poll (the fallback)', async () => {
  const db = pg.database();
  const a = rig(null, 600_000);
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const b = rig(db.url, 600_000);
  await a.set('keep', 'kept value');
  const token = await a.addAgent('ci', ['keep']);
  assert.equal(ok(await b.agent(['get', 'keep'], token)), 'kept value\n');
  const child = spawn(process.execPath, [CLI, 'audit', '--follow', '--json'], {
    env: b.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise((resolve) => child.on('close', resolve));
  child.stdin.end();
  const reads = () =>
    out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { action: string; actor: string })
      .filter((r) => r.actor === 'cli:ci').length;
  try {
    await until('the log streamed', () => reads() === 1);
    const listening = `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN vault_commit'`;
    await until('both hosts listen', () => num(db.name, listening) >= 2);
    // The listeners' connections end (a proxy that drops them, a restart of
    // the pooler): no NOTIFY reaches either host from now on.
    pg.psql(
      db.name,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN vault_commit'`,
    );
    await until('no listener left', () => num(db.name, listening) === 0);
    assert.equal(ok(await a.agent(['get', 'keep'], token)), 'kept value\n');
    await until('a’s record streamed on b', () => reads() === 2, 10_000);
    assert.equal(num(db.name, listening), 0, 'streamed by the poll, not by a NOTIFY');
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
