// `vault-cli run` in a script: no pty when stdin or stdout is not a terminal
// (or with --no-pty). The command's stdout and stderr reach run's apart, byte
// for byte; the sandbox and the session still apply; signals and the exit
// status pass through.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { livePidsWith } from '../support/procs.js';
import { installBin, underPty, until } from '../support/pty.js';
import { CLI, Rig, fate } from '../support/rig.js';

const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.addAgent('ci', ['X']);
  installBin(rig);
});
after(() => rig.dispose());

const env = () => ({ PATH: `${join(rig.root, 'bin')}:${process.env.PATH}` });
const run = (script: string, input?: string | Buffer) =>
  rig.owner(['run', '--agent', 'ci', '--', 'sh', '-c', script], {
    env: env(),
    ...(input === undefined ? {} : { input }),
  });

/** Every byte value, CR, LF and an OSC 52 among them: what a script may pipe. */
const BYTES = Buffer.from([...Array(256).keys()]);

test('stdout captured by a script is byte-exact, stderr apart, the exit status passed', async () => {
  const octal = [...BYTES].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
  const r = await run(`printf '${octal}'; printf 'hello\\n'; echo to-stderr >&2; exit 3`);
  assert.equal(r.code, 3, r.stderr);
  assert.deepEqual(r.stdoutBytes, Buffer.concat([BYTES, Buffer.from('hello\n')]));
  // The command's stderr is on run's stderr, with run's own lines, and not on stdout.
  assert.match(r.stderr, /^to-stderr$/m);
  assert.ok(!r.stdout.includes('to-stderr'));
  assert.match(r.stderr, /^vault-cli: running "sh" as agent "ci", in the sandbox$/m);
});

test('`v=$(vault-cli run -- echo hello)` is "hello", no \\r; the agent reads into it', async () => {
  const r = await run('echo hello; vault-cli get X');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'hello\nhunter2\n');
});

test('stdin reaches the command as it is, to its end', async () => {
  const input = Buffer.concat([BYTES, Buffer.from('\r\nlast line without newline')]);
  const r = await run('cat; echo "<eof>" >&2', input);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdoutBytes, input);
  assert.match(r.stderr, /^<eof>$/m);
});

test('the command sees no terminal, and a session token; the sandbox still applies', async () => {
  const r = await run(
    '[ -t 0 ] || [ -t 1 ] || [ -t 2 ] || echo no-terminal; ' +
      'echo "${VAULT_TOKEN%%_*}"; ' +
      `cat ${JSON.stringify(rig.passphraseFile)} 2>/dev/null || echo "owner file hidden"`,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'no-terminal\nvlt\nowner file hidden\n');
});

test('a signal to run reaches the command, which may handle it; its status comes back', async () => {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'run',
      '--agent',
      'ci',
      '--',
      'sh',
      '-c',
      "trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done",
    ],
    { env: { ...rig.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const done = fate(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => out.includes('ready'), 'the command');
  child.kill('SIGTERM');
  const r = await done;
  assert.equal(r.code, 7, r.stderr);
  assert.equal(r.stdout, 'ready\ngot-term\n');
});

test('a command killed by a signal gives 128 + its number, as a shell would', async () => {
  const r = await run('kill -KILL $$');
  assert.equal(r.code, 137, r.stderr);
});

test('--no-pty at a terminal: no pty either, and the terminal still gets filtered output', async () => {
  const r = await underPty(
    rig,
    [
      'run',
      '--agent',
      'ci',
      '--no-pty',
      '--',
      'sh',
      '-c',
      // An OSC 52 clipboard write: dropped on its way to a terminal, as under a pty.
      "[ -t 1 ] || echo no-pty-here; printf 'a\\033]52;c;aGk=\\007b\\n'",
    ],
    env(),
  ).exited;
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /no-pty-here/);
  assert.match(r.output, /ab\r\n/);
  assert.ok(!r.output.includes(']52;'), r.output);
  // No pty: no dashboard to offer.
  assert.doesNotMatch(r.output, /Ctrl-\]/);
});

/** Starts `run` with pipes, as a script would, and waits until the command printed "ready". */
async function started(script: string, flags: readonly string[] = []) {
  const child = spawn(
    process.execPath,
    [CLI, 'run', '--agent', 'ci', ...flags, '--', 'sh', '-c', script],
    // In the rig's directory: a run killed there leaves the sandbox's placeholders (docs/sandbox.md).
    { cwd: rig.root, env: { ...rig.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const done = fate(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => out.includes('ready'), 'the command');
  return { child, done };
}

test('a command that ignores SIGTERM is killed when run is told to stop: 137', async () => {
  const { child, done } = await started("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  child.kill('SIGTERM');
  assert.equal((await done).code, 137);
});

test('run killed by SIGKILL leaves nothing of the sandboxed command behind', async () => {
  // A number no other process carries, in the command's line and its sleep's.
  const marker = String(800_000 + Math.floor(Math.random() * 90_000));
  const { child, done } = await started(`echo ready; sleep ${marker}`);
  await until(() => livePidsWith(marker).length >= 1, 'the sleep');
  child.kill('SIGKILL');
  await done;
  await until(() => livePidsWith(marker).length === 0, 'the command to go');
});

test('--no-sandbox without a pty: signals reach the command, and what it left running is hung up', async () => {
  const marker = String(700_000 + Math.floor(Math.random() * 90_000));
  const { child, done } = await started(
    `sleep ${marker} & trap 'echo got-int; exit 5' INT; echo ready; while :; do sleep 0.05; done`,
    ['--no-sandbox'],
  );
  await until(() => livePidsWith(marker).length >= 1, 'the sleep');
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 5, r.stderr);
  assert.equal(r.stdout, 'ready\ngot-int\n');
  assert.match(r.stderr, /NOT sandboxed/);
  await until(() => livePidsWith(marker).length === 0, 'the background sleep to go');
});
