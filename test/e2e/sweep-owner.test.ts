// What a sweep costs the host in owner unlocks, on a vault with the real
// Argon2id costs (each derivation about a second; the other tests' weak KDF
// hides it): with VAULT_PASSPHRASE_FILE and no owner session, one passphrase
// derivation for the whole sweep, however many requests it marks findings
// with, in --watch mode too; the key the host holds for it serves that one
// process and no other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { rawPost, replyBody, watchOutput } from '../support/raw-host.js';
import { CLI, Rig, ok, terminate } from '../support/rig.js';

const REAL = { VAULT_TEST_WEAK_KDF: undefined };
const FILES = 40;
const rig = new Rig();
const dir = join(rig.root, 'transcripts');
const values = Array.from({ length: 3 }, () => `sk_live_${randomBytes(16).toString('hex')}`);

/** The passphrase derivations the host has logged so far. */
const derivations = () =>
  readFileSync(join(rig.vaultDir, 'host.log'), 'utf8').split('owner passphrase derived').length - 1;

before(async () => {
  ok(await rig.owner(['vault', 'create'], { env: REAL }));
  const dotenv = join(rig.root, 'import.env');
  writeFileSync(dotenv, values.map((v, i) => `LEAKED_${i}=${v}\n`).join(''));
  ok(await rig.owner(['import', dotenv], { env: REAL }));
  mkdirSync(dir);
  for (let i = 0; i < FILES; i++) {
    writeFileSync(join(dir, `t${i}.jsonl`), `{"text":"ran it"}\n{"text":"${values[i % 3]}"}\n`);
  }
});
after(() => rig.dispose());

test('a sweep with findings in many files costs the host one passphrase derivation', async () => {
  const from = derivations();
  const r = await rig.owner(['sweep', '--stored', '--paths-only', '--path', dir, '--json'], {
    env: REAL,
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout.split('\n').filter(Boolean).length, FILES);
  assert.match(r.stderr, /40 findings, 3 fields marked exposed/);
  assert.equal(derivations() - from, 1, 'one passphrase derivation for the values and every mark');
  const exposed = ok(await rig.owner(['entry', 'show', 'LEAKED_1'], { env: REAL }));
  assert.match(exposed, /password .* EXPOSED /);
});

test('--watch: one derivation for the sweep, the audit follow and a mark per leak; the held key serves no other process', async () => {
  const from = derivations();
  const child = spawn(
    process.execPath,
    [CLI, 'sweep', '--stored', '--paths-only', '--path', dir, '--watch', '--json'],
    { env: { ...rig.env, VAULT_TEST_WEAK_KDF: undefined }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { out, err, until } = watchOutput(child, 'sweep --watch');
  const lines = () => out().split('\n').filter(Boolean).length;
  try {
    await until(() => /watching/.test(err()));
    assert.equal(lines(), FILES);
    for (let i = 0; i < 3; i++) {
      const seen = lines();
      appendFileSync(join(dir, `t${i}.jsonl`), `{"text":"again ${values[i]}"}\n`);
      await until(() => lines() > seen);
    }
    // Each leak found is marked in turn (the watch queues a file's sweep and its mark together).
    assert.equal(lines(), FILES + 3);
    // This test's own process, with no passphrase: not the sweep's, so no key.
    const other = replyBody<{ ok: boolean; code?: string }>(
      await rawPost(join(rig.vaultDir, 'host.sock'), 'entry.ls', {}),
    );
    assert.deepEqual([other.ok, other.code], [false, 'VLT-2054']);
  } finally {
    await terminate(child);
  }
  assert.doesNotMatch(err(), /VLT-/);
  assert.equal(derivations() - from, 1);
});
