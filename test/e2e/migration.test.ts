// A vault written by the release before issue 15 (schema 1, the fixture in
// test/fixtures/vault-v1, made by commit 8ea27c6's CLI) is migrated on the
// owner's next unlock with nothing lost: every value and version, the totp
// seed, host bindings, tiers, agents with their scopes and tokens, the audit
// chain and the recovery key. Until then agents are told to wait (VLT-3024);
// a vault newer than this build is refused with VLT-3023.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Store } from '../../src/store/lmdb/store.js';
import { assertRefused, auditRecords } from '../support/e2e-helpers.js';
import { copyStore, tokenLoot } from '../support/offline.js';
import { ROOT, Rig, ok } from '../support/rig.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'vault-v1', 'vault.mdb');
const RECOVERY = 'vltr_jpWRRnXqPc9ybpKzcGw3D5rSvkfDQibQJdqJJxbx0sj4QELi5';
const BOT = 'vlt_17lSaA1tZDkDnCgpE3tQyQVLdNwWICrvSBtcez4NQuE32y7VD4ECg75HFZyzJzoGs0XuQH1';
const OTHER = 'vlt_65hja7UsreeXaa83j8wpUy7kVF9br2UtBAsQFFr4OtF0dazkqjEBsDfoNNQugbtK140xiA2';

const rig = new Rig();

before(() => {
  mkdirSync(rig.vaultDir, { recursive: true, mode: 0o700 });
  copyFileSync(FIXTURE, join(rig.vaultDir, 'vault.mdb'));
  writeFileSync(rig.passphraseFile, 'fixture passphrase one\n', { mode: 0o600 });
});
after(() => rig.dispose());

test('before the owner unlocks, agents are told the vault awaits its upgrade', async () => {
  assertRefused(await rig.agent(['get', 'GitHub'], BOT), 'VLT-3024');
});

test('the owner’s next command migrates it; nothing is lost', async () => {
  const ls = JSON.parse(ok(await rig.owner(['entry', 'ls', '--json']))) as {
    name: string;
    tier: string;
    hosts: string[];
    fields: { name: string; version: number }[];
  }[];
  const byName = new Map(ls.map((e) => [e.name, e]));
  assert.deepEqual([...byName.keys()].sort(), ['GitHub', 'OpenAI', 'Postgres']);
  assert.deepEqual(
    byName.get('GitHub')?.fields.map((f) => [f.name, f.version]),
    [
      ['password', 1],
      ['totp', 1],
      ['token', 2],
    ],
  );
  assert.equal(byName.get('Postgres')?.tier, 'prod');
  assert.deepEqual(byName.get('OpenAI')?.hosts, ['api.openai.com']);

  assert.equal(ok(await rig.agent(['get', 'GitHub'], BOT)), 'hunter2\n');
  assert.equal(ok(await rig.agent(['get', 'GitHub', '--field', 'token'], BOT)), 'v2\n');
  assert.match(ok(await rig.agent(['totp', 'GitHub'], BOT)), /^[0-9]{6}\n$/);
  assert.equal(ok(await rig.agent(['get', 'OpenAI', '--field', 'key'], BOT)), 'sk-open\n');
  assertRefused(await rig.agent(['get', 'Postgres'], BOT), 'VLT-2041');
  assert.equal(ok(await rig.agent(['get', 'Postgres'], OTHER)), 'pg-secret\n');

  const agents = JSON.parse(ok(await rig.owner(['agent', 'ls', '--json']))) as {
    name: string;
    scope: string[];
  }[];
  assert.deepEqual(
    agents.map((a) => [a.name, a.scope]),
    [
      ['bot', ['GitHub', 'OpenAI']],
      ['other', ['Postgres']],
    ],
  );
  const audit = await auditRecords(rig);
  assert.equal(audit.filter((r) => r.action === 'vault_migrate').length, 1);
  assert.ok(audit.some((r) => r.action === 'entry_add' && r.entry === 'GitHub'));
  assert.match(ok(await rig.owner(['audit', '--verify'])), /verified/);
  // No record keeps an entry id in clear, old ones included.
  await rig.stop();
  const store = Store.open(rig.vaultDir);
  try {
    const records = store.read((tx) => tx.audit());
    assert.ok(records.length > 10);
    for (const r of records) assert.equal(r.entryId, null, `record ${r.seq}`);
  } finally {
    await store.close();
  }
  // Owner changes after the migration work as on a new vault.
  await rig.set('GitHub', 'hunter3');
  assert.equal(ok(await rig.agent(['get', 'GitHub'], BOT)), 'hunter3\n');
});

test('after the migration a token and a store copy reach its scope only', async () => {
  const loot = await tokenLoot(copyStore(rig.vaultDir, rig.root), OTHER);
  assert.deepEqual(loot.values, ['pg-secret']);
});

test('the recovery key of the old vault still resets the passphrase', async () => {
  const next = join(rig.root, 'next-passphrase');
  writeFileSync(next, 'a new passphrase here\n', { mode: 0o600 });
  ok(
    await rig.owner(['vault', 'passwd', '--recovery'], {
      input: RECOVERY + '\n',
      env: { VAULT_PASSPHRASE_FILE: undefined, VAULT_NEW_PASSPHRASE_FILE: next },
    }),
  );
  writeFileSync(rig.passphraseFile, 'a new passphrase here\n', { mode: 0o600 });
  assert.equal(ok(await rig.agent(['get', 'Postgres'], OTHER)), 'pg-secret\n');
});

test('a vault newer than this build is refused with VLT-3023, and left as it was', async () => {
  await rig.stop();
  const store = Store.open(rig.vaultDir);
  try {
    store.write((tx) => {
      const h = tx.header();
      if (h) tx.putHeader({ ...h, schema: h.schema + 1 });
    });
  } finally {
    await store.close();
  }
  assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3023');
  assertRefused(await rig.agent(['get', 'Postgres'], OTHER), 'VLT-3023');
});
