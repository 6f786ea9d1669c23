// Secrets typed at a prompt, under a real pseudo-terminal, one key at a time:
// the passphrase of `vault create`, a value for `entry set`, the token for
// `init`. Nothing typed is echoed, the command succeeds and the value reads
// back; a mismatched confirmation or a missing terminal writes nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, hex } from '../support/e2e-helpers.js';
import { underPty, until, type PtyRun } from '../support/pty.js';
import { CLI, PASSPHRASE, Rig, fate, ok, type Result } from '../support/rig.js';

/** The owner with no passphrase file: every passphrase comes from the prompt. */
const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };

/** Waits for `prompt` to be shown a `nth` time, then types `text` one key at a time and Enter. */
async function typeAt(run: PtyRun, prompt: string, text: string, nth = 1): Promise<void> {
  await until(() => run.output().split(prompt).length > nth, JSON.stringify(prompt));
  for (const key of text) run.pty.write(key);
  run.pty.write('\r');
}

/**
 * Runs the CLI in a new session, so it has no controlling terminal even when
 * the tests are started from one; stdin, stdout and stderr are pipes.
 */
function withoutTerminal(
  rig: Rig,
  args: readonly string[],
  env: Record<string, string | undefined>,
  input = '',
): Promise<Result> {
  const merged: NodeJS.ProcessEnv = { ...rig.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: merged,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    fate(child).then(resolve, reject);
    child.stdin.end(input);
  });
}

const NO_TERMINAL =
  'No terminal to prompt on; pipe the value on stdin or set VAULT_PASSPHRASE_FILE.';

const fresh = new Rig();
const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('Old', 'old-value');
});
after(async () => {
  await fresh.dispose();
  await rig.dispose();
});

test('vault create: the passphrase typed twice at the prompt, never echoed', async () => {
  const vaultFiles = () => (existsSync(fresh.vaultDir) ? readdirSync(fresh.vaultDir) : []);

  const differ = underPty(fresh, ['vault', 'create'], PROMPTED);
  await typeAt(differ, 'Vault passphrase: ', PASSPHRASE);
  await typeAt(differ, 'Vault passphrase (again): ', PASSPHRASE + 'x');
  const differed = await differ.exited;
  assert.equal(differed.exitCode, 65, differed.output);
  assert.match(differed.output, /vault-cli: VLT-1002: The two entries differ\.\r\n$/);
  assert.ok(!differed.output.includes(PASSPHRASE), differed.output);
  assert.deepEqual(vaultFiles(), []);

  const piped = await withoutTerminal(fresh, ['vault', 'create'], PROMPTED, PASSPHRASE + '\n');
  assert.equal(assertRefused(piped, 'VLT-1003'), NO_TERMINAL);
  assert.deepEqual(vaultFiles(), []);
  assertRefused(await fresh.owner(['entry', 'ls']), 'VLT-3001', 'no vault was created');

  const create = underPty(fresh, ['vault', 'create'], PROMPTED);
  await typeAt(create, 'Vault passphrase: ', PASSPHRASE);
  await typeAt(create, 'Vault passphrase (again): ', PASSPHRASE);
  // On a terminal, create offers to enrol a hardware key (key-offer.ts): not now.
  await typeAt(create, 'Enrol a hardware key now? [y/N] ', 'n');
  const created = await create.exited;
  assert.equal(created.exitCode, 0, created.output);
  assert.match(created.output, /vault-cli: vault created in /);
  assert.ok(!created.output.includes(PASSPHRASE), created.output);

  // The vault opens with exactly what was typed (the rig's passphrase file), and no other.
  await fresh.set('Typed', 'typed-value');
  const token = await fresh.addAgent('a', ['Typed']);
  assert.equal(ok(await fresh.agent(['get', 'Typed'], token)), 'typed-value\n');
  const almost = join(fresh.root, 'almost');
  writeFileSync(almost, PASSPHRASE.slice(0, -1) + '\n', { mode: 0o600 });
  const wrong = await fresh.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: almost } });
  assertRefused(wrong, 'VLT-3002');
});

