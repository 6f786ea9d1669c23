// `vault-cli exec --env NAME=vault://E/f -- cmd` (issue 23, environment-only
// tools): real processes. The command sees the value in its environment;
// vault-cli's argv (and, where it stays a process of its own, its environment)
// never holds it; a refused or malformed reference starts nothing; the
// command's exit status, its death by a signal and its streams are its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords, hex } from '../support/e2e-helpers.js';
import { CLI, Rig, fate, ok, type Result } from '../support/rig.js';
import { until } from '../support/pty.js';

const rig = new Rig();
let token = '';
const VALUE = `s3cr3t-${hex(8)}`;

before(async () => {
  await rig.create();
  await rig.set('DB', VALUE);
  await rig.set('DB', 'db.internal', 'host');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('tool', ['DB'], ['--per-minute', '100', '--per-hour', '1000']);
});
after(() => rig.dispose());

const exec = (args: readonly string[], input?: string): Promise<Result> =>
  rig.agent(['exec', ...args], token, input === undefined ? {} : { input });

/** A marker file the command would create if it were started. */
function marker(): { path: string; script: string } {
  const path = join(rig.root, `started-${hex(4)}`);
  return { path, script: `touch ${JSON.stringify(path)}` };
}

/**
 * `vault-cli exec ...` as the agent, its stdin a pipe the test holds, so the
 * test can look at the running process; `preload` is a module Node imports
 * first (to take process.execve away: the path of a Node without it).
 */
