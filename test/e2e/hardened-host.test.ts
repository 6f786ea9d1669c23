// Issue 16, hardened mode: `host install` as root makes a host user and group;
// an unprivileged user of the group (useradd here, removed after) is the owner
// and runs an agent. As that user: the store and the host's /proc are
// unreadable, the host cannot be signalled, the socket cannot be replaced,
// `daemon stop` is refused without the passphrase, owner commands work with
// it, and audit records carry the kernel's pid and uid. Needs root (CI runs
// as root); skipped otherwise.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { alive, hex, waitGone } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, fate, ok, type Result } from '../support/rig.js';

const root = process.getuid?.() === 0;
const tools = ['useradd', 'userdel', 'groupdel', 'setpriv', 'getent'].every(
  (t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0,
);
const skip = !root
  ? 'needs root: it creates system users (CI runs as root)'
  : !tools
    ? 'needs useradd, userdel, groupdel, setpriv and getent'
    : false;

const id = (flag: string, name: string) =>
  Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());

describe('hardened host: its own user, the agent user in its group', { skip }, () => {
  const suffix = hex(3);
  const hostUser = `vlth${suffix}`;
  const group = `vltg${suffix}`;
  const user = `vltu${suffix}`;
  const outsider = `vltx${suffix}`;
  const T = mkdtempSync(join(tmpdir(), 'vault-cli-hardened-'));
  const state = join(T, 'state');
  const sockDir = join(T, 'run');
  const config = join(T, 'etc', 'host.json');
  const home = join(T, 'home');
  let uid = -1;
  let gid = -1;
  let host: ChildProcess | null = null;
  let hostPid = -1;

  const rootEnv = { PATH: process.env.PATH, HOME: T, LANG: 'C.UTF-8', VAULT_HOST_CONFIG: config };
  const userEnv = (more: Record<string, string> = {}) => ({
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    VAULT_HOST_CONFIG: config,
    VAULT_CONFIG_DIR: join(home, 'config'),
    ...more,
  });
  const owner = () => userEnv({ VAULT_PASSPHRASE_FILE: join(home, 'pass') });

  /** Runs `cmd` as the unprivileged user, with its groups. */
  function asUser(cmd: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Result> {
    const child = spawn(
      'setpriv',
      [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--', ...cmd],
      { env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const f = fate(child);
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    return f;
  }
  const cli = (args: string[], env: NodeJS.ProcessEnv, input = '') =>
    asUser([process.execPath, CLI, ...args], env, input);
  const asRoot = (args: string[]) =>
    fate(
      spawn(process.execPath, [CLI, ...args], { env: rootEnv, stdio: ['ignore', 'pipe', 'pipe'] }),
    );

  before(async () => {
    chmodSync(T, 0o755);
    ok(await fate(spawn('useradd', ['--no-create-home', '--shell', '/bin/sh', user])));
    uid = id('-u', user);
    gid = id('-g', user);
    mkdirSync(home, { mode: 0o700 });
    chownSync(home, uid, gid);
    writeFileSync(join(home, 'pass'), PASSPHRASE + '\n', { mode: 0o600 });
    chownSync(join(home, 'pass'), uid, gid);
    // A same-user vault of the user's, to be moved into the hardened host.
    const own = userEnv({
      VAULT_PASSPHRASE_FILE: join(home, 'pass'),
      VAULT_DIR: join(home, 'vault'),
      VAULT_TEST_WEAK_KDF: '1',
    });
    ok(await cli(['vault', 'create'], own));
    ok(await cli(['entry', 'set', 'Moved'], own, 'moved-value'));
    ok(await cli(['daemon', 'stop'], own));
  });

  after(async () => {
    if (host !== null && hostPid > 0 && alive(hostPid)) {
      process.kill(hostPid, 'SIGKILL');
      await waitGone(hostPid);
    }
    await asRoot(['host', 'uninstall', '--purge']);
    spawnSync('userdel', [user]);
    spawnSync('userdel', [outsider]);
    spawnSync('userdel', [hostUser]);
    spawnSync('groupdel', [group]);
    rmSync(T, { recursive: true, force: true });
  });

  test('host install moves the vault in and prints how to start the host where no systemd runs', async () => {
    const refused = await cli(['host', 'install'], userEnv());
    assert.equal(refused.code, 77);
    assert.match(refused.stderr, /^vault-cli: VLT-1007: /);
    const r = await asRoot([
      'host',
      'install',
      '--user',
      hostUser,
      '--group',
      group,
      '--state-dir',
      state,
      '--socket-dir',
      sockDir,
      '--member',
      user,
      '--move',
      join(home, 'vault'),
      '--no-systemd',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /runuser -u vlth/);
    assert.ok(!existsSync(join(home, 'vault', 'vault.mdb')), 'the same-user copy is gone');
    // Started as the printed command does, without a shell: the host's user, a clean environment.
    host = spawn(
      'setpriv',
      [
        `--reuid=${id('-u', hostUser)}`,
        `--regid=${id('-g', hostUser)}`,
        '--init-groups',
        '--',
        'env',
        '-i',
        `PATH=${process.env.PATH}`,
        `VAULT_DIR=${state}`,
        `VAULT_SOCKET_DIR=${sockDir}`,
        'VAULT_HOST_IDLE_MS=0',
        process.execPath,
        CLI,
        'daemon',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 200 && hostPid < 0; i++) {
      const s = await cli(['host', 'status', '--json'], userEnv());
      if (s.code === 0) hostPid = (JSON.parse(s.stdout) as { pid: number }).pid;
      else await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(hostPid > 0, 'the hardened host answers');
    const s = JSON.parse(ok(await cli(['host', 'status', '--json'], userEnv())));
    assert.deepEqual(
      { mode: s.mode, user: s.user, running: s.running },
      { mode: 'hardened', user: hostUser, running: true },
    );
    // A user outside the group keeps a same-user vault of their own.
    ok(await fate(spawn('useradd', ['--no-create-home', '--shell', '/bin/sh', outsider])));
    const o = await fate(
      spawn(
        'setpriv',
        [
          `--reuid=${id('-u', outsider)}`,
          `--regid=${id('-g', outsider)}`,
          '--init-groups',
          '--',
        ].concat([process.execPath, CLI, 'host', 'status', '--json']),
        { env: userEnv({ HOME: join(T, 'outsider') }), stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    assert.equal(JSON.parse(o.stdout).mode, 'same-user', o.stderr);
  });

  test('owner commands work with the passphrase; the moved vault is there', async () => {
    assert.match(ok(await cli(['entry', 'ls'], owner())), /Moved/);
    ok(await cli(['entry', 'set', 'A'], owner(), 'value-a'));
  });

  test('an agent reads through the hardened host; its audit record carries the kernel’s pid and uid', async () => {
    const token = ok(await cli(['agent', 'add', 'bot', '--scope', 'A'], owner())).trim();
    const child = spawn(
      'setpriv',
      [
        `--reuid=${uid}`,
        `--regid=${gid}`,
        '--init-groups',
        '--',
        process.execPath,
        CLI,
        'get',
        'A',
      ],
      { env: userEnv({ VAULT_TOKEN: token }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const r = await fate(child);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'value-a\n');
    const records = ok(await cli(['audit', '--json'], owner()))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; source: string });
    const read = records.filter((x) => x.action === 'ai_read');
    assert.equal(read.length, 1);
    // setpriv execs node: the child's pid is the reader's.
    assert.equal(read[0]?.source, `pid:${child.pid} uid:${uid}`);
  });

  test('as the user: the store, its directory and the host’s /proc are unreadable', async () => {
    for (const cmd of [
      ['cat', join(state, 'vault.mdb')],
      ['ls', state],
      ['cat', `/proc/${hostPid}/environ`],
      ['head', '-c', '1', `/proc/${hostPid}/mem`],
    ]) {
      const r = await asUser(cmd, userEnv());
      assert.notEqual(r.code, 0, `${cmd.join(' ')} succeeded`);
      assert.match(r.stderr, /Permission denied|Operation not permitted/, cmd.join(' '));
    }
    const kill = await asUser(['kill', '-9', String(hostPid)], userEnv());
    assert.notEqual(kill.code, 0);
    assert.ok(alive(hostPid));
  });

  test('as the user: the socket cannot be removed, renamed or shadowed', async () => {
    const sock = join(sockDir, 'host.sock');
    for (const cmd of [
      ['rm', '-f', sock],
      ['mv', sock, join(sockDir, 'old.sock')],
      ['touch', join(sockDir, 'other')],
    ]) {
      const r = await asUser(cmd, userEnv());
      assert.notEqual(r.code, 0, `${cmd.join(' ')} succeeded`);
    }
    assert.match(ok(await cli(['entry', 'ls'], owner())), /\bA\b/);
  });

  test('as the user: daemon stop is refused without the passphrase, and with a wrong one', async () => {
    const none = await cli(['daemon', 'stop'], userEnv());
    assert.notEqual(none.code, 0);
    writeFileSync(join(T, 'wrong'), 'not the passphrase\n', { mode: 0o644 });
    const wrong = await cli(
      ['daemon', 'stop'],
      userEnv({ VAULT_PASSPHRASE_FILE: join(T, 'wrong') }),
    );
    assert.equal(wrong.code, 77, wrong.stderr);
    assert.match(wrong.stderr, /VLT-3002/);
    assert.ok(alive(hostPid));
  });

  test('run as the user: the agent reads through its session under the hardened host', async (t) => {
    const bwrap = spawnSync('sh', [
      '-c',
      'command -v bwrap && command -v socat && command -v script',
    ]);
    if (bwrap.status !== 0) return t.skip('needs bwrap, socat and script (util-linux)');
    const bin = join(T, 'bin');
    mkdirSync(bin, { recursive: true, mode: 0o755 });
    if (!existsSync(join(bin, 'vault-cli'))) symlinkSync(CLI, join(bin, 'vault-cli'));
    const inner = `PATH=${bin}:$PATH; vault-cli get A | cat; echo "rc=$?"`;
    // `script` gives run the terminal it wants.
    const r = await asUser(
      [
        'script',
        '-qec',
        `${process.execPath} ${CLI} run --agent bot -- sh -c '${inner}'`,
        '/dev/null',
      ],
      owner(),
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /value-a/);
    assert.match(r.stdout, /rc=0/);
  });

  test('host uninstall keeps a vault until told where it goes, then removes users and dirs', async () => {
    const kept = await asRoot(['host', 'uninstall']);
    assert.equal(kept.code, 64, kept.stderr);
    assert.match(kept.stderr, /VLT-1008/);
    assert.ok(alive(hostPid));
    const r = await asRoot(['host', 'uninstall', '--move-to', join(home, 'back'), '--owner', user]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(await waitGone(hostPid));
    assert.ok(!existsSync(config) && !existsSync(state) && !existsSync(sockDir));
    assert.notEqual(spawnSync('id', ['-u', hostUser]).status, 0);
    // The vault is the user's again, as a same-user vault.
    const back = userEnv({
      VAULT_PASSPHRASE_FILE: join(home, 'pass'),
      VAULT_DIR: join(home, 'back'),
    });
    assert.match(ok(await cli(['entry', 'ls'], back)), /Moved/);
    ok(await cli(['daemon', 'stop'], back));
  });
});
