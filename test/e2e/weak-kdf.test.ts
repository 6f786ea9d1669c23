// The test-only Argon2id switch (VAULT_TEST_WEAK_KDF=1, which the rig sets):
// a vault gets libsodium's minimum costs only when asked, says so, records
// them in its header; and lowered costs written into a real vault's header
// open nothing (the root key was sealed under the original ones).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DEFAULT_MEM, DEFAULT_OPS, TEST_WEAK_MEM, TEST_WEAK_OPS } from '../../src/crypto/kdf.js';
import { Store } from '../../src/store/lmdb/store.js';
import type { VaultHeader } from '../../src/store/schema.js';
import { assertRefused } from '../support/e2e-helpers.js';
import { ok, Rig } from '../support/rig.js';

const WARNING = "vault-cli: test-only: this vault's passphrase KDF is weak\n";
const rigs: Rig[] = [];
after(async () => {
  for (const r of rigs) await r.dispose();
});

async function header(rig: Rig): Promise<VaultHeader> {
  await rig.stop();
  const store = Store.open(rig.vaultDir);
  try {
    return store.read((tx) => tx.header()) as VaultHeader;
  } finally {
    await store.close();
  }
}

test('without the switch: default costs in the header, and no word of a test vault', async () => {
  const rig = new Rig();
  rigs.push(rig);
  const r = await rig.owner(['vault', 'create'], { env: { VAULT_TEST_WEAK_KDF: undefined } });
  ok(r);
  assert.doesNotMatch(r.stderr, /test-only/);
  const h = await header(rig);
  assert.equal(h.kdf.ops, DEFAULT_OPS);
  assert.equal(h.kdf.mem, DEFAULT_MEM);
});

test('with the switch: minimum costs in the header, said on stderr, and the vault works', async () => {
  const rig = new Rig();
  rigs.push(rig);
  const r = await rig.owner(['vault', 'create']);
  ok(r);
  assert.equal(r.stderr.split(WARNING).length, 2, r.stderr);
  await rig.set('GitHub', 'v1');
  assert.match(ok(await rig.owner(['entry', 'ls'])), /GitHub/);
  const h = await header(rig);
  assert.equal(h.kdf.ops, TEST_WEAK_OPS);
  assert.equal(h.kdf.mem, TEST_WEAK_MEM);
  assert.ok(TEST_WEAK_OPS < DEFAULT_OPS && TEST_WEAK_MEM < DEFAULT_MEM);
  // A new passphrase takes the default costs: the weak ones are never carried over.
  ok(
    await rig.owner(['vault', 'passwd'], {
      env: { VAULT_NEW_PASSPHRASE_FILE: rig.passphraseFile },
    }),
  );
  const after = await header(rig);
  assert.equal(after.kdf.ops, DEFAULT_OPS);
  assert.equal(after.kdf.mem, DEFAULT_MEM);
});

test("a real vault's costs lowered in the store: the right passphrase no longer opens it", async () => {
  const rig = new Rig();
  rigs.push(rig);
  ok(await rig.owner(['vault', 'create'], { env: { VAULT_TEST_WEAK_KDF: undefined } }));
  await rig.set('GitHub', 'v1');
  const real = await header(rig);
  const rewrite = async (kdf: VaultHeader['kdf']) => {
    const store = Store.open(rig.vaultDir);
    try {
      store.write((tx) => tx.putHeader({ ...(tx.header() as VaultHeader), kdf }));
    } finally {
      await store.close();
    }
  };
  await rewrite({ ...real.kdf, ops: TEST_WEAK_OPS, mem: TEST_WEAK_MEM });
  assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3002');
  await rig.stop();
  // The original costs back: the same passphrase opens it again, nothing lost.
  await rewrite(real.kdf);
  assert.match(ok(await rig.owner(['entry', 'ls'])), /GitHub/);
});
