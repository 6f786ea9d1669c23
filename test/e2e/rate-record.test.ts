// An agent's rate state in a record of its own (issue 28): a fill or a read
// charges the agent by rewriting that small record and leaves the agent's own
// record (grants, name index, MAC) byte for byte as it was. A vault from
// before keeps the state inside the agent record: the real host reads it from
// there, enforces its windows and its lock, and moves it out on the first
// charge. Revoking drops the rate record; a rate record lost reads as locked
// and `vault check` names it. The store is read with the host stopped.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Rig, ok } from '../support/rig.js';
import { editRecords } from '../support/store-damage.js';
import { parseToken } from '../../src/crypto/token.js';
import { recordSum } from '../../src/store/schema.js';
import { rowTag, stateMac, xorInto, type StateRecord } from '../../src/store/seal.js';

const rig = new Rig();
const entries = ['e1', 'e2', 'e3', 'e4'];

before(async () => {
  await rig.create();
  for (const e of entries) await rig.set(e, `value of ${e}`);
});
after(() => rig.dispose());

function agentId(token: string): string {
  const parsed = parseToken(token);
  assert.ok(parsed !== null);
  return parsed.agentId;
}

/** Stops the host, so the store can be read and edited below it. */
async function stopHost(): Promise<void> {
  // `daemon status` exits non-zero when no host runs.
  const status = JSON.parse((await rig.owner(['daemon', 'status', '--json'])).stdout) as {
    running: boolean;
  };
  if (!status.running) return;
  const pid = await hostPid(rig);
  await rig.stop();
  assert.ok(await waitGone(pid));
}

interface Raw {
  agent: Buffer | undefined;
  agentValue: Record<string, unknown> | undefined;
  rate: Record<string, unknown> | undefined;
  rateSum: Buffer | undefined;
}

async function raw(id: string): Promise<Raw> {
  await stopHost();
  return editRecords(rig.vaultDir, (db) => {
    const bytes = db.getBinary(`agent/${id}`);
    return {
      agent: bytes === undefined ? undefined : Buffer.from(bytes),
      agentValue: db.get(`agent/${id}`) as Record<string, unknown> | undefined,
      rate: db.get(`rate/${id}`) as Record<string, unknown> | undefined,
      rateSum: db.get(`sum/rate/${id}`) as Buffer | undefined,
    };
  });
}

/**
 * Puts an agent's rate state back inside its record, as a vault from before
 * issue 28 holds it, checksums and all: a store `vault check` finds sound.
 */
async function toOlderLayout(id: string): Promise<void> {
  await stopHost();
  await editRecords(rig.vaultDir, (db) => {
    const agent = db.get(`agent/${id}`) as Record<string, unknown>;
    const rate = db.get(`rate/${id}`) as unknown;
    assert.ok(rate !== undefined && !('rate' in agent));
    const older = { ...agent, rate };
    // The layout changed as the vault itself would change it: its sealed state
    // (issue 36) kept in step with the host's key, so only the layout differs.
    const key = readFileSync(join(rig.vaultDir, 'state.key'));
    const state = db.get('state') as StateRecord;
    const digest = Buffer.from(state.digest);
    xorInto(digest, rowTag(key, `agent/${id}`, agent));
    xorInto(digest, rowTag(key, `agent/${id}`, older));
    xorInto(digest, rowTag(key, `rate/${id}`, rate));
    const sealed = { version: state.version + 1, digest, keyedFrom: state.keyedFrom };
    db.transactionSync(() => {
      void db.put('state', { ...sealed, mac: stateMac(key, sealed) });
      void db.put(`agent/${id}`, older);
      void db.put(`sum/agent/${id}`, recordSum(older));
      void db.remove(`rate/${id}`);
      void db.remove(`sum/rate/${id}`);
    });
  });
}

