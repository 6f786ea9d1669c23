// `run`'s session directory ($TMPDIR/vault-cli-run-XXXXXX, src/cli/run/run-dir.ts):
// one left by a `run` killed with SIGKILL is removed by the next `run`, and so
// are an older `run`'s (no lock) whose proxy socket answers no one or that has
// none and is a day old; a live `run`'s, a symlink, another directory under the
// prefix, an older `run`'s whose proxy answers or that is young are left alone. Every `run` here
// gets a TMPDIR of its own, in the rig's root: the real /tmp is not looked at.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { installBin, runScript, until, type PtyRun } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const skip = !existsSync('/usr/bin/bwrap') && 'needs bubblewrap';
const rig = new Rig();
const tmp = join(rig.root, 'tmp');

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.addAgent('a', ['X']);
  installBin(rig);
  mkdirSync(tmp, { mode: 0o700 });
});
after(() => rig.dispose());

const runDirs = () => readdirSync(tmp).filter((n) => n.startsWith('vault-cli-run-'));

/** A `run` whose command says it started, then waits; resolves once it has, with the directory it made. */
async function started(): Promise<{ run: PtyRun; dir: string }> {
  const before = new Set(runDirs());
  const run = runScript(rig, 'echo "started=1"; sleep 600', { env: { TMPDIR: tmp } });
  await until(() => run.output().includes('started=1'), 'the command inside');
  const made = runDirs().filter((n) => !before.has(n));
  assert.equal(made.length, 1, `one new run directory: ${made.join(' ')}`);
  return { run, dir: made[0] as string };
}

/** A socket file nobody listens on: its process bound it and was killed before closing it. */
async function deadSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  await new Promise((resolve) => child.once('exit', resolve));
  assert.ok(existsSync(path), 'the dead socket file stays');
}

/** A directory as an older `run` (no run.lock) leaves it: its CA and proxy socket. */
function olderRunDir(name: string): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'ca.pem'), 'not a real certificate\n');
  return dir;
}

test(
  'a run killed with SIGKILL leaves its directory; the next run removes it and leaves the rest alone',
  { skip, timeout: 180_000 },
  async () => {
    // Live for the whole test: its directory must survive every sweep.
    const live = await started();
    let listening: Server | undefined;
    try {
      const killed = await started();
      process.kill(killed.run.pty.pid, 'SIGKILL');
      await killed.run.exited;
      assert.ok(existsSync(join(tmp, killed.dir)), 'the killed run left its directory');

      // An older run's directory, its run gone (the proxy socket answers no one) ...
      await deadSocket(join(olderRunDir('vault-cli-run-Older1'), 'proxy.sock'));
      // ... and one whose proxy still answers: its run may live.
      const answering = join(olderRunDir('vault-cli-run-Older2'), 'proxy.sock');
      listening = createServer((c) => c.destroy());
      const server = listening;
      await new Promise<void>((resolve) => server.listen(answering, resolve));
      // One with no proxy socket: gone once a day old, kept before (its run may be asking for the passphrase).
      const aDayAgo = (Date.now() - 25 * 3_600_000) / 1000;
      utimesSync(olderRunDir('vault-cli-run-Older3'), aDayAgo, aDayAgo);
      olderRunDir('vault-cli-run-Fresh1');
      // Not a run's: a symlink to a directory of the shape, and a directory holding something else.
      const elsewhere = join(rig.root, 'elsewhere');
      mkdirSync(elsewhere, { mode: 0o700 });
      writeFileSync(join(elsewhere, 'ca.pem'), 'kept\n');
      symlinkSync(elsewhere, join(tmp, 'vault-cli-run-Linked'));
      const foreign = olderRunDir('vault-cli-run-Notes1');
      writeFileSync(join(foreign, 'notes.txt'), 'mine\n');

      const next = await runScript(rig, 'echo "next=1"', { env: { TMPDIR: tmp } }).exited;
      assert.equal(next.exitCode, 0, next.output);
      assert.deepEqual(
        runDirs().sort(),
        [
          live.dir,
          'vault-cli-run-Fresh1',
          'vault-cli-run-Linked',
          'vault-cli-run-Notes1',
          'vault-cli-run-Older2',
        ].sort(),
      );
      assert.ok(existsSync(join(elsewhere, 'ca.pem')), 'the symlink was not followed');
      assert.ok(existsSync(join(foreign, 'notes.txt')));
      assert.ok(existsSync(join(tmp, live.dir, 'proxy.sock')), 'the live run keeps what it uses');
    } finally {
      listening?.close();
      live.run.pty.kill('SIGTERM');
      await live.run.exited;
    }
    assert.ok(!runDirs().includes(live.dir), 'a run that ends removes its own directory');
  },
);
