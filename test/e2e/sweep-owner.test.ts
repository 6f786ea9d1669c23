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
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CLI, Rig, ok } from '../support/rig.js';

const REAL = { VAULT_TEST_WEAK_KDF: undefined };
const FILES = 40;
const rig = new Rig();
const dir = join(rig.root, 'transcripts');
const values = Array.from({ length: 3 }, () => `sk_live_${randomBytes(16).toString('hex')}`);

/** The passphrase derivations the host has logged so far. */
const derivations = () =>
  readFileSync(join(rig.vaultDir, 'host.log'), 'utf8').split('owner passphrase derived').length - 1;

/** One request on the host's socket from this (test) process, as a raw client would send it. */
function post(op: string, body: object): Promise<{ ok: boolean; code?: string }> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const s = connect(join(rig.vaultDir, 'host.sock'), () => {
      s.write(
        `POST /v1/${op} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n`,
      );
      s.write(payload);
    });
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { ok: boolean });
    });
    s.on('error', reject);
  });
}

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
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // A bound on a hang, not a timing assertion.
  const until = (what: () => boolean, maxMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const gaveUp = Date.now() + maxMs;
      const t = setInterval(() => {
        if (what()) {
          clearInterval(t);
          resolve();
        } else if (child.exitCode !== null || Date.now() > gaveUp) {
          clearInterval(t);
          reject(new Error(`sweep --watch: ${out}\n${err}`));
        }
      }, 50);
    });
  const lines = () => out.split('\n').filter(Boolean).length;
  try {
    await until(() => /watching/.test(err));
    assert.equal(lines(), FILES);
    for (let i = 0; i < 3; i++) {
      const seen = lines();
      appendFileSync(join(dir, `t${i}.jsonl`), `{"text":"again ${values[i]}"}\n`);
      await until(() => lines() > seen);
    }
    // Each leak found is marked in turn (the watch queues a file's sweep and its mark together).
    assert.equal(lines(), FILES + 3);
    // This test's own process, with no passphrase: not the sweep's, so no key.
    const other = await post('entry.ls', {});
    assert.deepEqual([other.ok, other.code], [false, 'VLT-2054']);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
  }
  assert.doesNotMatch(err, /VLT-/);
  assert.equal(derivations() - from, 1);
});
