// Issue 38: three passphrase tries at the terminal, as sudo and op give:
// a slip is asked again; the third wrong one is final (VLT-3002), and every
// wrong one is audited. Real CLI under a pty, no passphrase file.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRecords } from '../support/e2e-helpers.js';
import { underPty, until } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';

const rig = new Rig();
const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const PROMPT = 'Vault passphrase';

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'ghp-tries-7e21');
});
after(() => rig.dispose());

/** Runs `entry ls` at a terminal and answers each prompt with the next of `answers`. */
async function typing(answers: readonly string[]) {
  const run = underPty(rig, ['entry', 'ls'], PROMPTED);
  for (let i = 0; i < answers.length; i++) {
    await until(() => run.output().split(PROMPT).length - 1 > i, `prompt ${i + 1}`);
    run.pty.write(`${answers[i]}\r`);
  }
  return run.exited;
}

test('two wrong passphrases, then the right one: the command runs', async () => {
  const before = (await auditRecords(rig)).length;
  const fate = await typing(['wrong one', 'wrong two', PASSPHRASE]);
  assert.equal(fate.exitCode, 0, fate.output);
  assert.match(fate.output, /wrong passphrase \(1 of 3 tries\); try again/);
  assert.match(fate.output, /wrong passphrase \(2 of 3 tries\); try again/);
  assert.match(fate.output, /GitHub/);
  const failed = (await auditRecords(rig))
    .slice(before)
    .filter((r) => r.action === 'passphrase_failed');
  assert.equal(failed.length, 2);
});

test('three wrong passphrases: VLT-3002, no fourth prompt', async () => {
  const fate = await typing(['bad 1', 'bad 2', 'bad 3']);
  assert.equal(fate.exitCode, 77, fate.output);
  assert.match(fate.output, /vault-cli: VLT-3002: /);
  assert.equal(fate.output.split(PROMPT).length - 1, 3);
});
