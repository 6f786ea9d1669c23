// Guessing the owner's passphrase: every wrong one is audited
// (`passphrase_failed`, with its ordinal since the last unlock) and the next
// attempt waits longer; the count is in the store, so killing and restarting
// the host does not reset it. A token with a known agent id and a wrong secret
// is audited to that agent, not to `cli:?`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { formatToken, parseToken } from '../../src/crypto/token.js';
import { assertRefused, auditRecords, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token = '';

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'gh-value');
  token = await rig.addAgent('bot', ['GitHub']);
});
after(() => rig.dispose());

test('wrong passphrases are audited and counted across a host restart; an unlock resets the count', async () => {
  const wrong = join(rig.root, 'wrong');
  writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
  const env = { VAULT_PASSPHRASE_FILE: wrong };
  for (let i = 0; i < 3; i++) {
    assertRefused(await rig.owner(['entry', 'ls'], { env }), 'VLT-3002', `guess ${i + 1}`);
  }
  // Killed, not stopped: `daemon stop` needs the passphrase, which would reset the count.
  const pid = await hostPid(rig);
  process.kill(pid, 'SIGKILL');
  assert.ok(await waitGone(pid));
  assertRefused(await rig.owner(['entry', 'ls'], { env }), 'VLT-3002', 'after restart');
  const failed = (await auditRecords(rig)).filter((r) => r.action === 'passphrase_failed');
  assert.deepEqual(
    failed.map((r) => [r.actor, r.outcome, r.subject]),
    [1, 2, 3, 4].map((n) => ['owner', 'VLT-3002', `attempt ${n}`]),
  );
  // The unlock above (audit) reset it: the next wrong one is the first again.
  assertRefused(await rig.owner(['entry', 'ls'], { env }), 'VLT-3002', 'after an unlock');
  const last = (await auditRecords(rig)).filter((r) => r.action === 'passphrase_failed').at(-1);
  assert.equal(last?.subject, 'attempt 1');
  // A wrong recovery key counts the same way.
  const next = join(rig.root, 'next');
  writeFileSync(next, 'never set as the passphrase\n', { mode: 0o600 });
  assertRefused(
    await rig.owner(['vault', 'passwd', '--recovery'], {
      input: 'vltr_' + 'x'.repeat(50) + '\n',
      env: { VAULT_PASSPHRASE_FILE: undefined, VAULT_NEW_PASSPHRASE_FILE: next },
    }),
    'VLT-3002',
  );
  const guessed = (await auditRecords(rig)).filter((r) => r.action === 'passphrase_failed');
  // (The audit listing before it unlocked again: the count started over.)
  assert.equal(guessed.at(-1)?.subject, 'attempt 1');
  assert.equal(guessed.length, 6);
});

test('a known agent id with a wrong secret is refused and audited to that agent', async () => {
  const parsed = parseToken(token);
  assert.ok(parsed !== null);
  const forged = formatToken(Buffer.from(parsed.agentId, 'hex'), randomBytes(32));
  assertRefused(await rig.agent(['get', 'GitHub'], forged), 'VLT-2040');
  const last = (await auditRecords(rig)).at(-1);
  assert.equal(last?.action, 'denied');
  assert.equal(last?.actor, 'cli:bot');
  assert.equal(last?.outcome, 'VLT-2040');
  assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh-value\n');
});
