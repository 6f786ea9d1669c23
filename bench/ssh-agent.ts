/**
 * Signatures a second through `vault-cli ssh-agent` (each one a host round
 * trip: checked, charged, audited and signed in the host) beside OpenSSH's
 * own `ssh-agent` holding the same key, in one run, rounds alternated. One
 * client, one signature in flight, the agent protocol over the Unix socket
 * (no ssh process): what an agent's own cost is. Asserts nothing.
 *
 *   node --import tsx bench/ssh-agent.ts [seconds-per-round] [rounds]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parsePublicKeyLine } from '../src/core/ssh-keyfile.js';
import { encodeRequest, takeFrames, WireWriter } from '../src/core/ssh-wire.js';
import { CLI, Rig, ok } from '../test/support/rig.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);

/** Signs with `blob` through the agent at `sock` for `ms`, one request at a time; signatures a second. */
async function rate(sock: string, blob: Buffer, ms: number, flags = 0): Promise<number> {
  const c = connect(sock);
  await new Promise((r) => c.once('connect', r));
  let pending = Buffer.alloc(0);
  let waiting: ((b: Buffer) => void) | null = null;
  c.on('data', (d: Buffer) => {
    pending = Buffer.concat([pending, d]);
    const { frames, rest } = takeFrames(pending);
    pending = Buffer.from(rest);
    for (const f of frames) waiting?.(f);
  });
  const data = new WireWriter().string(Buffer.alloc(32, 1)).byte(50).string('git').bytes();
  const until = Date.now() + ms;
  let n = 0;
  const t0 = process.hrtime.bigint();
  while (Date.now() < until) {
    const reply = await new Promise<Buffer>((resolve) => {
      waiting = resolve;
      c.write(encodeRequest.sign(blob, data, flags));
    });
    if (reply[0] !== 14) throw new Error(`agent refused (type ${reply[0]})`);
    n += 1;
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  c.destroy();
  return n / s;
}

async function waitFor(path: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (child.exitCode !== null) throw new Error(`${path}: agent exited`);
    try {
      await new Promise<void>((res, rej) => {
        const c = connect(path, () => {
          c.destroy();
          res();
        });
        c.on('error', rej);
      });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`${path}: no agent`);
}

const rig = new Rig();
const children: ChildProcess[] = [];
try {
  await rig.create();
  const rows: string[] = [];
  for (const [type, args] of [
    ['ed25519', ['-t', 'ed25519']],
    ['ecdsa-p256', ['-t', 'ecdsa', '-b', '256']],
    ['rsa-3072', ['-t', 'rsa', '-b', '3072']],
  ] as const) {
    const file = join(rig.root, type);
    spawnSync('ssh-keygen', ['-q', ...args, '-N', '', '-f', file]);
    ok(await rig.owner(['entry', 'import-ssh', type, file]));
    const token = await rig.addAgent(`bench-${type}`, [type]);
    await rig.liftValuesLimit(`bench-${type}`);
    const vaultSock = join(rig.root, `${type}-vault.sock`);
    const v = spawn(process.execPath, [CLI, 'ssh-agent', '--socket', vaultSock, type], {
      env: { ...rig.env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token },
      stdio: 'ignore',
    });
    children.push(v);
    const osSock = join(rig.root, `${type}-openssh.sock`);
    const o = spawn('ssh-agent', ['-D', '-a', osSock], { stdio: 'ignore' });
    children.push(o);
    await Promise.all([waitFor(vaultSock, v), waitFor(osSock, o)]);
    const added = spawnSync('ssh-add', ['-q', file], {
      env: { ...process.env, SSH_AUTH_SOCK: osSock },
    });
    if (added.status !== 0) throw new Error(`ssh-add: ${added.stderr.toString()}`);
    const blob = parsePublicKeyLine(readFileSync(`${file}.pub`, 'utf8')) as Buffer;
    const flags = type.startsWith('rsa') ? 2 : 0;
    const vault: number[] = [];
    const openssh: number[] = [];
    for (let r = 0; r < rounds; r++) {
      vault.push(await rate(vaultSock, blob, seconds * 1000, flags));
      openssh.push(await rate(osSock, blob, seconds * 1000, flags));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    rows.push(
      `| ${type} | ${med(vault).toFixed(0)} | ${med(openssh).toFixed(0)} | ${(med(openssh) / med(vault)).toFixed(1)}x |`,
    );
    v.kill('SIGTERM');
    o.kill('SIGTERM');
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`signatures/s, median of ${rounds} alternated rounds of ${seconds} s (load ${load})`);
  console.log('| key | vault-cli ssh-agent | OpenSSH ssh-agent | ratio |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows) console.log(r);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await rig.dispose();
}
