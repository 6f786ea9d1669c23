// Team mode under failure (docs/team.md "What each failure does"): a host
// killed with SIGKILL in the middle of fills, and the database stopped and
// started under load. Whatever a client received was audited first: the
// audit chain holds at least one fill record per value released, and a host
// that lost its database refuses (VLT-3040), then serves again by itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import type { ClientOptions } from '../../src/client/options.js';
import { auditRecords, disposeAll, hex, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { CLI, ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rigs: Rig[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const rig of rigs) await disposeAll(rig);
  await pg?.stop();
});

/** Clients of a running host that never start one (a killed host stays gone). */
function client(r: Rig): ClientOptions {
  return {
    vaultDir: r.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: r.env },
    autoStart: false,
  };
}

/** Two hosts on a new database, an entry and an agent that may fill it. */
async function team(): Promise<{ a: Rig; b: Rig; token: string; value: string }> {
  const db = pg.database();
  const a = new Rig();
  const b = new Rig();
  rigs.push(a, b);
  b.env.VAULT_STORE_URL = db.url;
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  const value = `v-${hex()}`;
  await a.set('db', value);
  const token = await a.addAgent('filler', ['db']);
  // The load fills as fast as the hosts answer: past the default 600 values a
  // minute on a fast machine, and two such violations lock the agent. What is
  // tested here is the audit, not the values bucket.
  await a.liftValuesLimit('filler');
  // Both hosts up before the load starts.
  ok(await b.owner(['agent', 'show', 'filler']));
  ok(await a.owner(['agent', 'show', 'filler']));
  return { a, b, token, value };
}

interface Load {
  released: number;
  codes: Map<string, number>;
  stop(): Promise<void>;
}

/** `workers` clients filling one reference through host `r` in a loop until stopped. */
function load(r: Rig, token: string, value: string, workers = 4): Load {
  const state: Load = { released: 0, codes: new Map(), stop: async () => {} };
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      try {
        const out = await call(client(r), 'resolve', {
          token,
          refs: [{ entry: 'db', field: 'password' }],
        });
        assert.equal(Buffer.from(out.values[0] as string, 'base64').toString(), value);
        state.released++;
      } catch (err) {
        const code = String((err as { code?: unknown }).code);
        state.codes.set(code, (state.codes.get(code) ?? 0) + 1);
        await new Promise((res) => setTimeout(res, 20));
      }
    }
  });
  state.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return state;
}

async function until(what: string, cond: () => boolean, maxMs = 20_000): Promise<void> {
  const end = Date.now() + maxMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

async function fillRecords(r: Rig): Promise<number> {
  return (await auditRecords(r)).filter((x) => x.action === 'fill' && x.outcome === 'ok').length;
}

test('kill -9 of a host during fills: every value released is in the audit chain', async () => {
  const { a, b, token, value } = await team();
  const pid = await hostPid(a);
  const fills = load(a, token, value);
  const other = load(b, token, value, 2);
  await until('fills through host a', () => fills.released >= 40);
  process.kill(pid, 'SIGKILL');
  assert.ok(await waitGone(pid), 'host a is gone');
  await until('fills through host b after the kill', () => other.released >= 20);
  await fills.stop();
  await other.stop();
  // Through host a: only the host's disappearance was met, never a wrong value;
  // through host b, nothing.
  for (const code of fills.codes.keys()) assert.equal(code, 'VLT-3005', code);
  assert.deepEqual([...other.codes], []);
  const records = await fillRecords(b);
  const released = fills.released + other.released;
  assert.ok(records >= released, `${records} fill records for ${released} values released`);
  // At most the fills in flight when it died were audited without their value leaving.
  assert.ok(records <= released + 4, `${records} records, ${released} released`);
  ok(await b.owner(['audit', '--verify']));
  // A host started again on that machine serves the same vault, nothing lost.
  assert.equal(ok(await a.agent(['get', 'db'], token)), `${value}\n`);
});

test('the database stopped and started under load: refusals, then service, nothing unaudited', async () => {
  const { a, token, value } = await team();
  const fills = load(a, token, value);
  await until('fills before the stop', () => fills.released >= 20);
  await pg.halt();
  const atStop = fills.released;
  await until('refusals while the database is down', () => (fills.codes.get('VLT-3040') ?? 0) >= 5);
  const whileDown = fills.released;
  await pg.resume();
  await until('service again', () => fills.released >= whileDown + 20);
  await fills.stop();
  // Nothing but the database's absence was met.
  for (const code of fills.codes.keys()) assert.equal(code, 'VLT-3040', code);
  // Released while down: at most the fills already committed when it stopped.
  assert.ok(whileDown - atStop <= 4, `${whileDown - atStop} released after the stop`);
  const records = await fillRecords(a);
  assert.ok(records >= fills.released, `${records} fill records, ${fills.released} released`);
  ok(await a.owner(['audit', '--verify']));
  // The refusal a user meets says what it is.
  await pg.halt();
  const refused = await a.agent(['get', 'db'], token);
  await pg.resume();
  assert.equal(refused.code, 69, refused.stderr);
  assert.match(refused.stderr, /^vault-cli: VLT-3040: .*database is unreachable/);
});
