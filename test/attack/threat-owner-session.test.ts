// An owner session only tightens. The agent left a pre-commit hook in the
// project (it writes the working tree; a hook manager's directory is one more
// place); the owner, with the terminal unlocked, runs `git commit`, and git
// runs the hook on that terminal with its stdin closed. Every command that
// would release a value (a reveal, a new token, a run session, the sweep's
// values) or loosen a rule (a wider scope, higher limits, more hosts, a new or
// removed hardware key, the vault moved) is refused with VLT-2055 and asks
// nothing; what narrows or observes (ls, show, lock) still runs without a
// prompt. On the build before this, the hook printed the value and a token.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditRecords } from '../support/e2e-helpers.js';
import { shellUnderPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';

const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const PROMPT = 'Vault passphrase';
const VALUE = 'hook-sentinel-9f1c2e7a44d0';

const rig = new Rig();
let shell: PtyRun;
const count = (text: string) => shell.output().split(text).length - 1;

/** Types `line` and waits for its `rc=` marker (typed split, so the echo never matches). */
async function typed(line: string, answer?: string): Promise<number> {
  const before = count('rc=');
  const prompts = count(PROMPT);
  shell.pty.write(`${line}; echo "rc""=$?"\r`);
  if (answer !== undefined) {
    await until(() => count(PROMPT) > prompts, `a prompt for ${line}`);
    for (const key of answer) shell.pty.write(key);
    shell.pty.write('\r');
  }
  await until(() => count('rc=') > before, line).catch((err: unknown) => {
    throw new Error(`${String(err)}; the terminal showed:\n${shell.output().slice(-3000)}`);
  });
  return Number(/^(\d+)/.exec(shell.output().split('rc=').at(-1) ?? '')?.[1] ?? NaN);
}

/** What the agent's hook tries, each command's status printed after it as `<name>=<status>`. */
const ATTEMPTS: readonly (readonly [string, string])[] = [
  ['reveal', 'vault-cli entry show Alpha --reveal'],
  ['add', 'vault-cli agent add thief --scope Alpha --scope Beta'],
  ['widen', 'vault-cli agent scope bot --add Beta'],
  ['raise', 'vault-cli agent limits bot --per-minute 99'],
  ['group', 'vault-cli agent group bot app Alpha Beta'],
  ['hosts', 'vault-cli entry hosts Alpha --clear'],
  ['hostsmore', 'vault-cli entry hosts Alpha api.example.com evil.example.net'],
  ['run', "vault-cli run --agent bot --no-sandbox -- sh -c 'vault-cli get Alpha | cat'"],
  ['sweep', 'vault-cli sweep --stored --paths-only --path .'],
  ['keyrm', 'vault-cli key rm nosuchkey'],
  // Request caveats (issue 40): lifting them, or allowing more, loosens.
  ['caveatsclear', 'vault-cli agent caveats bot Alpha --clear'],
  ['caveatswiden', "vault-cli agent caveats bot Alpha 'GET /a/**' 'GET /b' 'DELETE /a/**'"],
];
/** What narrows or observes: still no prompt from a hook. */
const ALLOWED: readonly (readonly [string, string])[] = [
  ['ls', 'vault-cli entry ls'],
  ['show', 'vault-cli entry show Alpha'],
  ['lower', 'vault-cli agent limits bot --per-minute 2'],
  ['caveatsnarrow', "vault-cli agent caveats bot Alpha 'GET /b'"],
  ['lock', 'vault-cli agent lock bot'],
];

before(async () => {
  await rig.create();
  await rig.set('Alpha', VALUE);
  await rig.set('Beta', 'beta-value-2b7d');
  await rig.addAgent('bot', ['Alpha']);
  assert.equal((await rig.owner(['entry', 'hosts', 'Alpha', 'api.example.com'])).code, 0);
  const caveats = ['agent', 'caveats', 'bot', 'Alpha', 'GET /a/**', 'GET /b'];
  assert.equal((await rig.owner(caveats)).code, 0);
  const repo = join(rig.root, 'project');
  mkdirSync(repo);
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: repo, env: { ...rig.env, GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q');
  git('config', 'user.email', 'owner@example.com');
  git('config', 'user.name', 'Owner');
  const lines = [...ATTEMPTS, ...ALLOWED].map(([name, cmd]) => `${cmd}; echo "${name}""=$?"`);
  const hook = join(repo, '.git', 'hooks', 'pre-commit');
  writeFileSync(hook, ['#!/bin/sh', ...lines, 'exit 0', ''].join('\n'));
  chmodSync(hook, 0o755);
  writeFileSync(join(repo, 'work.txt'), 'the agent\u2019s work\n');
  git('add', 'work.txt');
  shell = shellUnderPty(rig, { ...PROMPTED, GIT_CONFIG_NOSYSTEM: '1' });
  await until(() => shell.output().includes('$ '), 'the shell');
});
after(async () => {
  shell.pty.kill();
  await rig.dispose();
});

test('a hook on the unlocked terminal gets no value, no token and no wider rule; narrowing still runs', async () => {
  assert.equal(await typed('vault-cli unlock', PASSPHRASE), 0);
  const prompts = count(PROMPT);
  const before = (await auditRecords(rig)).length;
  assert.equal(await typed('cd project && git commit -q -m work; cd ..'), 0);
  const out = shell.output().split('git commit').at(-1) ?? '';
  for (const [name] of ATTEMPTS) {
    assert.match(out, new RegExp(`${name}=77`), `${name} refused: ${out}`);
  }
  for (const [name] of ALLOWED) assert.match(out, new RegExp(`${name}=0`), `${name} ran`);
  assert.match(out, /VLT-2055: vault-cli entry show: .*no terminal on stdin/);
  assert.equal(count(PROMPT), prompts, 'the hook raised no prompt');
  assert.ok(!out.includes(VALUE), 'the value never reached the hook');
  assert.doesNotMatch(out, /vlt_[A-Za-z0-9]{20,}/, 'no token reached the hook');
  assert.doesNotMatch(out, /beta-value-2b7d/);
  // Nothing loosened: no thief, bot's scope and limits as they were (lowered, locked), Alpha bound.
  const agents = (await rig.owner(['agent', 'ls'])).stdout;
  assert.doesNotMatch(agents, /thief/);
  const bot = JSON.parse((await rig.owner(['agent', 'show', 'bot', '--json'])).stdout) as {
    limits: { perMinute: number; groups?: unknown };
    scope: string[];
    state: string;
  };
  assert.equal(bot.limits.perMinute, 2);
  assert.equal(bot.limits.groups, undefined, 'no group declared');
  assert.deepEqual(bot.scope, ['Alpha']);
  assert.equal(bot.state, 'locked');
  const shown = JSON.parse((await rig.owner(['agent', 'show', 'bot', '--json'])).stdout) as {
    caveats: { entry: string; rules: string[] }[];
  };
  assert.deepEqual(shown.caveats, [{ entry: 'Alpha', rules: ['GET /b'] }], 'only narrowed');
  assert.match((await rig.owner(['entry', 'show', 'Alpha'])).stdout, /api\.example\.com/);
  const fresh = (await auditRecords(rig)).slice(before).map((r) => r.action);
  for (const loosened of ['agent_add', 'entry_hosts', 'session_start', 'reveal']) {
    assert.ok(!fresh.includes(loosened), `${loosened} in ${fresh.join(' ')}`);
  }
});

test('the owner at the terminal is asked once more, and the command runs', async () => {
  const prompts = count(PROMPT);
  assert.equal(await typed('vault-cli agent limits bot --per-minute 5', PASSPHRASE), 0);
  assert.equal(count(PROMPT), prompts + 1);
  assert.match(shell.output(), /Raising an agent limit needs the passphrase itself/);
  assert.match(shell.output(), /this minute: \d+ of 5 distinct/);
});
