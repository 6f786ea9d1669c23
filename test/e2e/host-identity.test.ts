// Issue 16, same-user mode: one host per vault (the host lock), the kernel's
// word on who is calling (SO_PEERCRED), and the owner's client that checks the
// process on the socket before it sends the passphrase. Each attack of the
// issue is run here as a process of the same user would run it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  alive,
  assertRefused,
  disposeAll,
  hostPid,
  hostProcesses,
  settleHosts,
  waitGone,
} from '../support/e2e-helpers.js';
import { LIBFAKETIME, faketimeBuild } from '../support/faketime.js';
import { CLI, Rig, fate, ok, runCli, type Result } from '../support/rig.js';

function daemon(rig: Rig, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [CLI, 'daemon'], {
    env: { ...rig.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function waitListening(rig: Rig, notPid?: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const r = await rig.owner(['daemon', 'status', '--json'], {
      env: { VAULT_PASSPHRASE_FILE: undefined },
    });
    if (r.code === 0) {
      const pid = (JSON.parse(r.stdout) as { pid: number }).pid;
      if (pid !== notPid) return pid;
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('no host answered');
}

describe('one host per vault', () => {
  const rig = new Rig();
  before(async () => {
    await rig.create();
    await rig.set('A', 'value-a');
    await rig.stop();
  });
  after(() => disposeAll(rig));

  test('host status: same-user mode, the socket in the vault directory', async () => {
    const r = await rig.owner(['host', 'status', '--json']);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      mode: 'same-user',
      socket: join(rig.vaultDir, 'host.sock'),
      vaultDir: rig.vaultDir,
      running: false,
    });
  });

  test('100 hosts started at once: exactly one serves, and its socket works', async () => {
    const starts = Array.from({ length: 100 }, () => daemon(rig));
    const fates = starts.map((c) => fate(c));
    const left = await settleHosts(rig.vaultDir, 1, 120_000);
    assert.equal(left.length, 1, `hosts still running: ${left.join(' ')}`);
    const live = left[0] as number;
    const winner = starts.find((c) => c.pid === live);
    assert.ok(winner, 'the serving host is one of the 100');
    const losers = await Promise.all(fates.filter((_, i) => starts[i]?.pid !== live));
    assert.equal(losers.length, 99);
    for (const r of losers) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /another host already serves this vault/);
      assert.doesNotMatch(r.stderr, /listening on/);
    }
    // The losers are gone, and none of them took the winner's socket with it.
    const socket = join(rig.vaultDir, 'host.sock');
    assert.ok(statSync(socket).isSocket());
    assert.equal(await hostPid(rig), live);
    ok(await rig.owner(['entry', 'ls']));
    assert.deepEqual(hostProcesses(rig.vaultDir), [live]);
    await rig.stop();
    assert.ok(await waitGone(live));
  });

  test('a host that loses the race, or stops after the winner started, never unlinks its socket', async () => {
    const first = daemon(rig);
    const live = await waitListening(rig);
    assert.equal(live, first.pid);
    const socket = join(rig.vaultDir, 'host.sock');
    const inode = statSync(socket).ino;
    // A second host started now gives way at once, before it binds anything.
    const second = await fate(daemon(rig));
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /another host already serves this vault/);
    assert.equal(statSync(socket).ino, inode);
    // A host killed outright leaves its socket file; the next host removes it
    // only because it holds the lock, and serves.
    first.kill('SIGKILL');
    assert.ok(await waitGone(live));
    assert.ok(existsSync(socket), 'a killed host leaves its socket file');
    const third = daemon(rig);
    const next = await waitListening(rig, live);
    assert.equal(next, third.pid);
    ok(await rig.owner(['entry', 'ls']));
    await rig.stop();
    assert.ok(await waitGone(next));
  });
});

/** One raw request on the host socket, with headers of the caller's choosing. */
function rawPost(socketPath: string, op: string, body: object, extra: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const s = connect(socketPath, () => {
      s.write(
        `POST /v1/${op} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(payload)}\r\n${extra}Connection: close\r\n\r\n${payload}`,
      );
    });
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    s.on('error', reject);
  });
}

describe('the audit source is the kernel’s, not the caller’s', () => {
  const rig = new Rig();
  let token = '';
  before(async () => {
    await rig.create();
    await rig.set('A', 'value-a');
    token = await rig.addAgent('bot', ['A']);
  });
  after(() => disposeAll(rig));

  test('a client that claims pid 1 is audited with its real pid and uid', async () => {
    const reply = await rawPost(
      join(rig.vaultDir, 'host.sock'),
      'read',
      { token, entry: 'A', field: 'password', mode: 'get' },
      'x-vault-client-pid: 1\r\nx-forwarded-for: 10.0.0.1\r\n',
    );
    assert.match(reply, /"ok":true/);
    const records = ok(await rig.owner(['audit', '--json']))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; source: string });
    const read = records.filter((r) => r.action === 'ai_read');
    assert.equal(read.length, 1, JSON.stringify(records));
    assert.equal(read[0]?.source, `pid:${process.pid} uid:${process.getuid?.()}`);
    assert.ok(!records.some((r) => r.source.includes('pid:1 ')));
  });
});

/**
 * The squatter of the issue: once the host is gone, it listens on host.sock
 * (and, in the python variant, even takes the host lock first) and writes
 * every byte it receives to a file.
 */
