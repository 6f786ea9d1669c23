// `vault-cli ssh-agent` against real OpenSSH: a local sshd on a loopback port
// run as a user the test makes, `ssh` and `git clone`/`git push` over SSH with
// the key only in the vault (the key file is deleted after `entry
// import-ssh`). Each signature is made in the host: scope, limits, lock,
// host-key binding and audit hold as for any read, and the private key is in
// no file, environment or memory of the processes the agent runs. The host's
// clock is moved by libfaketime for the rate windows (support/faketime.ts).
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPrivateKey, randomBytes, sign } from 'node:crypto';
import { parseKeyFile, parsePublicKeyLine } from '../../src/core/ssh-keyfile.js';
import { encodeRequest, frame, takeFrames, WireWriter } from '../../src/core/ssh-wire.js';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { installBin, runScript, said } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';
import { startSshAgentProcess } from '../support/ssh-agent.js';
import { sshdSkip, startSshd, type Sshd } from '../support/sshd.js';

const skip =
  sshdSkip() || (LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false);

const rig = new Rig();
const clock = new FakeClock(rig);
let sshd: Sshd;
const agents: ChildProcess[] = [];
/** Each key's secret forms: the raw private scalar or seed, its base64 forms, the file's base64. */
const secrets = new Map<string, Buffer[]>();
const pubFile = (name: string) => join(rig.root, `${name}.pub`);

function keygen(name: string, args: readonly string[]): void {
  const file = join(rig.root, name);
  const r = spawnSync('ssh-keygen', ['-q', ...args, '-N', '', '-C', name, '-f', file]);
  assert.equal(r.status, 0, String(r.stderr));
}

async function importKey(entry: string, file: string): Promise<void> {
  const text = readFileSync(file, 'utf8');
  const parsed = parseKeyFile(text);
  assert.ok(parsed.ok);
  const d = Buffer.from(parsed.key.jwk['d'] as string, 'base64url');
  // d inside any base64 text: its 3-byte-aligned runs at each of the three offsets.
  const runs = [0, 1, 2].map((k) => Buffer.from(d.subarray(k, k + 24).toString('base64')));
  secrets.set(entry, [
    d,
    Buffer.from(d.toString('base64url').slice(0, 40)),
    Buffer.from(d.toString('hex')),
    ...runs,
  ]);
  const line = ok(await rig.owner(['entry', 'import-ssh', entry, file])).trim();
  assert.equal(line, readFileSync(`${file}.pub`, 'utf8').trim());
  appendFileSync(sshd.authorizedKeys, `${line}\n`);
  // The key is only in the vault now.
  rmSync(file);
}

/** Starts `vault-cli ssh-agent` as the agent with `token`; resolves with its socket. */
async function sshAgent(token: string, entries: readonly string[]): Promise<string> {
  const { child, sock } = await startSshAgentProcess(rig, token, entries);
  agents.push(child);
  return sock;
}

