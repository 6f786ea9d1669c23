// A host that refuses, never dies, and says why (issue 29): its idle stop,
// failed commits, oversize bodies, kills during its start-up scan and bad
// backup paths each end in a clear refusal, never in a dead host or VLT-3007.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { call } from '../../src/client/client.js';
import { VaultError } from '../../src/core/errors.js';
import {
  alive,
  assertRefused,
  hostPid,
  hostProcesses,
  settleHosts,
  waitGone,
} from '../support/e2e-helpers.js';
import { storeFile } from '../support/store-damage.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import { canMount, mountTmpfs, unmount } from '../support/tmpfs.js';
// Below the Store API on purpose: a header that does not decode cannot be written through it.
// eslint-disable-next-line no-restricted-imports
import { open } from 'lmdb';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The client connects, the host's idle stop closes and unlinks the socket,
// then the owner's host check finds no socket (a raw ENOENT: VLT-3007) or a
// process that no longer holds the lock (VLT-3010). Owner calls are timed
// into the stop of a host with a short idle timeout: each one succeeds, or at
// worst says the host stopped (VLT-3005).
test('owner commands timed into the idle stop: successes or VLT-3005, never VLT-3007 or VLT-3010', async (t) => {
  const IDLE_MS = 250;
  // 100 trials on four vaults at once: four hosts stopping and starting.
  const VAULTS = 4;
  const TRIALS = 25;
  const outcomes = new Map<string, number>();
  const trials = async (rig: Rig) => {
    await rig.create();
    await rig.stop();
    const client = {
      vaultDir: rig.vaultDir,
      daemon: {
        node: process.execPath,
        script: CLI,
        env: { ...rig.env, VAULT_HOST_IDLE_MS: String(IDLE_MS) },
      },
    };
    for (let i = 0; i < TRIALS; i++) {
      let outcome = 'ok';
      try {
        await call(client, 'entry.ls', { passphrase: PASSPHRASE });
      } catch (err) {
        outcome = err instanceof VaultError ? err.code : `raw ${String(err)}`;
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      // Land the next call around the moment the idle timer fires.
      await sleep(IDLE_MS - 40 + ((i * 37) % 80));
    }
  };
  const rigs = Array.from({ length: VAULTS }, () => new Rig());
  try {
    await Promise.all(rigs.map(trials));
  } finally {
    await Promise.all(rigs.map((r) => r.dispose()));
  }
  const seen = JSON.stringify([...outcomes]);
  t.diagnostic(`outcomes over ${VAULTS * TRIALS} trials: ${seen}`);
  for (const outcome of outcomes.keys()) {
    assert.ok(outcome === 'ok' || outcome === 'VLT-3005', seen);
  }
});

/**
 * Mounts a small ext4 image (loop device, errors=remount-ro) on `dir` and
 * returns a function that makes it fail as a disk error does: ext4 turns the
 * file system read-only under the files the host holds open.
 */
function mountExt4(root: string, dir: string): () => void {
  const image = join(root, 'disk.img');
  writeFileSync(image, '');
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  run('truncate', ['-s', '32M', image]);
  run('mkfs.ext4', ['-q', '-F', image]);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  run('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
  const device = basename(run('findmnt', ['-n', '-o', 'SOURCE', dir]).trim());
  return () => writeFileSync(`/sys/fs/ext4/${device}/trigger_fs_error`, '1');
}

const ext4 =
  canMount() && spawnSync('mkfs.ext4', ['-V']).status === 0
    ? false
    : 'needs mount privileges and mkfs.ext4';

// Today the first failed commit is also an unhandled rejection from lmdb-js
// (its second promise, `commitError`), and the host dies; every later command
// is VLT-3007, since the client cannot open host.log to start another.
test(
  'a disk error turns the file system read-only: the host lives and refuses, naming why',
  { skip: ext4 },
  async () => {
    const rig = new Rig();
    const fail = mountExt4(rig.root, rig.vaultDir);
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      const token = await rig.addAgent('reader', ['A']);
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');
      const pid = await hostPid(rig);
      fail();
      for (let i = 0; i < 3; i++) {
        const why = assertRefused(await rig.agent(['get', 'A'], token), 'VLT-3004', `read ${i}`);
        assert.match(why, /read-only/);
      }
      const write = assertRefused(
        await rig.owner(['entry', 'set', 'B'], { input: 'value-b' }),
        'VLT-3004',
        'owner write',
      );
      assert.match(write, /read-only/);
      assert.ok(alive(pid), 'the host died after a failed commit');
      assert.equal(await hostPid(rig), pid);
      assert.doesNotMatch(
        readFileSync(join(rig.vaultDir, 'host.log'), 'utf8'),
        /Unhandled|uncaught/i,
      );
      process.kill(pid, 'SIGKILL');
      // No host now, and none can be started in a read-only directory: the client says why.
      const r = await rig.agent(['get', 'A'], token);
      const message = assertRefused(r, 'VLT-3005', 'start on a read-only directory');
      assert.match(message, /the vault directory \S+ is not writable \(EROFS\)/);
    } finally {
      unmount(rig.vaultDir);
      await rig.dispose();
    }
  },
);

// The body limit (4 MiB) used to close the connection without a reply: the
// client, still writing, said the host had stopped (VLT-3005).
test('a value over the body limit is refused with VLT-1002, and the host goes on', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    const pid = await hostPid(rig);
    const big = Buffer.alloc(6 * 1024 * 1024, 0x61);
    const r = await rig.owner(['entry', 'set', 'BIG'], { input: big });
    assertRefused(r, 'VLT-1002', 'a 6 MiB value');
    await rig.set('SMALL', 'fits');
    assert.equal(await hostPid(rig), pid);
  } finally {
    await rig.dispose();
  }
});

