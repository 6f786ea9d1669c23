// The session of the foundation issue, line by line, through real processes.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token = '';

before(async () => {
  const recovery = await rig.create();
  assert.match(recovery.trim(), /^vltr_[0-9A-Za-z]+$/);
  await rig.set('Stripe Prod', 'hunter2');
  await rig.set('Stripe Prod', 'sk_live_x', 'key');
  await rig.set('GitHub', 'JBSWY3DPEHPK3PXP', 'totp');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('claude', ['Stripe Prod', 'GitHub']);
});
after(() => rig.dispose());

test('agent add prints the token alone', () => {
  assert.match(token, /^vlt_[0-9A-Za-z]{71}$/);
});

test('init stores the token 0600 and get, totp work without VAULT_TOKEN', async () => {
  const init = await rig.agent(['init'], undefined, { input: token + '\n' });
  assert.equal(init.code, 0, init.stderr);
  assert.equal(init.stdout, '');
  assert.equal(statSync(`${rig.configDir}/token`).mode & 0o777, 0o600);

  assert.equal(ok(await rig.agent(['get', 'Stripe Prod'])), 'hunter2\n');
  assert.equal(ok(await rig.agent(['get', 'Stripe Prod', '--field', 'key'])), 'sk_live_x\n');
  assert.match(ok(await rig.agent(['totp', 'GitHub'])), /^[0-9]{6}\n$/);
});

test('an entry outside the scope is refused with the specification’s line', async () => {
  const r = await rig.agent(['get', 'Payroll']);
  assert.equal(r.stderr, 'vault-cli: VLT-2041: Access denied.\n');
  assert.equal(r.stdout, '');
  assert.equal(r.code, 77);
});

test('audit lists TIME ACTION ENTRY ACTOR ABOUT with the agent’s reads and refusals', async () => {
  const lines = ok(await rig.owner(['audit']))
    .trimEnd()
    .split('\n');
  assert.match(lines[0] ?? '', /^TIME\s+ACTION\s+ENTRY\s+ACTOR\s+ABOUT$/);
  const rows = lines.slice(1).map((l) => l.split(/\s{2,}/));
  for (const row of rows) assert.match(row[0] ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  const agentRows = rows.filter((r) => r[3] === 'cli:claude').map((r) => `${r[1]} ${r[2]}`);
  assert.deepEqual(agentRows, [
    'ai_read "Stripe Prod"',
    'ai_read "Stripe Prod"',
    'ai_read GitHub',
    'denied Payroll',
  ]);
});
