// The owner session on a real terminal: `vault-cli unlock` once, then owner
// commands in the same terminal ask nothing; another terminal still asks; a
// process inside `vault-cli run` on that terminal (sandboxed or not) never
// gets the session; `vault-cli lock` ends it; the first owner command on a
// terminal opens one as `unlock` does. Every passphrase here is typed at a
// prompt.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRecords } from '../support/e2e-helpers.js';
import { shellUnderPty, underPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';

/** The owner with no passphrase file and no token: every passphrase comes from a prompt. */
const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const PROMPT = 'Vault passphrase';

const rig = new Rig();
let shell: PtyRun;

const count = (run: PtyRun, text: string) => run.output().split(text).length - 1;

/**
 * Types `line` into the shell with a marker after it, and returns the exit
 * status the shell printed for it. The marker is typed split (`rc""=`) so the
 * terminal's echo of the line never matches it.
 */
async function typed(line: string, answer?: string | readonly string[]): Promise<number> {
  const before = count(shell, 'rc=');
  const prompts = count(shell, PROMPT);
  shell.pty.write(`${line}; echo "rc""=$?"\r`);
  // One answer a prompt, in turn (a wrong passphrase is asked again, three tries in all).
  const answers = answer === undefined ? [] : typeof answer === 'string' ? [answer] : answer;
  for (const [i, a] of answers.entries()) {
    await until(() => count(shell, PROMPT) > prompts + i, `prompt ${i + 1} for ${line}`);
    for (const key of a) shell.pty.write(key);
    shell.pty.write('\r');
  }
  await until(() => count(shell, 'rc=') > before, line);
  const last = shell.output().split('rc=').at(-1) ?? '';
  return Number(/^(\d+)/.exec(last)?.[1] ?? NaN);
}

before(async () => {
  await rig.create();
  await rig.set('Alpha', 'alpha-value');
  await rig.addAgent('bot', ['Alpha']);
  shell = shellUnderPty(rig, PROMPTED);
  await until(() => shell.output().includes('$ '), 'the shell');
});
after(async () => {
  shell.pty.kill();
  await rig.dispose();
});

test('one unlock, then five owner commands that observe or tighten ask nothing', async () => {
  assert.equal(await typed('vault-cli unlock', PASSPHRASE), 0);
  assert.match(shell.output(), /unlocked on pts\/\d+ until/);
  const prompts = count(shell, PROMPT);
  assert.equal(prompts, 1);
  for (const cmd of [
    'vault-cli entry ls',
    'vault-cli agent ls',
    'vault-cli agent show bot',
    'vault-cli entry show Alpha',
    'vault-cli agent limits bot --per-minute 2',
  ]) {
    assert.equal(await typed(cmd), 0, cmd);
  }
  assert.equal(count(shell, PROMPT), prompts, 'no command asked for the passphrase');
  assert.match(shell.output(), /this minute: 0 of 2 distinct/);
});

// The summary `agent limits` prints is the record as stored, with its new
// MAC; the record before it read as the tamper alarm, `altered`.
test('`agent limits` and `agent scope` report the changed agent as active, not altered', async () => {
  const limits = await rig.owner(['agent', 'limits', 'bot', '--per-hour', '11']);
  assert.equal(limits.code, 0, limits.stderr);
  assert.match(limits.stdout, /^state:\s+active$/m);
  assert.match(limits.stdout, /this hour:\s+0 of 11/);
  const scope = await rig.owner(['agent', 'scope', 'bot', '--rm', 'Alpha']);
  assert.equal(scope.code, 0, scope.stderr);
  assert.match(scope.stdout, /^state:\s+active$/m);
  const show = await rig.owner(['agent', 'show', 'bot']);
  assert.match(show.stdout, /^state:\s+active$/m);
});

test('a command from another terminal is asked for the passphrase', async () => {
  const other = underPty(rig, ['entry', 'ls'], PROMPTED);
  await until(() => other.output().includes(PROMPT), 'the prompt on the other terminal');
  assert.doesNotMatch(other.output(), /Alpha/);
  other.pty.kill();
  await other.exited;
});

test('a process inside `vault-cli run --no-sandbox` on the unlocked terminal never gets the session', async () => {
  const prompts = count(shell, PROMPT);
  // run itself is the owner's, and asks: a session token releases the agent's
  // values, which the terminal's session alone never does. The command inside
  // has the run's pty and session, and is asked too.
  shell.pty.write(
    `vault-cli run --agent bot --no-sandbox -- sh -c 'vault-cli entry ls; echo "in""=$?"'\r`,
  );
  await until(() => count(shell, PROMPT) > prompts, "run's own prompt");
  for (const key of PASSPHRASE) shell.pty.write(key);
  shell.pty.write('\r');
  await until(() => count(shell, PROMPT) > prompts + 1, 'the prompt inside run');
  assert.equal(count(shell, PROMPT), prompts + 2, 'run asked once; the inner command once');
  // Wrong three times (a slip is asked again, three tries in all): refused.
  for (let i = 0; i < 3; i++) {
    await until(() => count(shell, PROMPT) > prompts + 1 + i, `the inner prompt ${i + 1}`);
    for (const key of `not-the-passphrase-${i}`) shell.pty.write(key);
    shell.pty.write('\r');
  }
  await until(() => /in=\d+/.test(shell.output()), 'the inner command');
  // run hands the terminal back (flushing what was typed before): wait for the shell.
  await until(() => (shell.output().split('in=').at(-1) ?? '').includes('$ '), 'the shell again');
  assert.match(shell.output(), /in=77/);
  assert.match(shell.output(), /VLT-3002/);
});

test('a process inside a sandboxed `vault-cli run` on the unlocked terminal is refused before any prompt, and the session is not used', async () => {
  const prompts = count(shell, PROMPT);
  const before = (await auditRecords(rig)).length;
  // The agent tries the owner's commands every way it has: plainly, as
  // completion asks (no prompt), and with the session question on the socket
  // it can reach.
  shell.pty.write(
    `vault-cli run --agent bot -- sh -c 'vault-cli entry ls; echo "ls""=$?"; VAULT_NO_PROMPT=1 vault-cli agent ls; echo "quiet""=$?"; vault-cli agent limits bot --per-minute 99; echo "limits""=$?"; vault-cli unlock; echo "unlock""=$?"'\r`,
  );
  // run's own prompt (a session token is never the terminal session's to give).
  await until(() => count(shell, PROMPT) > prompts, "run's own prompt");
  for (const key of PASSPHRASE) shell.pty.write(key);
  shell.pty.write('\r');
  await until(() => /unlock=\d+/.test(shell.output()), 'the commands inside run');
  await until(
    () => (shell.output().split('unlock=').at(-1) ?? '').includes('$ '),
    'the shell again',
  );
  const out = shell.output();
  assert.match(out, /ls=77/);
  assert.match(out, /quiet=77/);
  assert.match(out, /limits=77/);
  assert.match(out, /unlock=77/);
  assert.match(out, /VLT-2051: vault-cli entry ls is an owner command/);
  assert.equal(count(shell, PROMPT), prompts + 1, 'run asked once; nothing inside was asked');
  // What the session would have shown: the entry's name, the agent's line.
  // What the agent printed: after run's own line, not the typed command's echo.
  const inner = out.split('in the sandbox; Ctrl-]').at(-1) ?? '';
  assert.doesNotMatch(inner, /Alpha|per-minute/);
  // Nothing inside used the session or opened one.
  const fresh = (await auditRecords(rig)).slice(before).map((r) => r.action);
  assert.ok(!fresh.includes('owner_unlock'), `records: ${fresh.join(' ')}`);
  assert.ok(!fresh.includes('agent_limits'), `records: ${fresh.join(' ')}`);
  const bot = JSON.parse((await rig.owner(['agent', 'show', 'bot', '--json'])).stdout) as {
    limits: { perMinute: number };
  };
  assert.notEqual(bot.limits.perMinute, 99, 'the limits were not changed from inside');
});

test('`vault-cli lock` ends it: the next owner command asks again', async () => {
  assert.equal(await typed('vault-cli lock'), 0);
  assert.match(shell.output(), /vault-cli: locked/);
  // Shell completion's way of asking: no session, no prompt, VLT-2054.
  const asked = count(shell, PROMPT);
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry ls'), 77);
  assert.match(shell.output(), /VLT-2054/);
  assert.equal(count(shell, PROMPT), asked);
  const actions = (await auditRecords(rig)).map((r) => r.action);
  assert.ok(actions.includes('owner_unlock'), 'owner_unlock audited');
  assert.ok(actions.includes('owner_lock'), 'owner_lock audited');
});

test('a passphrase from VAULT_PASSPHRASE_FILE opens no session', async () => {
  const prompts = count(shell, PROMPT);
  assert.equal(await typed(`VAULT_PASSPHRASE_FILE=${rig.passphraseFile} vault-cli entry ls`), 0);
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry ls'), 77);
  assert.equal(count(shell, PROMPT), prompts);
  assert.doesNotMatch(shell.output().split('rc=').slice(-2).join(''), /unlocked on/);
});

test('the first owner command on a terminal opens the session: one prompt, then none', async () => {
  const prompts = count(shell, PROMPT);
  const unlocked = count(shell, 'unlocked on pts/');
  assert.equal(await typed('vault-cli entry ls', PASSPHRASE), 0);
  assert.equal(count(shell, PROMPT), prompts + 1);
  assert.equal(
    count(shell, 'unlocked on pts/'),
    unlocked + 1,
    'the owner is told, with how to end it',
  );
  assert.match(shell.output(), /vault-cli lock ends it/);
  assert.equal(await typed('vault-cli agent ls'), 0);
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry show Alpha'), 0);
  assert.equal(count(shell, PROMPT), prompts + 1, 'asked once');
  // Another terminal still has none, and is asked.
  const other = underPty(rig, ['entry', 'ls'], PROMPTED);
  await until(() => other.output().includes(PROMPT), 'the prompt on the other terminal');
  other.pty.kill();
  await other.exited;
  // A wrong passphrase opens nothing: refused after three tries, and still asked after.
  assert.equal(await typed('vault-cli lock'), 0);
  assert.equal(await typed('vault-cli entry ls', ['not-it-1', 'not-it-2', 'not-it-3']), 77);
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry ls'), 77);
  assert.equal(await typed('vault-cli lock'), 0);
});

test('with no terminal, an agent holding the passphrase file opens no session by itself', async () => {
  // A prompt-injected agent with a shell and no terminal of its own (the
  // host sees none: a pipe, cron, a tool runner) that found the passphrase file.
  const r = await rig.owner(['unlock']);
  assert.equal(r.code, 77, r.stderr);
  assert.match(r.stderr, /VLT-2054: An owner session needs a terminal of its own/);
  const quiet = await rig.owner(['entry', 'ls'], {
    env: { VAULT_PASSPHRASE_FILE: undefined, VAULT_NO_PROMPT: '1' },
  });
  assert.equal(quiet.code, 77);
  assert.match(quiet.stderr, /VLT-2054/);
});

test('`vault-cli run` typed on a terminal with no session asks, and opens none (it keeps the passphrase for its dashboard)', async () => {
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry ls'), 77);
  assert.equal(await typed('vault-cli run --agent bot --no-sandbox -- true', PASSPHRASE), 0);
  assert.equal(await typed('VAULT_NO_PROMPT=1 vault-cli entry ls'), 77);
});
