// Values go only into pipes: `get`, `totp` and `render` refuse a stdout that
// is a terminal (a real pty) or a regular file with VLT-2050, before anything
// is asked of the host, and write to a pipe, a socket or /dev/null as before.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords } from '../support/e2e-helpers.js';
import { underPty } from '../support/pty.js';
import { CLI, Rig, fate, type Result } from '../support/rig.js';

const rig = new Rig();
let token = '';
let agentEnv: NodeJS.ProcessEnv = {};

interface Case {
  readonly name: string;
  readonly args: () => string[];
  /** What the command prints into a pipe. */
  readonly piped: RegExp;
}

const template = () => join(rig.root, 'app.txt');
const CASES: readonly Case[] = [
  { name: 'get', args: () => ['get', 'Stripe Prod'], piped: /^hunter2\n$/ },
  { name: 'totp', args: () => ['totp', 'GitHub'], piped: /^[0-9]{6}\n$/ },
  { name: 'render', args: () => ['render', template()], piped: /^key=sk_live_x\n$/ },
];
const SECRETS = ['hunter2', 'sk_live_x'];

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'hunter2');
  await rig.set('Stripe Prod', 'sk_live_x', 'key');
  await rig.set('GitHub', 'JBSWY3DPEHPK3PXP', 'totp');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('a', ['Stripe Prod', 'GitHub'], ['--per-minute', '100']);
  agentEnv = { ...rig.env, VAULT_TOKEN: token };
  delete agentEnv.VAULT_PASSPHRASE_FILE;
  writeFileSync(template(), 'key=vault://Stripe Prod/key\n');
});
after(() => rig.dispose());

/** Runs the CLI with `stdout` as its fd 1 (a file's descriptor, or 'pipe'). */
function withStdout(args: readonly string[], stdout: number | 'pipe'): Promise<Result> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: agentEnv,
    stdio: ['ignore', stdout, 'pipe'],
  });
  return fate(child);
}

/** Runs `vault-cli args | cat` in sh: the CLI's stdout is a FIFO. */
function throughFifo(args: readonly string[]): Promise<Result> {
  const child = spawn('sh', ['-c', '"$0" "$@" | cat', process.execPath, CLI, ...args], {
    env: agentEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return fate(child);
}

const audited = async () => (await auditRecords(rig)).length;

for (const c of CASES) {
  test(`${c.name}: a terminal (a real pty) is refused with VLT-2050, before the host is asked`, async () => {
    const before = await audited();
    const r = await underPty(rig, c.args(), {
      VAULT_TOKEN: token,
      VAULT_PASSPHRASE_FILE: undefined,
    }).exited;
    assert.equal(r.exitCode, 64, r.output);
    assert.match(
      r.output,
      /^vault-cli: VLT-2050: Values go only into a pipe, and stdout is a terminal: pipe it to /,
    );
    assert.equal(r.output.trimEnd().split('\n').length, 1, r.output);
    for (const s of SECRETS) assert.ok(!r.output.includes(s), r.output);
    assert.equal(await audited(), before, 'no request reached the host');
  });

  test(`${c.name}: a regular file is refused with VLT-2050 and stays empty`, async () => {
    const before = await audited();
    const path = join(rig.root, `${c.name}.out`);
    const fd = openSync(path, 'w');
    let r: Result;
    try {
      r = await withStdout(c.args(), fd);
    } finally {
      closeSync(fd);
    }
    const msg = assertRefused(r, 'VLT-2050');
    assert.match(msg, /stdout is a file: pipe it to the program that needs it/);
    assert.equal(statSync(path).size, 0);
    assert.equal(await audited(), before, 'no request reached the host');
  });

  test(`${c.name}: a pipe, a socket and /dev/null take the value`, async () => {
    const fifo = await throughFifo(c.args());
    assert.equal(fifo.code, 0, fifo.stderr);
    assert.match(fifo.stdout, c.piped);
    assert.equal(fifo.stderr, '');

    // Node's 'pipe' stdio is a socketpair.
    const socket = await withStdout(c.args(), 'pipe');
    assert.equal(socket.code, 0, socket.stderr);
    assert.match(socket.stdout, c.piped);

    const fd = openSync('/dev/null', 'w');
    try {
      const r = await withStdout(c.args(), fd);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
    } finally {
      closeSync(fd);
    }
  });
}

test('render into a pipe stays all or nothing: one bad reference, nothing written', async () => {
  const bad = join(rig.root, 'bad.txt');
  writeFileSync(bad, 'key=vault://Stripe Prod/key\npay=vault://Payroll/password\n');
  const r = await throughFifo(['render', bad]);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^vault-cli: VLT-2041: vault:\/\/Payroll\/password: /);
});

test('the owner sees a value on a terminal with entry show --reveal, audited as reveal', async () => {
  const r = await underPty(rig, ['entry', 'show', 'Stripe Prod', '--reveal', '--field', 'key'])
    .exited;
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output.replace(/\r/g, ''), 'sk_live_x\n');
  const last = (await auditRecords(rig)).at(-1);
  assert.equal(last?.action, 'reveal');
  assert.equal(last?.actor, 'owner');
  assert.equal(last?.entry, 'Stripe Prod');
  assert.equal(last?.field, 'key');

  const missing = await rig.owner(['entry', 'show', 'Stripe Prod', '--reveal', '--field', 'nope']);
  const msg = assertRefused(missing, 'VLT-2044');
  assert.ok(!msg.includes('sk_live_x') && !msg.includes('hunter2'), msg);
  assert.equal(missing.stdout, '');
  const plain = await rig.owner(['entry', 'show', 'Stripe Prod', '--field', 'key']);
  assertRefused(plain, 'VLT-1001');
});

test('an agent with a token and no passphrase cannot reveal: the prompt needs a terminal', async () => {
  const r = await withStdout(['entry', 'show', 'Stripe Prod', '--reveal'], 'pipe');
  assertRefused(r, 'VLT-1003');
});
