// A session token's maximum lifetime, on a host whose wall clock libfaketime moves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { installBin, underPty, until } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const skip = LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false;
const rig = new Rig();
const clock = new FakeClock(rig);
let token = '';

before(async () => {
  if (skip) return;
  await clock.start();
  await rig.create();
  await rig.set('X', 'hunter2');
  token = await rig.addAgent('a', ['X']);
  installBin(rig);
});
after(async () => {
  if (!skip) await clock.stop();
  await rig.dispose();
});

test(
  'a session token is refused with VLT-2040 after 12 hours, even while its command runs',
  { skip },
  async () => {
    const file = join(rig.root, 'session');
    const run = underPty(rig, [
      'run',
      '--agent',
      'a',
      '--',
      'sh',
      '-c',
      `printf %s "$VAULT_TOKEN" > ${JSON.stringify(file)}; echo ready; read x`,
    ]);
    await until(() => run.output().includes('ready'), 'the child');
    const session = readFileSync(file, 'utf8');
    assert.equal(ok(await rig.agent(['get', 'X'], session)), 'hunter2\n');
    clock.set(12 * 3600 - 60);
    assert.equal(ok(await rig.agent(['get', 'X'], session)), 'hunter2\n');
    clock.set(12 * 3600 + 60);
    const r = await rig.agent(['get', 'X'], session);
    assert.equal(r.code, 77);
    assert.equal(r.stderr, 'vault-cli: VLT-2040: Token expired.\n');
    assert.equal(ok(await rig.agent(['get', 'X'], token)), 'hunter2\n');
    run.pty.write('\r');
    assert.equal((await run.exited).exitCode, 0);
  },
);

test(
  'an ended session is forgotten a day later, when the next session is minted',
  { skip },
  async () => {
    const file = join(rig.root, 'session-2');
    const script = `printf %s "$VAULT_TOKEN" > ${JSON.stringify(file)}`;
    clock.set(20 * 3600);
    assert.equal(
      (await underPty(rig, ['run', '--agent', 'a', '--', 'sh', '-c', script]).exited).exitCode,
      0,
    );
    const session = readFileSync(file, 'utf8');
    const revoked = await rig.agent(['get', 'X'], session);
    assert.equal(revoked.stderr, 'vault-cli: VLT-2040: Token revoked.\n');

    // Within a day the record is kept (the token still reads "revoked").
    clock.set(20 * 3600 + 23 * 3600);
    assert.equal((await underPty(rig, ['run', '--agent', 'a', '--', 'true']).exited).exitCode, 0);
    assert.equal((await rig.agent(['get', 'X'], session)).stderr, revoked.stderr);

    // A day on, minting a session removes it: the token no longer names anything.
    clock.set(20 * 3600 + 25 * 3600);
    assert.equal((await underPty(rig, ['run', '--agent', 'a', '--', 'true']).exited).exitCode, 0);
    const gone = await rig.agent(['get', 'X'], session);
    assert.equal(gone.code, 77);
    assert.equal(gone.stderr, 'vault-cli: VLT-2040: Invalid token.\n');
  },
);
