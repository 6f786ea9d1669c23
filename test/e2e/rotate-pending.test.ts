// The rotation queue (`rotate-pending`): the entries ended sessions held are
// rotated at the owner's next command, each in a commit of its own. One whose
// rotation fails (a field record altered in the store, VLT-3020) stays queued
// and holds back none of the others; the command itself goes on.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readStore, writeStore } from '../support/live-store.js';
import { copyStore, entryIdsByName } from '../support/offline.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let ids = new Map<string, string>();
let reader = '';
const id = (name: string) => ids.get(name) as string;

before(async () => {
  await rig.create();
  for (const n of ['A', 'B', 'C']) await rig.set(n, `value-${n}`);
  reader = await rig.addAgent('reader', ['A', 'C']);
  ids = await entryIdsByName(copyStore(rig.vaultDir, rig.root), PASSPHRASE);
});
after(() => rig.dispose());

/** Each entry's key generation (a rotation makes the next). */
const gens = () => readStore(rig.vaultDir, (tx) => new Map(tx.entries().map((e) => [e.id, e.gen])));
const pending = () => readStore(rig.vaultDir, (tx) => tx.pendingRotation());

test('a queued entry that cannot be rotated stays queued; the others are rotated at the owner’s next command', async () => {
  const before = await gens();
  // As an ended session leaves it, and B's field record altered as an agent of the owner's user can.
  await writeStore(rig.vaultDir, (tx) => {
    tx.putPendingRotation([id('A'), id('B'), id('C')]);
    for (const f of tx.fieldRecords(id('B')))
      tx.putField(id('B'), f.key, { ...f.record, gen: f.record.gen + 1 });
  });
  assert.match(ok(await rig.owner(['entry', 'ls'])), /\bA\b/);
  const now = await gens();
  assert.deepEqual(await pending(), [id('B')]);
  assert.equal(now.get(id('A')), (before.get(id('A')) ?? NaN) + 1);
  assert.equal(now.get(id('C')), (before.get(id('C')) ?? NaN) + 1);
  assert.equal(now.get(id('B')), before.get(id('B')));
  // Rotated, not lost: the agent's grant follows the new key.
  assert.equal(ok(await rig.agent(['get', 'A'], reader)), 'value-A\n');

  // The owner repairs B by setting it; the next command rotates it as queued.
  await rig.set('B', 'value-B2');
  ok(await rig.owner(['entry', 'ls']));
  assert.deepEqual(await pending(), []);
});
