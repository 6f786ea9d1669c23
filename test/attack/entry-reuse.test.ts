// The host keeps an entry's opened name and meta for every caller whose grant
// opens the same data key (src/host/agent/entry-check.ts, issue 37): one
// agent's read must never carry another past its own grant. An agent that
// knows this reads the entry through a colleague's cache: right after the
// colleague read it, with its own grant taken away, and with none at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
const tokens: Record<string, string> = {};
const wide = ['--per-minute', '1000', '--per-hour', '1000'];

before(async () => {
  await rig.create();
  await rig.set('Shared', 'shared-value');
  await rig.set('Other', 'other-value');
  tokens.a = await rig.addAgent('a', ['Shared'], wide);
  tokens.b = await rig.addAgent('b', ['Shared'], wide);
  tokens.c = await rig.addAgent('c', ['Other'], wide);
});
after(() => rig.dispose());

const get = (who: string, entry: string) => rig.agent(['get', entry], tokens[who] as string);

test('an agent is refused an entry another agent has just opened, without a grant of its own or after losing it', async () => {
  assert.equal(ok(await get('a', 'Shared')), 'shared-value\n');
  // Never granted: the host has just opened the entry for a.
  const never = await get('c', 'Shared');
  assert.equal(never.code, 77, never.stderr);
  assert.match(never.stderr, /VLT-2041/);
  assert.equal(never.stdout, '');

  assert.equal(ok(await get('b', 'Shared')), 'shared-value\n');
  ok(await rig.owner(['agent', 'scope', 'b', '--rm', 'Shared']));
  assert.equal(ok(await get('a', 'Shared')), 'shared-value\n');
  const lost = await get('b', 'Shared');
  assert.match(lost.stderr, /VLT-2041/);
  assert.equal(lost.stdout, '');
  // a's grant is untouched by b's loss, and c's own entry still reads.
  assert.equal(ok(await get('a', 'Shared')), 'shared-value\n');
  assert.equal(ok(await get('c', 'Other')), 'other-value\n');
});

test('after a rotation the opened entry of the old generation serves no one: both agents read the new value', async () => {
  assert.equal(ok(await get('a', 'Shared')), 'shared-value\n');
  await rig.set('Shared', 'rotated-value');
  assert.equal(ok(await get('a', 'Shared')), 'rotated-value\n');
  ok(await rig.owner(['agent', 'scope', 'c', '--add', 'Shared']));
  assert.equal(ok(await get('c', 'Shared')), 'rotated-value\n');
});