test('a fill and a read charge the rate record; the agent record stays byte for byte as it was', async () => {
  const token = await rig.addAgent('filler', ['e1', 'e2']);
  const id = agentId(token);
  const before = await raw(id);
  assert.ok(before.agent !== undefined && before.rate !== undefined);
  assert.equal('rate' in (before.agentValue ?? {}), false);
  assert.deepEqual(before.rate.reads, {});

  const filled = await rig.agent(['render', '-'], token, {
    input: 'token={{ vault://e1/password }}\n',
  });
  assert.equal(ok(filled), 'token=value of e1\n');
  assert.equal(ok(await rig.agent(['get', 'e2'], token)), 'value of e2\n');

  const afterwards = await raw(id);
  assert.ok(afterwards.agent?.equals(before.agent), 'the agent record was rewritten');
  assert.deepEqual(
    Object.keys(afterwards.rate?.reads ?? {}).sort(),
    [...(before.agentValue?.scope as string[])].sort(),
  );
  assert.ok(afterwards.rateSum?.equals(recordSum(afterwards.rate)));
});

test('a vault of the older layout keeps its windows and its lock after the upgrade; the first charge moves the state out', async () => {
  // The hour's limit, not the minute's: a slow machine cannot outlast the window.
  const windowed = await rig.addAgent('windowed', entries, [
    '--per-minute',
    '100',
    '--per-hour',
    '3',
  ]);
  const locked = await rig.addAgent('locked', ['e1']);
  for (const e of ['e1', 'e2', 'e3']) ok(await rig.agent(['get', e], windowed));
  ok(await rig.owner(['agent', 'lock', 'locked']));
  await toOlderLayout(agentId(windowed));
  await toOlderLayout(agentId(locked));
  const older = await raw(agentId(windowed));
  assert.equal(older.rate, undefined);
  assert.equal(Object.keys((older.agentValue?.rate as { reads: object }).reads).length, 3);
  ok(await rig.owner(['vault', 'check']));

  // A new host reads the state where the older layout kept it.
  assertRefused(await rig.agent(['get', 'e1'], locked), 'VLT-2043');
  assert.equal(ok(await rig.agent(['get', 'e1'], windowed)), 'value of e1\n'); // counted: free
  assertRefused(await rig.agent(['get', 'e4'], windowed), 'VLT-2042');
  const show = JSON.parse(ok(await rig.owner(['agent', 'show', 'locked', '--json']))) as {
    state: string;
  };
  assert.equal(show.state, 'locked');

  // The first charge moved it: the rate record holds it, the agent record no longer does.
  const moved = await raw(agentId(windowed));
  assert.equal('rate' in (moved.agentValue ?? {}), false);
  const olderReads = (older.agentValue?.rate as { reads: object }).reads;
  assert.deepEqual(Object.keys(moved.rate?.reads ?? {}).sort(), Object.keys(olderReads).sort());
  assert.equal((moved.rate?.violations as unknown[]).length, 1);
  ok(await rig.owner(['vault', 'check']));
});

test('revoking an agent drops its rate record; a rate record lost reads as locked and vault check names it', async () => {
  const gone = await rig.addAgent('gone', ['e1']);
  const lost = await rig.addAgent('lost', ['e1']);
  ok(await rig.agent(['get', 'e1'], gone));
  ok(await rig.owner(['agent', 'revoke', 'gone']));
  const revoked = await raw(agentId(gone));
  assert.ok(revoked.agent !== undefined);
  assert.equal(revoked.rate, undefined);
  assert.equal(revoked.rateSum, undefined);

  ok(await rig.agent(['get', 'e1'], lost));
  await stopHost();
  await editRecords(rig.vaultDir, (db) => {
    db.transactionSync(() => {
      void db.remove(`rate/${agentId(lost)}`);
      void db.remove(`sum/rate/${agentId(lost)}`);
    });
  });
  assertRefused(await rig.agent(['get', 'e1'], lost), 'VLT-2043');
  const check = await rig.owner(['vault', 'check']);
  assert.notEqual(check.code, 0);
  assert.match(check.stdout + check.stderr, /VLT-3036.*lost/s);
});