test('entry set: the value typed at the prompt, with a correction, never echoed', async () => {
  const value = `typed-${hex()}`;
  const set = underPty(rig, ['entry', 'set', 'Typed', '--field', 'key']);
  // A wrong last key, rubbed out with Backspace (DEL), as a user corrects a typo.
  await typeAt(set, 'Value for Typed/key: ', value + 'Z\x7f');
  await typeAt(set, 'Value for Typed/key (again): ', value);
  const fate = await set.exited;
  assert.equal(fate.exitCode, 0, fate.output);
  assert.match(fate.output, /vault-cli: created "Typed" field key/);
  assert.ok(!fate.output.includes(value), fate.output);

  const token = await rig.addAgent('reader', ['Typed', 'Old']);
  assert.equal(ok(await rig.agent(['get', 'Typed', '--field', 'key'], token)), value + '\n');
});

test('entry set: the value and its confirmation pasted in one go both count', async () => {
  const value = `pasted-${hex()}`;
  const set = underPty(rig, ['entry', 'set', 'Pasted']);
  await until(() => set.output().includes('Value for Pasted/password: '), 'the prompt');
  // Keys after the first Enter answer the confirmation; none is dropped or echoed.
  set.pty.write(`${value}\r${value}\r`);
  let exited = false;
  void set.exited.then(() => (exited = true));
  try {
    await until(() => exited, 'entry set to end (a dropped confirmation leaves it waiting)');
  } finally {
    if (!exited) set.pty.kill();
  }
  const fate = await set.exited;
  assert.equal(fate.exitCode, 0, fate.output);
  assert.ok(!fate.output.includes(value), fate.output);
  const token = await rig.addAgent('paste-reader', ['Pasted']);
  assert.equal(ok(await rig.agent(['get', 'Pasted'], token)), value + '\n');
});

test('entry set: a mismatched confirmation or no terminal changes nothing', async () => {
  const value = `typed-${hex()}`;
  const set = underPty(rig, ['entry', 'set', 'Old']);
  await typeAt(set, 'Value for Old/password: ', value);
  await typeAt(set, 'Value for Old/password (again): ', value.slice(0, -1));
  const fate = await set.exited;
  assert.equal(fate.exitCode, 65, fate.output);
  assert.match(fate.output, /vault-cli: VLT-1002: The two entries differ\.\r\n$/);
  assert.ok(!fate.output.includes(value.slice(0, -1)), fate.output);

  // Owner with no passphrase file and no terminal: refused before the piped value is read.
  const piped = await withoutTerminal(rig, ['entry', 'set', 'Old'], PROMPTED, value);
  assert.equal(assertRefused(piped, 'VLT-1003'), NO_TERMINAL);

  const token = await rig.addAgent('checker', ['Old']);
  assert.equal(ok(await rig.agent(['get', 'Old'], token)), 'old-value\n');
  const shown = JSON.parse(ok(await rig.owner(['entry', 'show', 'Old', '--json']))) as {
    fields: { name: string; version: number }[];
  };
  assert.deepEqual(
    shown.fields.map((f) => [f.name, f.version]),
    [['password', 1]],
  );
});

test('init: the token typed at the prompt, never echoed, stored and used by get', async () => {
  const tokenFile = join(rig.configDir, 'token');
  const token = await rig.addAgent('typist', ['Old']);

  const bad = underPty(rig, ['init'], PROMPTED);
  await typeAt(bad, 'Token: ', token.slice(0, -1));
  const refused = await bad.exited;
  assert.equal(refused.exitCode, 77, refused.output);
  assert.match(refused.output, /vault-cli: VLT-2040: /);
  assert.ok(!refused.output.includes(token.slice(0, -1)), refused.output);
  assert.equal(existsSync(tokenFile), false);

  // No terminal: the token comes from stdin, and an empty stdin is no token.
  const piped = await withoutTerminal(rig, ['init'], PROMPTED);
  assertRefused(piped, 'VLT-2040');
  assert.equal(existsSync(tokenFile), false);

  const init = underPty(rig, ['init'], PROMPTED);
  await typeAt(init, 'Token: ', token);
  const fate = await init.exited;
  assert.equal(fate.exitCode, 0, fate.output);
  assert.match(fate.output, /vault-cli: initialised as agent typist/);
  assert.ok(!fate.output.includes(token), fate.output);
  // No VAULT_TOKEN: get reads the token init stored.
  assert.equal(ok(await rig.agent(['get', 'Old'])), 'old-value\n');
});
