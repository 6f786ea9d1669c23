// The owner session's durations from the host's configuration (the host's
// environment: VAULT_OWNER_SESSION_MINUTES, VAULT_OWNER_IDLE_MINUTES), on a
// real pty: 0 turns sessions off (the opt-out: every owner command asks), and
// a hostile value cannot make a session last longer than the caps.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { shellUnderPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig } from '../support/rig.js';

const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const PROMPT = 'Vault passphrase';
const count = (run: PtyRun, text: string) => run.output().split(text).length - 1;

/** Types `line` (answering one prompt with `answer`) and returns its exit status. */
async function typed(shell: PtyRun, line: string, answer?: string): Promise<number> {
  const before = count(shell, 'rc=');
  const prompts = count(shell, PROMPT);
  shell.pty.write(`${line}; echo "rc""=$?"\r`);
  if (answer !== undefined) {
    await until(() => count(shell, PROMPT) > prompts, `a prompt for ${line}`);
    for (const key of answer) shell.pty.write(key);
    shell.pty.write('\r');
  }
  await until(() => count(shell, 'rc=') > before, line);
  return Number(/^(\d+)/.exec(shell.output().split('rc=').at(-1) ?? '')?.[1] ?? NaN);
}

async function rigWith(session: string, idle?: string): Promise<{ rig: Rig; shell: PtyRun }> {
  const rig = new Rig();
  rig.env.VAULT_OWNER_SESSION_MINUTES = session;
  if (idle !== undefined) rig.env.VAULT_OWNER_IDLE_MINUTES = idle;
  await rig.create();
  await rig.set('Alpha', 'alpha-value');
  const shell = shellUnderPty(rig, PROMPTED);
  await until(() => shell.output().includes('$ '), 'the shell');
  return { rig, shell };
}

describe('VAULT_OWNER_SESSION_MINUTES=0', () => {
  let env: { rig: Rig; shell: PtyRun };
  after(async () => {
    env.shell.pty.kill();
    await env.rig.dispose();
  });

  test('sessions are off: unlock is refused, and every owner command asks', async () => {
    env = await rigWith('0');
    const { shell } = env;
    assert.equal(await typed(shell, 'vault-cli unlock', PASSPHRASE), 77);
    assert.match(shell.output(), /VLT-2054: Owner sessions are off/);
    const prompts = count(shell, PROMPT);
    assert.equal(await typed(shell, 'vault-cli entry ls', PASSPHRASE), 0);
    assert.equal(await typed(shell, 'vault-cli entry ls', PASSPHRASE), 0);
    assert.equal(count(shell, PROMPT), prompts + 2);
    assert.doesNotMatch(shell.output(), /unlocked on/);
    assert.match(readFileSync(join(env.rig.vaultDir, 'host.log'), 'utf8'), /owner sessions: off/);
  });
});

describe('a hostile configuration', () => {
  let env: { rig: Rig; shell: PtyRun };
  after(async () => {
    env.shell.pty.kill();
    await env.rig.dispose();
  });

  test('asks for 999999999 minutes: the session lasts 12 h at most, 1 h idle', async () => {
    env = await rigWith('999999999', '999999999');
    const { shell } = env;
    assert.match(
      readFileSync(join(env.rig.vaultDir, 'host.log'), 'utf8'),
      /owner sessions: 720 min, 60 min idle/,
    );
    const before = Date.now();
    assert.equal(await typed(shell, 'vault-cli unlock', PASSPHRASE), 0);
    assert.match(shell.output(), /or after 60 min without an owner command/);
    // The end the unlock line shows (local time, to the second): 12 h from the unlock.
    const line = /until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)/.exec(shell.output());
    assert.ok(line, shell.output());
    const shown = Date.parse((line[1] as string).replace(' ', 'T'));
    const twelve = 12 * 3_600_000;
    assert.ok(shown >= before + twelve - 1000 && shown <= Date.now() + twelve, line[1]);
  });
});