const scratchDirs = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.check-'));

// The start-up scan's worker copies the store into `.check-<pid>/` for its
// write probe; a host killed with its worker mid-scan left that copy for good.
test('kills during the start-up scan leave no .check-* directory after the next start', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    // A store of some megabytes: its copy takes long enough to be caught.
    for (let i = 0; i < 8; i++) await rig.set(`E${i}`, Buffer.alloc(1024 * 1024, 0x61 + i));
    await rig.stop();
    // The stop closed the store cleanly: without this the next start trusts
    // the unchanged file and does not scan (store/lmdb/known-good.ts).
    rmSync(join(rig.vaultDir, 'vault.mdb.known-good'), { force: true });
    let killed = 0;
    for (let round = 0; round < 3; round++) {
      const host = spawn(process.execPath, [CLI, 'daemon'], { env: rig.env, stdio: 'ignore' });
      let worker: number | undefined;
      const until = Date.now() + 20_000;
      while (worker === undefined && Date.now() < until && host.exitCode === null) {
        const name = scratchDirs(rig.vaultDir)[0];
        if (name !== undefined) worker = Number(name.slice('.check-'.length));
        else await new Promise((r) => setImmediate(r));
      }
      host.kill('SIGKILL');
      if (worker !== undefined) {
        try {
          process.kill(worker, 'SIGKILL');
        } catch {
          // it had finished
        }
        killed++;
      }
      assert.ok(await waitGone(host.pid ?? 0));
      if (worker !== undefined) assert.ok(await waitGone(worker));
    }
    assert.ok(killed > 0, 'no kill landed during the scan');
    assert.ok(scratchDirs(rig.vaultDir).length > 0, 'the kills left no scratch copy to clean');
    ok(await rig.owner(['entry', 'ls']));
    assert.deepEqual(scratchDirs(rig.vaultDir), []);
  } finally {
    await rig.dispose();
  }
});

// These were VLT-3007 (EISDIR, ENOENT in the host log), and `vault backup`
// created missing parent directories without a word.
test('a backup or archive to a directory or an unwritable path is refused naming the path and why', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    const dir = join(rig.root, 'out');
    mkdirSync(dir);
    const intoDir = assertRefused(
      await rig.owner(['vault', 'backup', dir]),
      'VLT-1002',
      'backup to a directory',
    );
    assert.ok(intoDir.includes(dir) && /directory/.test(intoDir), intoDir);
    const missing = join(rig.root, 'nowhere', 'b.mdb');
    const noParent = assertRefused(
      await rig.owner(['vault', 'backup', missing]),
      'VLT-1002',
      'backup into a missing directory',
    );
    assert.ok(noParent.includes(missing) && /does not exist/.test(noParent), noParent);
    assert.equal(
      existsSync(join(rig.root, 'nowhere')),
      false,
      'backup created the missing directory',
    );
    const archive = assertRefused(
      await rig.owner(['audit', 'archive', '--before', '0m', dir]),
      'VLT-1002',
      'archive to a directory',
    );
    assert.ok(archive.includes(dir), archive);
    // And a good path still works.
    ok(await rig.owner(['vault', 'backup', join(dir, 'b.mdb')]));
  } finally {
    await rig.dispose();
  }
});

// A header that does not decode used to throw from the host's start after its
// socket listened: the host served half-started (VLT-3007 in its log), with
// no signal handlers, and no idle stop until a connection armed it.
test('a store header that does not decode: the host starts whole, refuses with the damage code, and stops when told', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    await rig.set('A', 'value-a');
    const token = await rig.addAgent('reader', ['A']);
    await rig.stop();
    assert.deepEqual(await settleHosts(rig.vaultDir, 0), []);
    const raw = open({ path: storeFile(rig.vaultDir), encoding: 'binary', compression: false });
    // 0xc1 is the one byte msgpack never uses.
    await raw.put('header', Buffer.from([0xc1, 0xc1]));
    await raw.close();

    const read = assertRefused(await rig.agent(['get', 'A'], token), 'VLT-3034');
    assert.match(read, /cannot be read/);
    const [pid] = hostProcesses(rig.vaultDir);
    assert.ok(pid !== undefined, 'no host serves the vault');
    const check = await rig.owner(['vault', 'check']);
    assert.notEqual(check.code, 0);
    assert.doesNotMatch(check.stdout + check.stderr, /VLT-3007/);
    assert.match(check.stdout + check.stderr, /VLT-30(30|34)/);
    // Started whole: the daemon's signal handlers stop it as they stop any host.
    process.kill(pid, 'SIGTERM');
    assert.ok(await waitGone(pid), 'the host did not stop on SIGTERM');
    const log = readFileSync(join(rig.vaultDir, 'host.log'), 'utf8');
    const own = log.split('\n').filter((l) => l.includes(`vault-host[${pid}]`));
    assert.match(own.join('\n'), /the store cannot be used as it is \(VLT-3034/);
    assert.match(own.at(-1) ?? '', /stopped$/);
    assert.doesNotMatch(log, /VLT-3007|Unhandled|uncaught/i);
  } finally {
    await rig.dispose();
  }
});

