// `vault rekey`: a new root key and recovery key. The old recovery key is
// refused after it, the passphrase keeps working, agents keep reading, the
// audit chain stays anchored; keys saved from the old header open nothing new.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused } from '../support/e2e-helpers.js';
import { copyStore, ownerKeys, valuesWith } from '../support/offline.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let recovery = '';
let token = '';

before(async () => {
  recovery = (await rig.create()).trim();
  await rig.set('A', 'value-A');
  ok(await rig.owner(['entry', 'set', 'P', '--tier', 'prod'], { input: 'value-P' }));
  token = await rig.addAgent('bot', ['A', 'P']);
});
after(() => rig.dispose());

test('rekey prints a new recovery key; the old one is refused; passphrase and agents work', async () => {
  const old = await ownerKeys(copyStore(rig.vaultDir, rig.root), PASSPHRASE);
  const r = await rig.owner(['vault', 'rekey']);
  assert.equal(r.code, 0, r.stderr);
  const fresh = r.stdout.trim();
  assert.match(fresh, /^vltr_[0-9A-Za-z]+$/);
  assert.notEqual(fresh, recovery);

  assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-A\n');
  assert.equal(ok(await rig.agent(['get', 'P'], token)), 'value-P\n');
  ok(await rig.owner(['entry', 'show', 'A']));
  assert.match(ok(await rig.owner(['audit', '--verify'])), /verified: .* 0 after it unanchored/);

  // The root, tier and index keys of the old header are all replaced...
  const now = await ownerKeys(copyStore(rig.vaultDir, rig.root), PASSPHRASE);
  assert.notEqual(now.root, old.root);
  assert.notEqual(now.index, old.index);
  for (const t of old.tiers) assert.equal(now.tiers.includes(t), false);
  // ...and a value set after opens with none of the old header's keys.
  await rig.set('A', 'value-A2');
  const later = copyStore(rig.vaultDir, rig.root);
  assert.deepEqual(await valuesWith(later, [old.root, old.index, ...old.tiers]), []);

  const next = join(rig.root, 'next');
  writeFileSync(next, 'another passphrase 9\n', { mode: 0o600 });
  const env = { VAULT_PASSPHRASE_FILE: undefined, VAULT_NEW_PASSPHRASE_FILE: next };
  assertRefused(
    await rig.owner(['vault', 'passwd', '--recovery'], { input: recovery + '\n', env }),
    'VLT-3002',
    'old recovery key',
  );
  ok(await rig.owner(['vault', 'passwd', '--recovery'], { input: fresh + '\n', env }));
  assert.equal(
    ok(await rig.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: next } })).length > 0,
    true,
  );
});
