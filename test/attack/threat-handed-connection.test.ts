// A caller is the process that connected. The attack: a helper connects to
// the host's socket, hands the connected socket to the attacker (SCM_RIGHTS)
// and exits; the attacker waits until the helper's pid is reused by a process
// that holds owner power (a command on the owner's unlocked terminal, or a
// `sweep --watch` holding the owner key for its process), then sends owner
// requests on the old connection. The kernel still names the helper's pid as
// the peer, so a host that looks the pid up again per request finds the
// owner's process. Here the pid is reused on purpose (ns_last_pid, as root:
// bounded tries, no fork storm), and the requests must be refused (VLT-2054).
// On the build before this, both released: the entry list, then every value.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { installBin, shellUnderPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';

const ROOT = process.getuid?.() === 0;
const skip = ROOT
  ? false
  : 'needs root: the test reuses a pid through /proc/sys/kernel/ns_last_pid';
const VALUE = 'handed-sentinel-51c0e9b2d7';

/**
 * The attacker: a helper child connects and hands the socket over, then exits;
 * the helper's pid goes to PIDFILE. Once GOFILE exists, one owner request
 * (OP, BODY) goes out on the handed socket and the reply to OUTFILE.
 */
const ATTACKER = String.raw`
import os, socket, sys, time, json
sock_path, pidfile, gofile, outfile, op, body = sys.argv[1:7]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
pid = os.fork()
if pid == 0:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    socket.send_fds(b, [b"x"], [s.fileno()])
    os._exit(0)
_, fds, _, _ = socket.recv_fds(a, 1, 1)
os.waitpid(pid, 0)
held = socket.socket(fileno=fds[0])
with open(pidfile + ".tmp", "w") as f: f.write(str(pid))
os.rename(pidfile + ".tmp", pidfile)
for _ in range(1200):
    if os.path.exists(gofile): break
    time.sleep(0.05)
data = body.encode()
held.sendall(("POST /v1/%s HTTP/1.1\r\nHost: vault\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (op, len(data))).encode() + data)
out = b""
held.settimeout(20)
try:
    while True:
        c = held.recv(65536)
        if not c: break
        out += c
except Exception:
    pass
with open(outfile, "wb") as f: f.write(out)
`;

/**
 * Makes the next process get pid TARGET: sets ns_last_pid to TARGET - 1 and
 * forks, up to 400 times (another process may take the pid first); the child
 * that got it runs the command, the others exit at once.
 */
const REUSE = String.raw`
import os, sys
target = int(sys.argv[1]); cmd = sys.argv[2:]
for _ in range(400):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f: f.write(str(target - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() == target:
            os.execvp(cmd[0], cmd)
        os._exit(0)
    if pid == target:
        print("reused=%d" % pid, flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
print("missed", flush=True)
`;

const rig = new Rig();
let dir: string;
let shell: PtyRun;
const children: ChildProcess[] = [];

/** Starts the attacker for one request; resolves to the helper's pid and how to fire. */
async function attacker(
  name: string,
  op: string,
  body: object,
): Promise<{ pid: number; fire: () => Promise<string> }> {
  const files = {
    pid: join(dir, `${name}.pid`),
    go: join(dir, `${name}.go`),
    out: join(dir, `${name}.out`),
  };
  const child = spawn(
    'python3',
    [
      join(dir, 'attacker.py'),
      join(rig.vaultDir, 'host.sock'),
      files.pid,
      files.go,
      files.out,
      op,
      JSON.stringify(body),
    ],
    { env: rig.env, stdio: 'ignore' },
  );
  children.push(child);
  await until(() => existsSync(files.pid), `the ${name} attacker's hand-over`);
  const pid = Number(readFileSync(files.pid, 'utf8'));
  const fire = async () => {
    writeFileSync(files.go, '');
    await until(() => existsSync(files.out), `the ${name} attacker's reply`);
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    }
    return readFileSync(files.out, 'utf8');
  };
  return { pid, fire };
}

before(async () => {
  if (!ROOT) return;
  await rig.create();
  await rig.set('Alpha', VALUE);
  dir = join(rig.root, 'attack');
  mkdirSync(dir);
  writeFileSync(join(dir, 'attacker.py'), ATTACKER);
  writeFileSync(join(dir, 'reuse.py'), REUSE);
  shell = shellUnderPty(rig, { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined });
  await until(() => shell.output().includes('$ '), 'the shell');
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  if (!ROOT) return;
  shell.pty.kill();
  await rig.dispose();
});

test(
  'a handed-over connection whose pid now names a command on the unlocked terminal gets no owner session',
  { skip },
  async () => {
    shell.pty.write('vault-cli unlock\r');
    await until(() => shell.output().includes('Vault passphrase'), 'the unlock prompt');
    for (const key of PASSPHRASE) shell.pty.write(key);
    shell.pty.write('\r');
    await until(() => /unlocked on pts\/\d+/.test(shell.output()), 'the session');
    const { pid, fire } = await attacker('session', 'entry.ls', {});
    // The owner's next command, on the unlocked terminal, gets the helper's pid.
    shell.pty.write(`python3 ${join(dir, 'reuse.py')} ${pid} sleep 30\r`);
    await until(() => /reused=\d+|missed/.test(shell.output()), 'the pid reused');
    assert.match(shell.output(), new RegExp(`reused=${pid}`), 'the pid was reused');
    const reply = await fire();
    assert.match(reply, /VLT-2054/, reply);
    assert.doesNotMatch(reply, /Alpha/);
  },
);

test(
  'a handed-over connection whose pid now names a sweep holding the owner key gets no values',
  { skip },
  async () => {
    const { pid, fire } = await attacker('hold', 'sweep.values', { stored: true, hold: false });
    const watched = join(dir, 'transcripts');
    mkdirSync(watched);
    const reuse = spawn(
      'python3',
      [
        join(dir, 'reuse.py'),
        String(pid),
        'vault-cli',
        'sweep',
        '--watch',
        '--stored',
        '--paths-only',
        '--path',
        watched,
      ],
      {
        env: { ...rig.env, PATH: `${installBin(rig)}:${process.env.PATH}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(reuse);
    let said = '';
    reuse.stdout.on('data', (d: Buffer) => (said += d.toString()));
    // The sweep (the reused pid) inherits these: it says when it watches, holding the owner key.
    reuse.stderr.on('data', (d: Buffer) => (said += d.toString()));
    await until(() => /reused=\d+|missed/.test(said), 'the pid reused');
    assert.match(said, new RegExp(`reused=${pid}`), 'the pid was reused');
    await until(() => said.includes('watching'), 'the sweep watching, the owner key held for it');
    const reply = await fire();
    assert.match(reply, /VLT-2054/, reply);
    assert.ok(!reply.includes(Buffer.from(VALUE).toString('base64')), 'no value');
    assert.ok(!reply.includes(VALUE), 'no value');
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // ended already
    }
  },
);
