// Issue 24: a stand-in host in a mount namespace of its own. With no
// privilege, `unshare -Urm` and a bind mount of the attacker's script over
// main.js give a process whose cmdline, exe, environ, maps, host lock and peer
// uid all match the real host's. The owner's client compares the listener's
// mount and user namespaces with its own and sends it nothing.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lockHolders } from '../../src/client/host-check.js';
import { assertRefused, waitGone } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';

/** Whether this machine lets a process make its own user and mount namespaces. */
const unshareWorks =
  spawnSync('unshare', ['-Urm', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;

/**
 * The attacker's host: it takes the vault's host lock and socket as the real
 * host does, and keeps every byte it is sent. It runs as main.js (bind-mounted
 * over it), so the project's own lock helper is one relative import away.
 */
const STAND_IN = `
import { createServer } from 'node:net';
import { appendFileSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryLock } from '../kernel/unix.js';
const dir = process.env.VAULT_DIR;
const capture = process.env.STAND_IN_CAPTURE;
if (!tryLock(openSync(join(dir, 'host.lock'), 'a', 0o600))) process.exit(3);
rmSync(join(dir, 'host.sock'), { force: true });
createServer((c) => c.on('data', (d) => appendFileSync(capture, d))).listen(join(dir, 'host.sock'), () =>
  writeFileSync(capture + '.ready', String(process.pid)),
);
`;

const rig = new Rig();
let standIn: ChildProcess | null = null;
const capture = join(rig.root, 'captured');

before(async () => {
  await rig.create();
  await rig.set('A', 'value-a');
  await rig.stop();
});
after(async () => {
  if (standIn?.pid !== undefined) {
    standIn.kill('SIGKILL');
    await waitGone(standIn.pid);
  }
  await rig.dispose();
});

test(
  'a stand-in bind-mounted over main.js in its own namespaces gets VLT-3010 and never the passphrase',
  {
    skip: unshareWorks ? false : 'unshare -Urm is not permitted here',
    // Without the check the client writes to the stand-in and waits for a reply that never comes.
    timeout: 60_000,
  },
  async () => {
    const script = join(rig.root, 'stand-in.js');
    writeFileSync(script, STAND_IN);
    standIn = spawn(
      'unshare',
      [
        '-Urm',
        'sh',
        '-c',
        'mount --bind "$1" "$2" && exec "$3" "$2" daemon',
        'sh',
        script,
        CLI,
        process.execPath,
      ],
      { env: { ...rig.env, STAND_IN_CAPTURE: capture }, stdio: 'ignore' },
    );
    for (let i = 0; i < 600 && !existsSync(`${capture}.ready`); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(existsSync(`${capture}.ready`), 'the stand-in listens');
    const pid = Number(readFileSync(`${capture}.ready`, 'utf8'));
    // It passes what the check asked before: it holds the lock, and its cmdline
    // is the real host's, with this installation's main.js.
    assert.deepEqual(lockHolders(join(rig.vaultDir, 'host.lock')), [pid]);
    assert.deepEqual(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1), [
      process.execPath,
      CLI,
      'daemon',
    ]);
    const msg = assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3010');
    assert.match(msg, /mnt namespace of its own/);
    const sent = existsSync(capture) ? readFileSync(capture, 'utf8') : '';
    assert.doesNotMatch(sent, new RegExp(PASSPHRASE));
    assert.equal(sent, '', 'nothing was written to the stand-in');
    // The real host, once the stand-in is gone, is accepted.
    standIn.kill('SIGKILL');
    assert.ok(await waitGone(pid));
    standIn = null;
    assert.match(ok(await rig.owner(['entry', 'ls'])), /^A\b/m);
  },
);
