// `vault-cli run`: real processes under a real pty. The supervisor itself is
// driven from a pty (node-pty spawning the built CLI), so it sees a terminal.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pidsWith, zombie } from '../support/procs.js';
import { installBin, runScript, until, type ScriptOptions } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token = '';
let slow = '';

before(async () => {
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.set('Y', 'other');
  token = await rig.addAgent('a', ['X', 'Y']);
  slow = await rig.addAgent('slow', ['X', 'Y'], ['--per-minute', '1']);
  installBin(rig);
});
after(() => rig.dispose());

/** `run --agent a -- sh -c script` under a pty (the options as runScript takes them). */
const sh = (script: string, o: ScriptOptions = {}) => runScript(rig, script, { ...o, shell: 'sh' });

test('the child gets a session token, reads in scope into a pipe (not onto its pty), and its exit status comes back', async () => {
  const r = await sh(
    'echo "prefix=$(echo $VAULT_TOKEN | cut -c1-4)"; vault-cli get X; echo "status=$?"; vault-cli get X | cat; exit 3',
  ).exited;
  assert.match(r.output, /prefix=vlt_/);
  assert.match(r.output, /^vault-cli: VLT-2050: .*stdout is a terminal/m);
  assert.match(r.output, /^status=64/m);
  assert.match(r.output, /hunter2/);
  assert.equal(r.exitCode, 3, r.output);
});

test('the environment holds no owner variable and no long-lived token; secrets are stripped unless kept', async () => {
  const script =
    'echo "pp=[$VAULT_PASSPHRASE_FILE] cfg=[$VAULT_CONFIG_DIR] planted=[$MY_API_TOKEN] plain=[$PLAIN]"; env | grep -c "' +
    token +
    '" || true';
  const plain = await sh(script, {
    env: {
      MY_API_TOKEN: 'planted-secret',
      PLAIN: 'hello',
      VAULT_TOKEN: token,
    },
  }).exited;
  assert.match(plain.output, /pp=\[\] cfg=\[\] planted=\[\] plain=\[hello\]/);
  assert.match(plain.output, /^0\r?$/m);
  assert.equal(plain.exitCode, 0, plain.output);

  const kept = await sh(script, {
    flags: ['--keep-env', 'MY_API_TOKEN'],
    env: { MY_API_TOKEN: 'planted-secret' },
  }).exited;
  assert.match(kept.output, /planted=\[planted-secret\]/);
});

test('--scope narrows the session: an entry of the agent outside it is refused', async () => {
  const r = await sh('vault-cli get X | cat; vault-cli get Y >/dev/null; echo "status=$?"', {
    flags: ['--scope', 'X'],
  }).exited;
  assert.match(r.output, /hunter2/);
  assert.match(r.output, /VLT-2041/);
  assert.match(r.output, /status=77/);
});

test('a session token is refused with VLT-2040 once the child has exited', async () => {
  const dir = join(rig.root, 'leak');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'token');
  const r = await sh(`printf %s "$VAULT_TOKEN" > ${JSON.stringify(file)}`).exited;
  assert.equal(r.exitCode, 0, r.output);
  const session = readFileSync(file, 'utf8');
  assert.match(session, /^vlt_/);
  assert.notEqual(session, token);
  const after = await rig.agent(['get', 'X'], session);
  assert.equal(after.code, 77);
  assert.match(after.stderr, /^vault-cli: VLT-2040: /);
  // The agent's own token is untouched.
  assert.equal((await rig.agent(['get', 'X'], token)).stdout, 'hunter2\n');
});

test('a child killed by SIGTERM gives 143', async () => {
  const r = await sh('kill -TERM $$').exited;
  assert.equal(r.exitCode, 143, r.output);
});

test('input reaches the child through the supervisor', async () => {
  const run = sh('echo ready; read line; echo "got=$line"');
  await until(() => run.output().includes('ready'), 'the child');
  // Keys typed one at a time, as a user would.
  for (const ch of 'ping\r') run.pty.write(ch);
  const r = await run.exited;
  assert.match(r.output, /got=ping/);
});

