// Authenticated records (issue 15), attacked by writing the live store with
// the project's own store module, as any process of the owner's OS user can:
// swapped name-index rows, a rolled-back field or entry, a scope widened in
// the store before the owner's `run`. Each ends in a clear, distinct refusal
// and releases nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Tx } from '../../src/store/tx.js';
import { assertRefused } from '../support/e2e-helpers.js';
import { copyStore, entryIdsByName } from '../support/offline.js';
import { readStore, writeStore } from '../support/live-store.js';
import { installBin, underPty } from '../support/pty.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token = '';
let ids = new Map<string, string>();

before(async () => {
  await rig.create();
  for (const n of ['C7', 'C11', 'R', 'Secret']) await rig.set(n, `value-${n}`);
  token = await rig.addAgent(
    'bot',
    ['C7', 'C11', 'R'],
    ['--per-minute', '100', '--per-hour', '100'],
  );
  ids = await entryIdsByName(copyStore(rig.vaultDir, rig.root), PASSPHRASE);
  installBin(rig);
});
after(() => rig.dispose());

/** One write transaction on the live store, as an attacker with file access makes it. */
const tamper = (fn: (tx: Tx) => void): Promise<void> => writeStore(rig.vaultDir, fn);

const id = (name: string) => ids.get(name) as string;

test('swapped rows of the agent’s name index: get C7 is refused with VLT-3022, not C11’s value', async () => {
  let saved: Record<string, string> = {};
  await tamper((tx) => {
    const a = tx.agents().find((x) => x.name === 'bot');
    assert.ok(a);
    saved = { ...a.index };
    const swapped = Object.fromEntries(
      Object.entries(a.index).map(([h, e]) => [
        h,
        e === id('C7') ? id('C11') : e === id('C11') ? id('C7') : e,
      ]),
    );
    tx.putAgent({ ...a, index: swapped });
  });
  assertRefused(await rig.agent(['get', 'C7'], token), 'VLT-3022');
  assertRefused(await rig.agent(['get', 'C11'], token), 'VLT-3022');
  // The owner's next change to the agent sees the record was altered.
  assertRefused(await rig.owner(['agent', 'limits', 'bot', '--per-minute', '50']), 'VLT-3021');
  await tamper((tx) => {
    const a = tx.agents().find((x) => x.name === 'bot');
    if (a) tx.putAgent({ ...a, index: saved });
  });
  assert.equal(ok(await rig.agent(['get', 'C7'], token)), 'value-C7\n');
});

test('swapped rows of the owner’s name index: entry show and set are refused with VLT-3022', async () => {
  const swap = () =>
    tamper((tx) => {
      for (const { hash, entryId } of tx.nameRows()) {
        if (entryId === id('C7')) tx.putName(hash, id('C11'));
        else if (entryId === id('C11')) tx.putName(hash, id('C7'));
      }
    });
  await swap();
  assertRefused(await rig.owner(['entry', 'show', 'C7']), 'VLT-3022');
  assertRefused(await rig.owner(['entry', 'set', 'C11'], { input: 'overwrite' }), 'VLT-3022');
  await swap();
  assert.equal(ok(await rig.agent(['get', 'C11'], token)), 'value-C11\n');
});

test('a rolled-back field record is refused with VLT-3020; so is a whole entry put back', async () => {
  const before = await snapshot('R');
  await rig.set('R', 'value-R2');
  assert.equal(ok(await rig.agent(['get', 'R'], token)), 'value-R2\n');
  // The old field record at the current field's place.
  await tamper((tx) => {
    const [cur] = tx.fieldRecords(id('R'));
    assert.ok(cur && before.fields[0]);
    tx.putField(id('R'), cur.key, before.fields[0].record);
  });
  assertRefused(await rig.agent(['get', 'R'], token), 'VLT-3020');
  // The whole entry as it was, with its own fields.
  await tamper((tx) => {
    for (const f of tx.fieldRecords(id('R'))) tx.removeField(id('R'), f.key);
    for (const f of before.fields) tx.putField(id('R'), f.key, f.record);
    tx.putEntry(before.entry);
  });
  const r = await rig.agent(['get', 'R'], token);
  assertRefused(r, 'VLT-3020');
  assert.doesNotMatch(r.stderr, /value-R/);
  // The owner repairs it by setting the value again.
  await rig.set('R', 'value-R3');
  assert.equal(ok(await rig.agent(['get', 'R'], token)), 'value-R3\n');
});

function snapshot(name: string) {
  return readStore(rig.vaultDir, (tx) => {
    const entry = tx.entry(id(name));
    assert.ok(entry);
    return { entry, fields: tx.fieldRecords(id(name)) };
  });
}

test('a scope widened in the store: reads stay refused, and the owner’s run and agent changes refuse the record', async () => {
  await tamper((tx) => {
    const a = tx.agents().find((x) => x.name === 'bot');
    assert.ok(a);
    tx.putAgent({ ...a, scope: [...a.scope, id('Secret')] });
  });
  assertRefused(await rig.agent(['get', 'Secret'], token), 'VLT-2041');
  assert.match(ok(await rig.owner(['agent', 'show', 'bot'])), /^state: +altered/m);
  const r = await underPty(rig, ['run', '--no-sandbox', '--agent', 'bot', '--', 'true']).exited;
  assert.notEqual(r.exitCode, 0);
  assert.match(r.output, /VLT-3021/);
  assertRefused(await rig.owner(['agent', 'scope', 'bot', '--add', 'R']), 'VLT-3021');
  // The altered agent cannot stop the owner rotating a credential it holds;
  // it gets no key to the new value.
  await rig.set('C7', 'value-C7-rotated');
  const r2 = await rig.agent(['get', 'C7'], token);
  assertRefused(r2, 'VLT-3020');
  assert.doesNotMatch(r2.stderr, /rotated/);
  ok(await rig.owner(['agent', 'lock', 'bot']));
  ok(await rig.owner(['agent', 'revoke', 'bot']));
});
