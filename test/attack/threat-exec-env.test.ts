// Issue 35: `vault-cli exec` is the tool meant to hand one value to a command.
// A prompt-injected agent that knows this asks exec to start a command of its
// own (or a tool it poisoned) and reads the command's environment: before the
// fix, the caller's VAULT_TOKEN and VAULT_TOKEN_FILE came along, and with them
// the agent's whole scope. Real vault-cli processes, a real host.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();
let token = '';
const VALUE = `s3cr3t-${hex(8)}`;

before(async () => {
  await rig.create();
  await rig.set('DB', VALUE);
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('tool', ['DB', 'Payroll'], ['--per-minute', '100']);
});
after(() => rig.dispose());

/** The environment the command saw, one NAME=value a line (`env -0` split). */
function envOf(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of stdout.split('\0')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

test('the command exec starts gets its value and no VAULT_* variable: no token, no token file', async () => {
  const tokenFile = join(rig.root, `token-${hex(4)}`);
  writeFileSync(tokenFile, token, { mode: 0o600 });
  const extra = { VAULT_TOKEN_FILE: tokenFile, VAULT_PROXY_HINT: 'x', VAULT_SOMETHING: 'y' };
  const r = await rig.agent(
    ['exec', '--env', 'PGPASSWORD=vault://DB/password', '--', 'env', '-0'],
    token,
    { env: extra },
  );
  assert.equal(r.code, 0, r.stderr);
  const env = envOf(r.stdout);
  assert.equal(env.get('PGPASSWORD'), VALUE);
  const vault = [...env.keys()].filter((k) => k.startsWith('VAULT_'));
  assert.deepEqual(vault, [], 'no VAULT_* variable reaches the command');
  assert.ok(!r.stdout.includes(token), 'the token is nowhere in the command’s environment');
  assert.ok(!r.stdout.includes(tokenFile), 'nor the token file’s path');
  assert.equal(r.stderr, '');
});

test('--keep-vault-env passes them on, with a warning on stderr', async () => {
  const r = await rig.agent(
    ['exec', '--keep-vault-env', '--env', 'PGPASSWORD=vault://DB/password', '--', 'env', '-0'],
    token,
  );
  assert.equal(r.code, 0, r.stderr);
  const env = envOf(r.stdout);
  assert.equal(env.get('VAULT_TOKEN'), token);
  assert.match(r.stderr, /^vault-cli: warning: --keep-vault-env: .*token/m);
  assert.ok(!r.stderr.includes(token));
});