test('killing the supervisor with SIGKILL leaves no child behind', async () => {
  // A number no other process carries: in the shell's command line and the sleep's.
  const marker = String(900_000 + Math.floor(Math.random() * 90_000));
  const run = sh(`echo started; sleep ${marker}`);
  await until(() => run.output().includes('started') && pidsWith(marker).length >= 2, 'the child');
  process.kill(run.pty.pid, 'SIGKILL');
  await run.exited;
  await until(() => pidsWith(marker).every(zombie), 'the child to go');
  assert.deepEqual(
    pidsWith(marker).filter((p) => !zombie(p)),
    [],
  );
});

test('a session shares the agent’s rate state: its read counts against the agent’s token', async () => {
  const r = await sh('vault-cli get X | cat', { agent: 'slow' }).exited;
  assert.match(r.output, /hunter2/);
  assert.match(ok(await rig.owner(['agent', 'show', 'slow'])), /this minute: 1 of 1 /);
  const own = await rig.agent(['get', 'Y'], slow);
  assert.equal(own.code, 75, own.stderr);
  assert.match(own.stderr, /^vault-cli: VLT-2042: /);
});

test('SIGTERM to the supervisor reaches the child: 143', async () => {
  const run = sh('echo ready; sleep 100');
  await until(() => run.output().includes('ready'), 'the child');
  run.pty.kill('SIGTERM');
  assert.equal((await run.exited).exitCode, 143);
});

test('a child that ignores SIGTERM is killed when the supervisor is told to stop: 137', async () => {
  const run = sh("trap '' TERM; echo ready; while :; do sleep 1; done");
  await until(() => run.output().includes('ready'), 'the child');
  run.pty.kill('SIGTERM');
  assert.equal((await run.exited).exitCode, 137);
});

test('a command that does not exist is refused before any session is minted: 127', async () => {
  const r = await rig.owner(['run', '--agent', 'a', '--', 'no-such-command-here']);
  assert.equal(r.code, 127);
  assert.equal(r.stderr, 'vault-cli: VLT-1004: Command not found: "no-such-command-here".\n');
});

/** The audit as records, oldest first. */
async function auditRecords(): Promise<{ action: string; actor: string; outcome: string }[]> {
  return ok(await rig.owner(['audit', '--json']))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { action: string; actor: string; outcome: string });
}

test('run names on stderr every variable it did not pass, never a value; a vault:// reference passes', async () => {
  const secret = 'ghp_' + 'Zq8'.repeat(12);
  const r = await rig.owner(
    [
      'run',
      '--agent',
      'a',
      '--',
      'sh',
      '-c',
      'echo "model=[$ANTHROPIC_API_KEY] gh=[$GITHUB_TOKEN] npm=[$NPM_TOKEN]"',
    ],
    {
      env: {
        ANTHROPIC_API_KEY: 'vault://Anthropic/key',
        GITHUB_TOKEN: secret,
        NPM_TOKEN: 'npm_x',
      },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'model=[vault://Anthropic/key] gh=[] npm=[]\n');
  const lines = r.stderr.split('\n').filter((l) => l.includes('not passed'));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] ?? '', /^vault-cli: not passed to the agent: .*\bGITHUB_TOKEN NPM_TOKEN\b/);
  assert.match(lines[0] ?? '', /--keep-env NAME/);
  assert.doesNotMatch(lines[0] ?? '', /ANTHROPIC_API_KEY/);
  assert.ok(!r.stderr.includes(secret) && !r.stderr.includes('npm_x'));

  const kept = await rig.owner(
    ['run', '--agent', 'a', '--keep-env', 'NPM_TOKEN', '--', 'sh', '-c', 'echo "[$NPM_TOKEN]"'],
    { env: { NPM_TOKEN: 'npm_x' } },
  );
  assert.equal(kept.stdout, '[npm_x]\n');
  assert.doesNotMatch(kept.stderr, /not passed.*NPM_TOKEN/);
});