const PY_SQUATTER = `
import fcntl, os, socket, sys
vault, record = sys.argv[1], sys.argv[2]
if sys.argv[3] == 'lock':
    lock = os.open(os.path.join(vault, 'host.lock'), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
path = os.path.join(vault, 'host.sock')
try: os.unlink(path)
except FileNotFoundError: pass
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(8)
open(record, 'wb').close()
print('ready', flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(3)
    try:
        while True:
            b = c.recv(65536)
            if not b: break
            with open(record, 'ab') as f: f.write(b)
    except Exception: pass
    c.close()
`;

const NODE_SQUATTER = `
const net = require('node:net'), fs = require('node:fs'), path = require('node:path');
const [vault, record] = process.argv.slice(1);
const sock = path.join(vault, 'host.sock');
try { fs.unlinkSync(sock); } catch {}
fs.writeFileSync(record, '');
net.createServer((c) => c.on('data', (b) => fs.appendFileSync(record, b))).listen(sock, () => console.log('ready'));
`;

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`squatter exited ${code}`)));
  });
}

describe('the owner’s client checks the host before it sends the passphrase', () => {
  const rig = new Rig();
  const record = join(rig.root, 'squatter-received');
  let squatter: ChildProcess | null = null;
  before(async () => {
    await rig.create();
    await rig.set('A', 'value-a');
  });
  after(async () => {
    squatter?.kill('SIGKILL');
    await disposeAll(rig);
  });
  afterEach(() => unsquat());

  /** The agent's move: the host goes (SIGKILL needs no passphrase), the squatter takes its place. */
  async function squat(cmd: string, args: string[], env: NodeJS.ProcessEnv = rig.env) {
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    squatter = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    await ready(squatter);
  }

  async function unsquat(): Promise<void> {
    const s = squatter;
    squatter = null;
    if (s?.pid !== undefined && alive(s.pid)) {
      s.kill('SIGKILL');
      await waitGone(s.pid);
    }
  }

  function assertNothingSent(r: Result, why: RegExp): void {
    const line = assertRefused(r, 'VLT-3010');
    assert.match(line, why);
    assert.equal(readFileSync(record).length, 0, 'the squatter received bytes');
  }

  test('a python squatter that even holds the host lock gets nothing', async () => {
    ok(await rig.owner(['entry', 'ls']));
    await squat('python3', ['-c', PY_SQUATTER, rig.vaultDir, record, 'lock']);
    assertNothingSent(await rig.owner(['entry', 'ls']), /runs \/.*python|not this installation/);
    assertNothingSent(await rig.owner(['audit', '--follow', '--json']), /runs \/.*python|not this/);
  });

  test('a node squatter without the lock gets nothing', async () => {
    ok(await rig.owner(['entry', 'ls']));
    await squat(process.execPath, ['-e', NODE_SQUATTER, rig.vaultDir, record]);
    assertNothingSent(await rig.owner(['entry', 'ls']), /does not hold the vault's host lock/);
  });

  test('the real host started with NODE_OPTIONS=--inspect gets no passphrase', async () => {
    ok(await rig.owner(['entry', 'ls']));
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    writeFileSync(record, '');
    squatter = daemon(rig, { NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    await waitListening(rig, pid);
    const r = await rig.owner(['entry', 'ls']);
    assert.match(assertRefused(r, 'VLT-3010'), /NODE_OPTIONS/);
  });

  // Node loads compiled code from this directory: one a same-user agent can
  // write (the default is under $TMPDIR) steers the host as NODE_OPTIONS would.
  test('the real host started with NODE_COMPILE_CACHE gets no passphrase', async () => {
    ok(await rig.owner(['entry', 'ls']));
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    writeFileSync(record, '');
    squatter = daemon(rig, { NODE_COMPILE_CACHE: join(rig.root, 'compile-cache') });
    await waitListening(rig, pid);
    const r = await rig.owner(['entry', 'ls']);
    assert.match(assertRefused(r, 'VLT-3010'), /NODE_COMPILE_CACHE/);
  });

  test('the real host under faketime gets no passphrase, VAULT_ACCEPT_FAKETIME=1 or not: only a test build accepts it', async (t) => {
    if (LIBFAKETIME === null)
      return t.skip('libfaketime is not installed (apt-get install faketime)');
    ok(await rig.owner(['entry', 'ls']));
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    const faked = { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+1d' };
    squatter = daemon(rig, faked);
    const fakedPid = await waitListening(rig, pid);
    const r = await rig.owner(['entry', 'ls']);
    assert.match(assertRefused(r, 'VLT-3010'), /LD_PRELOAD/);
    // An agent that can set the owner's environment cannot turn the check off:
    // the variable that did (before issue 42) is ignored by a production build.
    const told = await rig.owner(['entry', 'ls'], { env: { VAULT_ACCEPT_FAKETIME: '1' } });
    assert.match(assertRefused(told, 'VLT-3010'), /LD_PRELOAD/);
    // A test build (ACCEPT_FAKETIME set in a copy of dist) accepts a host under
    // libfaketime started from its own script, and nothing else.
    await unsquat();
    assert.ok(await waitGone(fakedPid));
    const cli = faketimeBuild(rig.root);
    squatter = spawn(process.execPath, [cli, 'daemon'], {
      env: { ...rig.env, ...faked },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await waitListening(rig, fakedPid);
    ok(await runCli(['entry', 'ls'], rig.env, {}, cli));
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3010');
  });

  test('with the real host back, owner commands work again', async () => {
    assert.equal(ok(await rig.owner(['entry', 'ls'])).includes('A'), true);
  });
});