/** Fills the file system holding `dir` but for `spare` bytes. */
function fill(dir: string, spare: number): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    ftruncateSync(fd, Math.max(0, fstatSync(fd).size - spare));
  } finally {
    closeSync(fd);
  }
  return path;
}

// An owner write of a value near the reserve's size used to succeed and
// leave less than the reserve: every later request, \`entry rm\` included, was
// refused until the file system grew. And a commit that meets ENOSPC after the
// check passed (here: setting a small field re-seals the entry's two 1 MiB fields,
// which the check does not count) must leave the host alive and refusing.
test(
  'a write larger than the room beyond the reserve is refused and the vault stays usable; ENOSPC at the commit leaves the host refusing, then serving once freed',
  { skip: canMount() ? false : 'needs permission to mount (root)' },
  async () => {
    const MiB = 1024 * 1024;
    const rig = new Rig();
    mountTmpfs(rig.vaultDir, 10 * 1024);
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      // Values are at most 1 MiB: two of them, re-sealed together by any set on the entry.
      await rig.set('Big', Buffer.alloc(MiB, 0x62), 'one');
      await rig.set('Big', Buffer.alloc(MiB, 0x63), 'two');
      const token = await rig.addAgent('reader', ['A']);
      const pid = await hostPid(rig);
      // 1.5 MiB free: the 1 MiB reserve and half a MiB beyond it.
      const filler = fill(rig.vaultDir, 1.5 * MiB);

      const big = assertRefused(
        await rig.owner(['entry', 'set', 'Huge'], { input: Buffer.alloc(MiB, 0x68) }),
        'VLT-3013',
        'a 1 MiB value with 0.5 MiB beyond the reserve',
      );
      assert.match(big, /Nothing was changed/);
      // Still usable: reads, a small write, a removal.
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');
      await rig.set('C', 'value-c');
      ok(await rig.owner(['entry', 'rm', 'C']));

      // Past the check, into ENOSPC at the commit.
      const full = assertRefused(
        await rig.owner(['entry', 'set', 'Big', '--field', 'note'], { input: 'small' }),
        'VLT-3004',
        're-sealing two 1 MiB fields',
      );
      assert.match(full, /full \(ENOSPC\)/);
      assert.ok(alive(pid), 'the host died at a failed commit');
      const read = await rig.agent(['get', 'A'], token);
      if (read.code !== 0) assertRefused(read, 'VLT-3004', 'a read on the full disk');

      rmSync(filler);
      await rig.set('Big', 'small now', 'note');
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');
      assert.equal(await hostPid(rig), pid);
      ok(await rig.owner(['audit', '--verify']));
    } finally {
      await rig.stop();
      unmount(rig.vaultDir);
      await rig.dispose();
    }
  },
);

// A cold start under load took longer than the client's fixed 10 s wait, and
// the client said "could not be started" of a host that came up a moment
// later. Here the start is stalled outright: the daemon the client spawned is
// stopped (SIGSTOP) before it listens, for longer than that wait, then let go.
test('a cold start that takes longer than 10 s still serves the command that started it', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    await rig.set('A', 'value-a');
    const token = await rig.addAgent('reader', ['A']);
    await rig.stop();
    assert.deepEqual(await settleHosts(rig.vaultDir, 0), []);
    const socket = join(rig.vaultDir, 'host.sock');
    const started = rig.agent(['get', 'A'], token);
    let stalled: number | undefined;
    const until = Date.now() + 20_000;
    while (stalled === undefined && Date.now() < until) {
      const [pid] = hostProcesses(rig.vaultDir);
      if (pid !== undefined) {
        process.kill(pid, 'SIGSTOP');
        stalled = pid;
      } else await new Promise((r) => setImmediate(r));
    }
    assert.ok(stalled !== undefined, 'no daemon was started');
    assert.ok(!existsSync(socket), 'the daemon was already listening when stalled');
    await sleep(12_000);
    process.kill(stalled, 'SIGCONT');
    assert.equal(ok(await started), 'value-a\n');
    assert.equal(await hostPid(rig), stalled);
  } finally {
    await rig.dispose();
  }
});