test('a run says what it starts and, at its end, what the session did; no record follows session_end', async () => {
  const r = await rig.owner(
    [
      'run',
      '--agent',
      'a',
      '--',
      'sh',
      '-c',
      'vault-cli get X >/dev/null; vault-cli get Y >/dev/null; vault-cli get Nope 2>/dev/null; exit 4',
    ],
    { env: { PATH: `${join(rig.root, 'bin')}:${process.env.PATH}` } },
  );
  assert.equal(r.code, 4, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('vault-cli: '));
  assert.match(lines.at(0) ?? '', /^vault-cli: (not passed|running)/);
  assert.equal(
    lines.filter((l) => l.startsWith('vault-cli: running ')).join('\n'),
    'vault-cli: running "sh" as agent "a", in the sandbox',
  );
  assert.equal(
    lines.at(-1),
    'vault-cli: session ended: 2 reads, 1 refusal; exit status 4; session token revoked',
  );
  const records = await auditRecords();
  const end = records.findLastIndex((x) => x.action === 'session_end');
  assert.ok(end >= 0);
  // Nothing after it: run no longer presents the revoked token on its way out.
  assert.deepEqual(records.slice(end + 1), []);
  assert.deepEqual(
    records.slice(records.findLastIndex((x) => x.action === 'session_start')).map((x) => x.action),
    ['session_start', 'ai_read', 'ai_read', 'denied', 'session_end'],
  );
});

test('the proxy’s refusals of the session are shown on run’s stderr, one line each', async () => {
  const r = await rig.owner([
    'run',
    '--agent',
    'a',
    '--',
    'sh',
    '-c',
    // The proxy leads nowhere on this machine (VLT-2053), whatever NO_PROXY says.
    "NO_PROXY= no_proxy= curl -s -o /dev/null -w '%{http_connect}\\n' https://127.0.0.1:9/",
  ]);
  assert.equal(r.stdout, '403\n', r.stderr);
  const refused = r.stderr.split('\n').filter((l) => l.includes('the proxy refused'));
  assert.equal(refused.length, 1, r.stderr);
  assert.match(refused[0] ?? '', /^vault-cli: the proxy refused: VLT-2053: /);
});

test('one violation is one line on run’s stderr however often the client retries it; the agent’s own traffic is one line at the end', async () => {
  await rig.set('P1', 'first value');
  await rig.set('P2', 'second value');
  for (const e of ['P1', 'P2']) ok(await rig.owner(['entry', 'hosts', e, 'localhost']));
  await rig.addAgent('retrier', ['P1', 'P2'], ['--per-minute', '1']);
  // Nothing listens on localhost:9: what reaches the upstream fails there (VLT-3008).
  const to = 'https://localhost:9/';
  const script = [
    `curl -s -o /dev/null -H 'X-A: vault://P1/password' ${to}`,
    // Over the minute: refused (429, VLT-2042); curl retries a 429 twice.
    // (To stdout: with -o, curl 7.88 fails its retry truncating the file.)
    `curl -s --retry 2 --retry-delay 1 -H 'X-B: vault://P2/password' ${to} >/dev/null`,
    // The agent's own: no reference, and no proxy token.
    `curl -s -o /dev/null ${to}`,
    `curl -s -o /dev/null --proxy "$(printf %s "$HTTPS_PROXY" | sed 's|//[^@]*@|//|')" ${to}`,
    'exit 0',
  ].join('; ');
  const r = await rig.owner([
    'run',
    '--agent',
    'retrier',
    '--allow-net',
    'localhost:9',
    '--',
    'sh',
    '-c',
    `NO_PROXY= no_proxy= sh -c "${script.replace(/"/g, '\\"')}"`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split('\n');
  const violations = lines.filter((l) => l.startsWith('vault-cli: the proxy refused: VLT-2042'));
  assert.equal(violations.length, 1, r.stderr);
  assert.match(violations[0] ?? '', /violation recorded/);
  assert.ok(lines.includes('vault-cli: the proxy refused 2 more with VLT-2042'), r.stderr);
  // The failed upstream of the request a value went into is the vault's: shown.
  assert.equal(lines.filter((l) => /refused: VLT-3008: .*localhost:9/.test(l)).length, 1);
  assert.ok(!lines.some((l) => l.includes('refused: VLT-2040')), r.stderr);
  assert.ok(
    lines.includes(
      "vault-cli: not shown: 2 requests with no vault reference failed at the proxy (VLT-3008 1, VLT-2040 1): the agent's own traffic (docs/run.md)",
    ),
    r.stderr,
  );
  const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'retrier', '--json']))) as {
    violations: unknown[];
  };
  assert.equal(shown.violations.length, 1);
});
