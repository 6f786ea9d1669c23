// The sealed state (issue 36, src/store/seal.ts) on a vault the previous build
// wrote (test/fixtures/vault-audit-v1: no state record, no state key, its
// agent's token from before): it opens and serves as it is, the owner's next
// command seals it, its agent is served on after (the host holds the key, in
// its own directory across a restart), and a rate record copied back into the
// LMDB file after a lock is then reported by `vault check` and `audit --verify`.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, hostProcesses, waitGone } from '../support/e2e-helpers.js';
import { readStore } from '../support/live-store.js';
import { ROOT, Rig, ok } from '../support/rig.js';
// The rollback is made below the Store API, as a holder of the file would.
import { editRecords } from '../support/store-damage.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'vault-audit-v1');
const PASS = 'fixture passphrase audit';
const TOKEN = 'vlt_0ff5KUPrbqEmOe4fwgoIiXf22L5ncnh56wQ6ebN8c2K1Ge4ST4WlfHT2KVk0oLzqX0omVrt';

const rig = new Rig();

before(() => {
  mkdirSync(rig.vaultDir, { recursive: true, mode: 0o700 });
  copyFileSync(join(FIXTURE, 'vault.mdb'), join(rig.vaultDir, 'vault.mdb'));
  writeFileSync(rig.passphraseFile, PASS + '\n', { mode: 0o600 });
});
after(() => rig.dispose());

const get = async () => ok(await rig.agent(['get', 'GitHub'], TOKEN));

/** Ends the host without an owner command (`daemon stop` is one). */
async function stopQuietly(): Promise<void> {
  for (const pid of hostProcesses(rig.vaultDir)) {
    process.kill(pid, 'SIGTERM');
    assert.ok(await waitGone(pid), 'the host ends on SIGTERM');
  }
}

const sealed = () =>
  readStore(rig.vaultDir, (tx) => ({
    state: tx.state()?.version ?? null,
    stateKey: tx.header()?.stateKey !== undefined,
    last: tx.audit().at(-1),
  }));

test('a vault from before the sealed state opens, is sealed by the owner’s next command, and serves its agent on', async () => {
  assert.equal(await get(), 'hunter2\n');
  let now = await sealed();
  assert.equal(now.state, null, 'not sealed before an owner command');
  assert.equal(now.stateKey, false);
  assert.match(ok(await rig.owner(['audit', '--verify'])), /^audit chain verified: /);
  now = await sealed();
  assert.ok(now.state !== null && now.state > 0, 'sealed by the owner’s command');
  assert.equal(now.stateKey, true);
  // The agent's token is from before: the host holds the key from the owner's unlock.
  assert.equal(await get(), 'hunter2\n');
  now = await sealed();
  assert.equal(now.last?.action, 'read');
  assert.equal(typeof now.last?.state, 'number', 'the read names the version it wrote');
  assert.ok(Buffer.isBuffer(now.last?.mac), 'and is keyed');
  assert.equal(statSync(join(rig.vaultDir, 'state.key')).mode & 0o777, 0o600);
  // A new host on the same directory holds it too.
  await stopQuietly();
  assert.equal(await get(), 'hunter2\n');
  assert.match(ok(await rig.owner(['vault', 'check'])), /^vault check: no damage found/);
  assert.match(ok(await rig.owner(['audit', '--verify'])), /^audit chain verified: /);
});

test('LMDB: a rate record copied back into the file after a lock is reported by vault check and audit --verify', async () => {
  const key = await readStore(rig.vaultDir, (tx) => `rate/${tx.agents()[0]?.id}`);
  await stopQuietly();
  const saved = await editRecords(rig.vaultDir, (db) => ({
    rate: db.get(key) as unknown,
    sum: db.get(`sum/${key}`) as unknown,
  }));
  assert.ok(saved.rate !== undefined && saved.sum !== undefined);
  const name = await readStore(rig.vaultDir, (tx) => tx.agents()[0]?.name ?? '');
  ok(await rig.owner(['agent', 'lock', name]));
  assertRefused(await rig.agent(['get', 'GitHub'], TOKEN), 'VLT-2043');
  await stopQuietly();
  await editRecords(rig.vaultDir, (db) =>
    db.transactionSync(() => {
      void db.put(key, saved.rate);
      void db.put(`sum/${key}`, saved.sum);
    }),
  );
  const check = await rig.owner(['vault', 'check']);
  assert.notEqual(check.code, 0, check.stdout);
  assert.match(check.stderr, /VLT-3045: state: rollback detected/);
  assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3045', 'audit --verify');
});
