// Issue 38: an owner with no hardware key enrolled and a locked agent. The
// lock is never lifted without a key; `agent unlock` says so and offers the
// documented keyless recovery (docs/hardware-key.md): revoke the locked
// identity and add a new one, under the same name. The new token reads with
// empty windows, the old one stays refused, and the lock stays in the audit.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords } from '../support/e2e-helpers.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('DB Prod', 'db-value-7c1e');
});
after(() => rig.dispose());

test('with no key enrolled, agent unlock offers revoke then add; the new identity reads and the old lock stays in the audit', async () => {
  const old = await rig.addAgent('ci-bot', ['DB Prod']);
  assert.equal(ok(await rig.agent(['get', 'DB Prod'], old)), 'db-value-7c1e\n');
  ok(await rig.owner(['agent', 'lock', 'ci-bot']));
  const unlock = await rig.owner(['agent', 'unlock', 'ci-bot', '--no-browser']);
  assert.equal(unlock.code, 78, unlock.stderr);
  assert.match(unlock.stderr, /^vault-cli: VLT-4004: No hardware key is enrolled/);
  assert.match(
    unlock.stderr,
    /`vault-cli agent revoke ci-bot`, then `vault-cli agent add ci-bot --scope/,
  );
  assert.match(unlock.stderr, /the lock stays in the audit/);
  assertRefused(await rig.agent(['get', 'DB Prod'], old), 'VLT-2043', 'still locked');

  ok(await rig.owner(['agent', 'revoke', 'ci-bot']));
  const fresh = await rig.addAgent('ci-bot', ['DB Prod']);
  assert.equal(ok(await rig.agent(['get', 'DB Prod'], fresh)), 'db-value-7c1e\n');
  assertRefused(await rig.agent(['get', 'DB Prod'], old), 'VLT-2040', 'the old token');
  const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'ci-bot', '--json']))) as {
    id: string;
    state: string;
  };
  assert.equal(shown.state, 'active');
  const records = await auditRecords(rig);
  const lock = records.find((r) => r.action === 'agent_lock');
  assert.ok(lock !== undefined, 'the lock is in the audit');
  const revoked = records.find((r) => r.action === 'agent_revoke');
  assert.ok(revoked !== undefined, 'so is the revocation');
});
