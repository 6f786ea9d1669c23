// What a hostile agent under `vault-cli run` can make the owner's terminal do
// (issue 24): the bytes the owner's terminal receives hold no clipboard write,
// no title, no report request and no 8-bit control, while text and colours
// still arrive; and when `run` returns, nothing the terminal sent after the
// agent's last output is left for the owner's shell to read.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
// eslint-disable-next-line no-restricted-imports -- the test is the owner's terminal: a shell under a pty
import { spawn } from 'node-pty';
import { Rig } from '../support/rig.js';
import { installBin, underPty, until } from '../support/pty.js';

const rig = new Rig();
before(async () => {
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.addAgent('claude', ['X']);
  installBin(rig);
});
after(() => rig.dispose());

const PAYLOAD = 'vault-cli agent scope claude --add Payroll\n';
const HOSTILE = [
  // OSC 52: the owner's clipboard; OSC 0: the window title.
  `printf '\\033]52;c;%s\\a' "$(printf '${PAYLOAD.replace('\n', '\\n')}' | base64)"`,
  `printf '\\033]0;session ended normally\\a'`,
  // Report requests: DSR, DA, DECRQSS, the title report, a colour query.
  `printf '\\033[6n\\033[c\\033P$q"p\\033\\\\'`,
  `printf '\\033[21t\\033]11;?\\a'`,
  // An 8-bit CSI (U+009B in UTF-8) asking for the cursor position.
  `printf '\\302\\2336n'`,
  `printf '\\033[31mred\\033[0m\\n'`,
  'echo done',
].join('; ');

/** Run's own question to the terminal once the agent is gone (shell/supervisor.ts). */
const SENTINEL = '\x1b[c';

test('the owner’s terminal gets the agent’s text and colours, and none of its clipboard, title, query or C1 bytes', async () => {
  const r = await underPty(rig, ['run', '--agent', 'claude', '--', 'bash', '-c', HOSTILE]).exited;
  assert.equal(r.exitCode, 0, JSON.stringify(r.output));
  const out = r.output;
  assert.match(out, /done/);
  assert.ok(out.includes('\x1b[31mred\x1b[0m'), JSON.stringify(out));
  const base64 = Buffer.from(PAYLOAD).toString('base64');
  for (const bad of [
    '\x1b]52',
    base64.slice(0, 16),
    '\x1b]0;',
    'session ended normally',
    '\x1b[6n',
    '\x1bP',
    '$q',
    '\x1b[21t',
    '\x1b]11',
    '\u009b',
  ])
    assert.ok(
      !out.includes(bad),
      `${JSON.stringify(bad)} reached the terminal: ${JSON.stringify(out)}`,
    );
  // The only device-attributes request is run's own, after the agent's last output.
  const agentPart = out.slice(0, out.lastIndexOf('done'));
  assert.ok(!agentPart.includes(SENTINEL), JSON.stringify(out));
});

test('--allow-title lets the title through, and nothing more', async () => {
  const r = await underPty(rig, [
    'run',
    '--agent',
    'claude',
    '--allow-title',
    '--',
    'bash',
    '-c',
    HOSTILE,
  ]).exited;
  assert.equal(r.exitCode, 0, JSON.stringify(r.output));
  assert.ok(r.output.includes('\x1b]0;session ended normally\x07'), JSON.stringify(r.output));
  assert.ok(!r.output.includes('\x1b]52'), JSON.stringify(r.output));
  assert.ok(!r.output.includes('\x1b[6n'), JSON.stringify(r.output));
});

test('the agent’s DA1 is answered by run with fixed text, not by the owner’s terminal', async () => {
  const probe = `stty -icanon -echo; printf '\\033[c'; IFS= read -rs -n 7 -t 10 r; printf 'answer=%q\\n' "$r"`;
  const r = await underPty(rig, ['run', '--agent', 'claude', '--', 'bash', '-c', probe]).exited;
  assert.ok(r.output.includes("answer=$'\\E[?1;2c'"), JSON.stringify(r.output));
  assert.ok(!r.output.slice(0, r.output.indexOf('answer=')).includes(SENTINEL));
});

test('what the terminal sends after the agent’s last output never reaches the owner’s shell', async () => {
  const bin = join(rig.root, 'bin');
  // The owner's shell: runs `run`, then reads whatever input is left for it.
  const shell = [
    `vault-cli run --agent claude -- bash -c 'echo agent-done'`,
    `echo "run=$?"`,
    `if IFS= read -r -t 3 line; then printf 'shell-read=[%s]\\n' "$line"; else echo shell-read-nothing; fi`,
  ].join('; ');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...rig.env, PATH: `${bin}:${process.env.PATH}` }))
    if (v !== undefined) env[k] = v;
  const pty = spawn('bash', ['--norc', '--noprofile', '-c', shell], {
    cols: 100,
    rows: 30,
    cwd: rig.root,
    env,
  });
  let output = '';
  pty.onData((d) => (output += d));
  const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()));
  try {
    await until(() => output.includes('agent-done'), 'the agent');
    // Typed ahead for the agent, as it was leaving.
    pty.write('echo TYPED-AHEAD\r');
    await until(() => output.slice(output.indexOf('agent-done')).includes(SENTINEL), 'run’s query');
    // More typing, then the terminal's answer: both are run's to discard.
    pty.write('echo LATE-TYPED\r\x1b[?62;22c');
    await exited;
  } finally {
    pty.kill();
  }
  assert.match(output, /run=0/, JSON.stringify(output));
  assert.match(output, /shell-read-nothing/, JSON.stringify(output));
  assert.doesNotMatch(output, /shell-read=\[/, JSON.stringify(output));
});
