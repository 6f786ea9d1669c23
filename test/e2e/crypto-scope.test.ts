// Cryptographic scope (issue 15), as an attacker with nothing but a token and
// a copy of vault.mdb tries it: the offline attacker (test/support/offline.ts)
// opens every sealed box in the copy with the token's key pair and every key
// that yields. It must reach the data keys of the token's scope and nothing
// else, and keys it saved before a revocation must open nothing set after.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused } from '../support/e2e-helpers.js';
import { copyStore, entryIdsByName, ownerKeys, tokenLoot, valuesWith } from '../support/offline.js';
import { installBin, underPty } from '../support/pty.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let one = '';
let two = '';

before(async () => {
  await rig.create();
  await rig.set('A', 'value-A');
  await rig.set('A', 'key-A', 'key');
  await rig.set('B', 'value-B');
  ok(await rig.owner(['entry', 'set', 'C', '--tier', 'prod'], { input: 'value-C' }));
  await rig.set('Other', 'value-Other');
  // Limits out of the way: refused names take slots of the rate windows too.
  const roomy = ['--per-minute', '100', '--per-hour', '1000'];
  one = await rig.addAgent('one', ['A'], roomy);
  two = await rig.addAgent('two', ['A', 'B'], roomy);
  installBin(rig);
});
after(() => rig.dispose());

/** Which entries (by name) a set of keys holds the data key of, in a store copy. */
async function dataKeysReached(dir: string, keys: Set<string>): Promise<string[]> {
  const owner = await ownerKeys(dir, PASSPHRASE);
  const ids = await entryIdsByName(dir, PASSPHRASE);
  const names = new Map([...ids].map(([name, id]) => [id, name]));
  assert.equal(keys.has(owner.root), false, 'root key reached');
  assert.equal(keys.has(owner.index), false, 'the owner’s index key reached');
  for (const t of owner.tiers) assert.equal(keys.has(t), false, 'a tier key reached');
  return [...owner.data]
    .filter(([, k]) => keys.has(k))
    .map(([id]) => names.get(id) ?? id)
    .sort();
}

test('an agent scoped to one entry decrypts that entry only from a store copy with its token', async () => {
  const dir = copyStore(rig.vaultDir, rig.root);
  const loot = await tokenLoot(dir, one);
  assert.deepEqual(loot.values, ['key-A', 'value-A']);
  assert.deepEqual(await dataKeysReached(dir, loot.keys), ['A']);
  // Its name index has its one entry: no row answers for B, C or Other.
  assert.equal(loot.indexRows, 1);
  // The live host agrees: out of scope and nonexistent read the same.
  const b = await rig.agent(['get', 'B'], one);
  const none = await rig.agent(['get', 'Nope'], one);
  assertRefused(b, 'VLT-2041');
  assert.equal(b.stderr, none.stderr);
});

test('a run --scope session token decrypts its narrowed scope only from a store copy, and nothing once it ended', async () => {
  const leak = join(rig.root, 'leak');
  mkdirSync(leak, { recursive: true });
  const tokenFile = join(leak, 'token');
  const r = await underPty(rig, [
    'run',
    '--no-sandbox',
    '--agent',
    'two',
    '--scope',
    'B',
    '--',
    'sh',
    '-c',
    `printf %s "$VAULT_TOKEN" > ${tokenFile} && cp ${join(rig.vaultDir, 'vault.mdb')} ${leak}/`,
  ]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const session = readFileSync(tokenFile, 'utf8');
  const loot = await tokenLoot(leak, session);
  assert.deepEqual(loot.values, ['value-B']);
  assert.deepEqual(await dataKeysReached(leak, loot.keys), ['B']);
  // The session has ended; the owner's next command rotates what it held.
  ok(await rig.owner(['entry', 'ls']));
  const later = copyStore(rig.vaultDir, rig.root);
  assert.deepEqual(await dataKeysReached(later, loot.keys), []);
  assert.deepEqual(await valuesWith(later, loot.keys), []);
  assert.equal(ok(await rig.agent(['get', 'B'], two)), 'value-B\n');
});

test('keys saved before agent revoke open nothing rotated after, nor entries added later', async () => {
  const before = copyStore(rig.vaultDir, rig.root);
  const saved = await tokenLoot(before, two);
  assert.deepEqual(saved.values, ['key-A', 'value-A', 'value-B']);

  ok(await rig.owner(['agent', 'revoke', 'two']));
  await rig.set('B', 'value-B2');
  await rig.set('D', 'value-D');
  ok(await rig.owner(['agent', 'scope', 'one', '--add', 'D']));
  assertRefused(await rig.agent(['get', 'A'], two), 'VLT-2040');
  // The agent that keeps A still reads it: the rotation re-granted it.
  assert.equal(ok(await rig.agent(['get', 'A'], one)), 'value-A\n');
  assert.equal(ok(await rig.agent(['get', 'D'], one)), 'value-D\n');

  const later = copyStore(rig.vaultDir, rig.root);
  assert.deepEqual(await valuesWith(later, saved.keys), []);
  assert.deepEqual(await dataKeysReached(later, saved.keys), []);
  const revoked = await tokenLoot(later, two);
  assert.deepEqual(revoked.values, []);
});

test('narrowing a scope rotates the entry lost: saved keys open nothing after', async () => {
  const before = copyStore(rig.vaultDir, rig.root);
  const saved = await tokenLoot(before, one);
  assert.deepEqual(saved.values, ['key-A', 'value-A', 'value-D']);
  ok(await rig.owner(['agent', 'scope', 'one', '--rm', 'A']));
  assertRefused(await rig.agent(['get', 'A'], one), 'VLT-2041');
  const later = copyStore(rig.vaultDir, rig.root);
  assert.deepEqual(await dataKeysReached(later, saved.keys), ['D']);
  assert.deepEqual(await valuesWith(later, saved.keys), ['value-D']);
});
