// Guessing the owner's passphrase through the host costs the guesser, not the
// owner (issue 29). Every wrong guess used to wait in one queue per host, each
// delay doubling up to 30 s: a process keeping 8 wrong guesses queued made the
// owner's `agent lock` take 225 s. The delay is now its guesser's: one
// process's guesses still slow down, one after the other, while the owner's
// command from another process is checked at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { VaultError } from '../../src/core/errors.js';
import { auditRecords } from '../support/e2e-helpers.js';
import { CLI, Rig, ok } from '../support/rig.js';

const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'gh-value');
  await rig.addAgent('bot', ['GitHub']);
});
after(() => rig.dispose());

test('8 queued wrong guesses from one process: the owner’s command is answered while they still wait', async () => {
  const client = {
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: rig.env },
  };
  // Eight guesses sent at once from this process, each on its own connection.
  const answers: string[] = [];
  const guesses = Array.from({ length: 8 }, (_, i) =>
    call(client, 'entry.ls', { passphrase: `wrong guess number ${i}` }).then(
      () => answers.push('accepted'),
      (err: unknown) => answers.push(err instanceof VaultError ? err.code : String(err)),
    ),
  );
  // The first ones are answered quickly (no delay earned yet); the rest each
  // wait twice as long as the one before: together about 30 s more.
  while (answers.length < 3) await new Promise((r) => setTimeout(r, 20));

  ok(await rig.owner(['agent', 'lock', 'bot']));
  const answeredBeforeOwner = answers.length;

  // The guesser still waits: the owner did not queue behind its guesses (and
  // its guesses were not sped up by the owner's unlock).
  assert.ok(
    answeredBeforeOwner < 8,
    `all 8 guesses were answered before the owner's command (${answers.join(', ')})`,
  );
  assert.deepEqual(
    answers.slice(0, answeredBeforeOwner),
    Array<string>(answeredBeforeOwner).fill('VLT-3002'),
  );
  // Every guess answered so far is audited, and the owner's lock after them.
  const audit = await auditRecords(rig);
  const lock = audit.findIndex((r) => r.action === 'agent_lock');
  assert.ok(lock >= 0, 'the owner’s lock is not in the audit log');
  const failedBefore = audit.slice(0, lock).filter((r) => r.action === 'passphrase_failed');
  assert.ok(failedBefore.length >= 3 && failedBefore.length <= answeredBeforeOwner);
  // The host stopping answers the guesses still waiting.
  await rig.stop();
  await Promise.all(guesses);
  assert.equal(answers.length, 8);
  assert.ok(!answers.includes('accepted'));
});