function ssh(sock: string, key: string, command = 'true') {
  const cfg = sshd.clientConfig(pubFile(key));
  return spawnSync('ssh', ['-F', cfg, 'target', command], {
    env: { PATH: process.env.PATH, HOME: rig.root, SSH_AUTH_SOCK: sock },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

const records = async (actor: string) =>
  (await auditRecords(rig)).filter((r) => r.actor === `cli:${actor}`);

before(async () => {
  if (skip) return;
  await clock.start();
  await rig.create();
  sshd = await startSshd(`vsshtest${hex(3)}`);
  keygen('deploy', ['-t', 'ed25519']);
  keygen('k1', ['-t', 'ecdsa', '-b', '256']);
  keygen('k2', ['-t', 'rsa', '-b', '2048']);
  keygen('k3', ['-t', 'ed25519']);
  for (const k of ['deploy', 'k1', 'k2', 'k3']) await importKey(k, join(rig.root, k));
  installBin(rig);
});

after(async () => {
  for (const a of agents) a.kill('SIGTERM');
  if (skip) return;
  await sshd?.stop();
  await clock.stop();
  await rig.dispose();
});

describe('vault-cli ssh-agent with real OpenSSH', { skip }, () => {
  test('ssh logs in with the key only in the vault; the signature is audited with the server host key', async () => {
    const token = await rig.addAgent('deployer', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    const r = ssh(sock, 'deploy', 'echo logged-in-as-$(id -un)');
    assert.equal(r.status, 0, r.stderr + sshd.log().slice(-2000));
    assert.equal(r.stdout.trim(), `logged-in-as-${sshd.user}`);
    const signed = (await records('deployer')).filter((x) => x.action === 'ssh_sign');
    assert.equal(signed.length, 1);
    assert.equal(signed[0]?.outcome, 'ok');
    assert.equal(signed[0]?.entry, 'deploy');
    assert.match(
      JSON.stringify(signed[0]),
      new RegExp(sshd.hostKeyFingerprint.replace(/[+/]/g, '.')),
    );
  });

  test('git clone and git push over ssh to a bare repository in the user’s home', async () => {
    const token = await rig.addAgent('gitter', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    const bare = join(sshd.home, 'repo.git');
    assert.equal(
      spawnSync('runuser', ['-u', sshd.user, '--', 'git', 'init', '-q', '--bare', bare]).status,
      0,
    );
    const env = {
      PATH: process.env.PATH,
      HOME: rig.root,
      SSH_AUTH_SOCK: sock,
      GIT_SSH_COMMAND: sshd.sshCommand(pubFile('deploy')),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    };
    const work = join(rig.root, 'work');
    const git = (args: string[], cwd = rig.root) => {
      const g = spawnSync('git', args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(g.status, 0, `git ${args.join(' ')}: ${g.stderr}`);
      return g.stdout;
    };
    git(['clone', '-q', `target:${bare}`, work]);
    writeFileSync(join(work, 'README'), 'pushed through the vault\n');
    git(['add', 'README'], work);
    git(['commit', '-qm', 'first'], work);
    git(['push', '-q', 'origin', 'HEAD:refs/heads/main'], work);
    const log = spawnSync('git', ['--git-dir', bare, 'log', '--format=%s', 'main'], {
      encoding: 'utf8',
    });
    assert.equal(log.stdout.trim(), 'first');
    const signed = (await records('gitter')).filter((x) => x.action === 'ssh_sign');
    assert.equal(signed.length, 2, 'one signature for the clone, one for the push');
  });

  test('the private key is released to no agent: get, render and the key in no file, environment or memory', async () => {
    const token = await rig.addAgent('reader', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    assert.equal(ssh(sock, 'deploy').status, 0);
    const got = await rig.agent(['get', 'deploy', '--field', 'ssh_private_key'], token);
    assert.match(got.stderr, /VLT-2065/);
    assert.equal(got.stdoutBytes.length, 0);
    const needles = [...secrets.values()].flat();
    // Files: the test's whole tree (vault, homes, sockets, config) and sshd's.
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const d of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, d.name);
        if (d.isDirectory()) walk(p);
        else if (d.isFile() && statSync(p).size < 64 * 1024 * 1024) files.push(p);
      }
    };
    walk(rig.root);
    walk(sshd.home);
    assert.ok(files.length > 5);
    for (const f of files) {
      const b = readFileSync(f);
      for (const n of needles) assert.ok(!b.includes(n), `a private key is in ${f}`);
    }
    // Every process's environment and command line.
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      for (const what of ['environ', 'cmdline']) {
        let b: Buffer;
        try {
          b = readFileSync(`/proc/${pid}/${what}`);
        } catch {
          continue;
        }
        for (const n of needles) assert.ok(!b.includes(n), `a private key in /proc/${pid}/${what}`);
      }
    }
    // The ssh-agent processes' memory (what the agent can read of its own processes).
    for (const a of agents) {
      if (a.pid === undefined || a.exitCode !== null) continue;
      assert.deepEqual(inMemory(a.pid, needles).filter(Boolean), [], `key in ssh-agent ${a.pid}`);
    }
  });

  test('an entry bound to another server’s host key: refused and counted; the second such attempt locks', async () => {
    const token = await rig.addAgent('wanderer', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    const other = `SHA256:${Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '')}`;
    ok(await rig.owner(['entry', 'hosts', 'deploy', other]));
    try {
      const r = ssh(sock, 'deploy');
      assert.notEqual(r.status, 0);
      const exfil = (await records('wanderer')).filter((x) => x.action === 'exfil');
      assert.equal(exfil.length, 1);
      assert.equal(exfil[0]?.outcome, 'VLT-2045');
      assert.equal(exfil[0]?.entry, 'deploy');
      assert.notEqual(ssh(sock, 'deploy').status, 0);
      const show = JSON.parse(ok(await rig.owner(['agent', 'show', 'wanderer', '--json'])));
      assert.equal(show.state, 'locked');
      // Bound to this server's key, another agent signs; the locked one still cannot.
      ok(await rig.owner(['entry', 'hosts', 'deploy', sshd.hostKeyFingerprint]));
      const t2 = await rig.addAgent('bound', ['deploy']);
      assert.equal(ssh(await sshAgent(t2, ['deploy']), 'deploy').status, 0);
      assert.notEqual(ssh(sock, 'deploy').status, 0);
    } finally {
      ok(await rig.owner(['entry', 'hosts', 'deploy', '--clear']));
    }
  });

  test('an over-reading agent: signatures for more distinct keys than its limit are refused, then it is locked; then ssh fails at once', async () => {
    const token = await rig.addAgent('greedy', ['k1', 'k2', 'k3'], ['--per-minute', '2']);
    const sock = await sshAgent(token, ['k1', 'k2', 'k3']);
    clock.set(1000);
    assert.equal(ssh(sock, 'k1').status, 0);
    assert.equal(ssh(sock, 'k2').status, 0);
    assert.notEqual(ssh(sock, 'k3').status, 0); // the third distinct key in a minute
    clock.set(1000 + 61); // the window has room again
    assert.equal(ssh(sock, 'k1').status, 0);
    assert.equal(ssh(sock, 'k2').status, 0);
    assert.notEqual(ssh(sock, 'k3').status, 0); // the second violation: locked
    const show = JSON.parse(ok(await rig.owner(['agent', 'show', 'greedy', '--json'])));
    assert.equal(show.state, 'locked');
    const r = ssh(sock, 'k1');
    assert.notEqual(r.status, 0);
    const mine = await records('greedy');
    const signs = mine.filter((x) => x.action === 'ssh_sign');
    assert.deepEqual(
      signs.map((x) => x.entry),
      ['k1', 'k2', 'k1', 'k2'],
    );
    assert.ok(mine.some((x) => x.action === 'limited' && x.entry === 'k3'));
    assert.ok(mine.filter((x) => x.action === 'locked').length >= 2);
  });

  test('agent lock and revoke take effect on the next signature', async () => {
    const token = await rig.addAgent('stopped', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    assert.equal(ssh(sock, 'deploy').status, 0);
    ok(await rig.owner(['agent', 'lock', 'stopped']));
    assert.notEqual(ssh(sock, 'deploy').status, 0);
    const t2 = await rig.addAgent('revoked', ['deploy']);
    const sock2 = await sshAgent(t2, ['deploy']);
    assert.equal(ssh(sock2, 'deploy').status, 0);
    ok(await rig.owner(['agent', 'revoke', 'revoked']));
    assert.notEqual(ssh(sock2, 'deploy').status, 0);
    const refused = (await records('revoked')).filter((x) => x.outcome === 'VLT-2040');
    assert.ok(refused.length >= 1);
  });

  test('under run --ssh: ssh and git clone from inside the sandbox through the session’s agent; ~/.ssh hidden; the key itself refused', async () => {
    await rig.addAgent('boxed', ['deploy', 'k1']);
    // Inside, /tmp is the sandbox's own: the client's config and known_hosts live in the working directory.
    const dir = join(rig.root, 'inside');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'known_hosts'), `[localhost]:${sshd.port} ${sshd.hostKeyLine}\n`);
    writeFileSync(
      join(dir, 'ssh_config'),
      [
        'Host target',
        '  HostName localhost',
        `  Port ${sshd.port}`,
        `  User ${sshd.user}`,
        `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  BatchMode yes',
        '  IdentitiesOnly yes',
        `  IdentityFile ${pubFile('deploy')}`,
        '',
      ].join('\n'),
    );
    mkdirSync(join(rig.root, '.ssh'), { recursive: true });
    writeFileSync(join(rig.root, '.ssh', 'id_owner'), 'the owner’s own key file\n');
    const bare = join(sshd.home, 'boxed.git');
    assert.equal(
      spawnSync('runuser', ['-u', sshd.user, '--', 'git', 'init', '-q', '--bare', bare]).status,
      0,
    );
    const cfg = join(dir, 'ssh_config');
    const script = [
      'echo "listed=$(ssh-add -L | wc -l)"',
      `echo "login=$(ssh -F ${cfg} target 'echo ok-$(id -un)')"`,
      `GIT_SSH_COMMAND="ssh -F ${cfg}" git clone -q target:${bare} ${join(dir, 'clone')} 2>&1 | tail -1; echo "clone=$?"`,
      'echo "ssh-dir=$(ls -A ~/.ssh 2>/dev/null | wc -l)"',
      'echo "getkey=$(vault-cli get deploy --field ssh_private_key 2>&1 | cat | grep -o VLT-2065)"',
      'echo "sock=$SSH_AUTH_SOCK"',
    ].join('; ');
    const r = await runScript(rig, script, {
      agent: 'boxed',
      flags: ['--ssh', 'deploy', '--ssh', 'k1', '--allow-net', `localhost:${sshd.port}`],
    }).exited;
    assert.equal(r.exitCode, 0, r.output);
    const got = said(r.output);
    assert.equal(got.get('listed'), '2', r.output);
    assert.equal(got.get('login'), `ok-${sshd.user}`, r.output);
    assert.equal(got.get('clone'), '0', r.output);
    assert.equal(got.get('ssh-dir'), '0', r.output);
    assert.equal(got.get('getkey'), 'VLT-2065', r.output);
    assert.match(got.get('sock') ?? '', /ssh-agent\.sock$/);
    const signed = (await records('boxed')).filter((x) => x.action === 'ssh_sign');
    assert.equal(signed.length, 2, 'the login and the clone');
    // A key out of the session's scope: the session does not start.
    const out = await runScript(rig, 'echo started=1', {
      agent: 'boxed',
      flags: ['--scope', 'k1', '--ssh', 'deploy'],
    }).exited;
    assert.notEqual(out.exitCode, 0);
    assert.match(out.output, /VLT-2041/);
    assert.equal(said(out.output).get('started'), undefined);
  });

  test('session-binds: a forged one, another session’s data, a forwarded agent: refused and audited; a bind the server signed signs', async () => {
    const token = await rig.addAgent('binder', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    ok(await rig.owner(['entry', 'hosts', 'deploy', sshd.hostKeyFingerprint]));
    const hostPrivate = parseKeyFile(readFileSync(sshd.hostKeyFile, 'utf8'));
    assert.ok(hostPrivate.ok);
    const hostKey = createPrivateKey({ key: hostPrivate.key.jwk, format: 'jwk' });
    const hostBlob = hostPrivate.key.publicBlob;
    const keyBlob = parsePublicKeyLine(readFileSync(pubFile('deploy'), 'utf8')) as Buffer;
    const sessionId = randomBytes(32);
    /** What the server signs in a session-bind: its signature over the session identifier. */
    const serverSig = (sid: Buffer) =>
      new WireWriter()
        .string('ssh-ed25519')
        .string(sign(null, sid, hostKey))
        .bytes();
    const userauth = (sid: Buffer) =>
      new WireWriter().string(sid).byte(50).string(sshd.user).string('ssh-connection').bytes();
    /** One connection: each message sent, its reply's type read. */
    const exchange = async (messages: Buffer[]) => {
      const c = connect(sock);
      await new Promise((r) => c.once('connect', r));
      let pending = Buffer.alloc(0);
      const types: number[] = [];
      for (const m of messages) {
        c.write(m);
        for (;;) {
          const d: Buffer = await new Promise((r) => c.once('data', r));
          pending = Buffer.concat([pending, d]);
          const { frames, rest } = takeFrames(pending);
          pending = Buffer.from(rest);
          if (frames.length > 0) {
            types.push(frames[0]?.[0] ?? -1);
            break;
          }
        }
      }
      c.destroy();
      return types;
    };
    const bind = (sid: Buffer, signature: Buffer, forwarding = false) =>
      encodeRequest.bind({ hostKey: hostBlob, sessionId: sid, signature, forwarding });
    const signReq = (sid: Buffer) => encodeRequest.sign(keyBlob, userauth(sid), 0);
    const before = (await records('binder')).length;
    // A bind the agent made up: the server's key, a signature that is not the server's.
    const forged = serverSig(randomBytes(32));
    assert.deepEqual(await exchange([bind(sessionId, forged), signReq(sessionId)]), [6, 5]);
    // A bind the server signed: the signature for that session is made.
    assert.deepEqual(
      await exchange([bind(sessionId, serverSig(sessionId)), signReq(sessionId)]),
      [6, 14],
    );
    // The same bind, and data for another session.
    const other = randomBytes(32);
    assert.deepEqual(
      await exchange([bind(sessionId, serverSig(sessionId)), signReq(other)]),
      [6, 5],
    );
    // A forwarded agent: refused until the binding allows it.
    const fwd = [bind(sessionId, serverSig(sessionId), true), signReq(sessionId)];
    assert.deepEqual(await exchange(fwd), [6, 5]);
    ok(await rig.owner(['entry', 'hosts', 'deploy', sshd.hostKeyFingerprint, '+forward']));
    assert.deepEqual(await exchange(fwd), [6, 14]);
    ok(await rig.owner(['entry', 'hosts', 'deploy', '--clear']));
    const mine = (await records('binder')).slice(before);
    assert.deepEqual(
      mine.map((x) => `${x.action}:${x.outcome}`),
      ['denied:VLT-2068', 'ssh_sign:ok', 'denied:VLT-2068', 'denied:VLT-2066', 'ssh_sign:ok'],
    );
  });

  test('entry import-ssh refuses an encrypted key, a public key and a missing file with VLT-2067, creating nothing', async () => {
    const enc = join(rig.root, 'encrypted');
    assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'pw', '-f', enc]).status, 0);
    for (const [file, says] of [
      [enc, /ssh-keygen -p/],
      [`${enc}.pub`, /not an OpenSSH private key/],
      [join(rig.root, 'no-such-key'), /Cannot read/],
    ] as const) {
      const r = await rig.owner(['entry', 'import-ssh', 'refused-key', file]);
      assert.equal(r.code, 65, r.stderr);
      assert.match(r.stderr, /^vault-cli: VLT-2067: /);
      assert.match(r.stderr, says);
      assert.equal(r.stdout, '');
    }
    assert.match((await rig.owner(['entry', 'show', 'refused-key'])).stderr, /VLT-4001/);
  });

  test('malformed, truncated and oversized agent messages: FAILURE or a closed connection; the agent serves on', async () => {
    const token = await rig.addAgent('fuzzed', ['deploy']);
    const sock = await sshAgent(token, ['deploy']);
    const send = (bytes: Buffer) =>
      new Promise<Buffer>((resolve) => {
        const c = connect(sock);
        const got: Buffer[] = [];
        c.on('data', (d) => got.push(d));
        c.on('error', () => resolve(Buffer.concat(got)));
        c.on('close', () => resolve(Buffer.concat(got)));
        c.end(bytes);
        setTimeout(() => c.destroy(), 2000);
      });
    const failure = Buffer.from([0, 0, 0, 1, 5]);
    assert.deepEqual(await send(frame(Buffer.from([13, 0, 0, 0, 9]))), failure);
    assert.deepEqual(await send(frame(Buffer.from([99]))), failure);
    assert.deepEqual(await send(frame(Buffer.from([27, 0, 0, 0, 3, 97]))), failure);
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0x7fffffff);
    assert.equal((await send(huge)).length, 0);
    for (let i = 0; i < 50; i++) {
      const junk = Buffer.from(
        Array.from({ length: 1 + (i % 40) }, (_, j) => (i * 31 + j * 7) & 0xff),
      );
      await send(Buffer.concat([frame(junk), junk]));
    }
    const list = await send(encodeRequest.identities());
    assert.equal(list[4], 12, 'the agent still lists its key');
    assert.equal(ssh(sock, 'deploy').status, 0);
  });
});

const CHUNK = 8 * 1024 * 1024;

/** Which of `needles` occur in the writable memory of `pid` (read as root). */
function inMemory(pid: number, needles: readonly Buffer[]): boolean[] {
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  const found = needles.map(() => false);
  let scanned = 0;
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) rw/.exec(line);
      if (m === null) continue;
      const start = parseInt(m[1] as string, 16);
      const end = parseInt(m[2] as string, 16);
      for (let at = start; at < end; at += CHUNK - 64) {
        const len = Math.min(CHUNK, end - at);
        const buf = Buffer.alloc(len);
        let n = 0;
        try {
          n = readSync(fd, buf, 0, len, at);
        } catch {
          continue;
        }
        scanned += n;
        const seen = buf.subarray(0, n);
        needles.forEach((k, i) => {
          if (!found[i] && seen.includes(k)) found[i] = true;
        });
        if (len < CHUNK) break;
      }
    }
  } finally {
    closeSync(fd);
  }
  assert.ok(scanned > 1024 * 1024, `read ${scanned} bytes of the agent's memory`);
  return found;
}