function started(args: readonly string[], preload?: string) {
  const env: NodeJS.ProcessEnv = { ...rig.env, VAULT_TOKEN: token };
  delete env.VAULT_PASSPHRASE_FILE;
  const node = preload === undefined ? [] : ['--import', preload];
  const child = spawn(process.execPath, [...node, CLI, 'exec', ...args], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { child, fate: fate(child), output: () => out };
}

/** Every process's command line, as `ps` shows it to the same user. */
async function psArgs(): Promise<string> {
  const ps = spawn('ps', ['-e', '-ww', '-o', 'args='], { stdio: ['ignore', 'pipe', 'pipe'] });
  const r = await fate(ps);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test('the command sees the value in its environment, and a reference inside a longer text is replaced', async () => {
  const r = await exec([
    '--env',
    'PGPASSWORD=vault://DB/password',
    '--env',
    'DATABASE_URL=postgres://app:{{ vault://DB/password }}@{{ vault://DB/host }}:5432/app',
    '--',
    'sh',
    '-c',
    'printf "%s|%s" "$PGPASSWORD" "$DATABASE_URL"',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.equal(r.stdout, `${VALUE}|postgres://app:${VALUE}@db.internal:5432/app`);
});

test('argv of vault-cli never holds the value: /proc/<pid>/cmdline and ps while the command runs', async () => {
  const ready = `ready-${hex(4)}`;
  const run = started([
    '--env',
    'PGPASSWORD=vault://DB/password',
    '--',
    'sh',
    '-c',
    `echo ${ready}; read go; exit 7`,
  ]);
  await until(() => run.output().includes(ready), 'the command');
  const pid = run.child.pid as number;
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  assert.doesNotMatch(cmdline, new RegExp(VALUE));
  assert.doesNotMatch(await psArgs(), new RegExp(VALUE));
  // The process vault-cli was is now the command (execve): the value is where
  // docs/threat-model.md says, in its environment and nowhere else.
  assert.match(readFileSync(`/proc/${pid}/environ`, 'utf8'), new RegExp(`PGPASSWORD=${VALUE}`));
  run.child.stdin.end('go\n');
  const r = await run.fate;
  assert.equal(r.code, 7, r.stderr);
  assert.equal(r.stdout, `${ready}\n`);
});

test('on a Node without process.execve, vault-cli stays the parent: its argv and environment hold no value, the status comes back', async () => {
  const ready = `ready-${hex(4)}`;
  const run = started(
    [
      '--env',
      'PGPASSWORD=vault://DB/password',
      '--',
      'sh',
      '-c',
      `echo ${ready} $$; read go; exit 9`,
    ],
    'data:text/javascript,delete process.execve',
  );
  await until(() => run.output().includes(ready), 'the command');
  const pid = run.child.pid as number;
  const childPid = Number(run.output().split(' ')[1]);
  assert.notEqual(childPid, pid);
  for (const f of ['cmdline', 'environ'])
    assert.doesNotMatch(readFileSync(`/proc/${pid}/${f}`, 'utf8'), new RegExp(VALUE), f);
  assert.match(readFileSync(`/proc/${childPid}/environ`, 'utf8'), new RegExp(VALUE));
  assert.doesNotMatch(await psArgs(), new RegExp(VALUE));
  run.child.stdin.end('go\n');
  const r = await run.fate;
  assert.equal(r.code, 9, r.stderr);

  const killed = started(
    ['--env', 'V=vault://DB/password', '--', 'sh', '-c', 'kill -TERM $$'],
    'data:text/javascript,delete process.execve',
  );
  killed.child.stdin.end();
  assert.equal((await killed.fate).code, 128 + 15);
});

test('the exit status, a death by signal and the three streams are the command’s own', async () => {
  const seven = await exec(['--env', 'V=vault://DB/password', '--', 'sh', '-c', 'exit 7']);
  assert.equal(seven.code, 7, seven.stderr);

  const killed = await exec(['--env', 'V=vault://DB/password', '--', 'sh', '-c', 'kill -TERM $$']);
  assert.equal(killed.signal, 'SIGTERM');

  const streams = await exec(
    ['--env', 'V=vault://DB/host', '--', 'sh', '-c', 'read l; echo "out:$l:$V"; echo err >&2'],
    'line\n',
  );
  assert.equal(streams.code, 0, streams.stderr);
  assert.equal(streams.stdout, 'out:line:db.internal\n');
  assert.equal(streams.stderr, 'err\n');
});

test('an entry out of scope is VLT-2041 and the command is not started', async () => {
  const m = marker();
  const r = await exec([
    '--env',
    'A=vault://DB/password',
    '--env',
    'B=vault://Payroll/password',
    '--',
    'sh',
    '-c',
    m.script,
  ]);
  const body = assertRefused(r, 'VLT-2041');
  assert.match(body, /^--env B: vault:\/\/Payroll\/password: /);
  assert.equal(existsSync(m.path), false);
  // Nothing of the scope was released either: all or nothing.
  assert.doesNotMatch(r.stderr, new RegExp(VALUE));
});

test('a malformed reference, or none, is VLT-2046: nothing is read and nothing started', async () => {
  const m = marker();
  const before = (await auditRecords(rig)).length;
  for (const spec of ['A=vault://DB/', 'A=vault:///password', 'A=no-reference-here']) {
    const r = await exec(['--env', spec, '--', 'sh', '-c', m.script]);
    assertRefused(r, 'VLT-2046', spec);
  }
  assert.equal(existsSync(m.path), false);
  assert.equal((await auditRecords(rig)).length, before);
});

test('usage: no --env, a bad name, no command; a command not found is 127 and reads nothing', async () => {
  const m = marker();
  assertRefused(await exec(['--', 'sh', '-c', m.script]), 'VLT-1001');
  assertRefused(await exec(['--env', '1A=vault://DB/password', '--', 'sh']), 'VLT-1001');
  assertRefused(await exec(['--env', 'A=vault://DB/password']), 'VLT-1001');
  const before = (await auditRecords(rig)).length;
  assertRefused(
    await exec(['--env', 'A=vault://DB/password', '--', `no-such-command-${hex(4)}`]),
    'VLT-1004',
  );
  assert.equal((await auditRecords(rig)).length, before);
  assert.equal(existsSync(m.path), false);
});

test('each release is audited for the agent, with no value in the audit log', async () => {
  const r = await exec(['--env', 'V=vault://DB/password', '--', 'true']);
  assert.equal(r.code, 0, r.stderr);
  const records = await auditRecords(rig);
  const last = records.at(-1);
  assert.equal(last?.actor, 'cli:tool');
  assert.equal(last?.outcome, 'ok');
  assert.equal(last?.entry, 'DB');
  assert.doesNotMatch(ok(await rig.owner(['audit', '--json'])), new RegExp(VALUE));
});
