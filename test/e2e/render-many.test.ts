// One render of many distinct references: each resolved, in one request.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Rig } from '../support/rig.js';

const rig = new Rig();
// More than the host's caller cache keeps open per caller (64): they all stay open for the request.
const N = 120;
let token = '';

before(async () => {
  await rig.create();
  for (let i = 0; i < N; i++) await rig.set(`e${i}`, `value-${i}`);
  token = await rig.addAgent(
    'many',
    Array.from({ length: N }, (_, i) => `e${i}`),
    ['--per-minute', '100000', '--per-hour', '100000'],
  );
});
after(() => rig.dispose());

test('a template of 120 distinct references renders whole', async () => {
  const tpl = join(rig.root, 'many.txt');
  writeFileSync(
    tpl,
    Array.from({ length: N }, (_, i) => `k${i}=vault://e${i}/password\n`).join(''),
  );
  const r = await rig.agent(['render', tpl], token);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, Array.from({ length: N }, (_, i) => `k${i}=value-${i}\n`).join(''));
});
