// Damage reaches agents as damage (issue 29). A bit flipped on disk in an
// agent's record made its reads fail as a wrong token (VLT-2040) or an entry
// outside its scope (VLT-2041), while `vault check` named the damage: the
// agent, and whoever reads its log, looked for the wrong fault. Now the
// refusal carries the damage code that `vault check` reports.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Rig, ok } from '../support/rig.js';
import { editRecords } from '../support/store-damage.js';

const rig = new Rig();
let verifierAgent = '';
let indexAgent = '';

before(async () => {
  await rig.create();
  await rig.set('A', 'value-a');
  verifierAgent = await rig.addAgent('v', ['A']);
  indexAgent = await rig.addAgent('i', ['A']);
  assert.equal(ok(await rig.agent(['get', 'A'], verifierAgent)), 'value-a\n');
});
after(() => rig.dispose());

/** Changes agents' records below the Store API: their checksums no longer match. */
async function damageAgents(
  changes: Record<string, (a: Record<string, unknown>) => void>,
): Promise<void> {
  const pid = await hostPid(rig);
  await rig.stop();
  assert.ok(await waitGone(pid));
  await editRecords(rig.vaultDir, (db) => {
    for (const { key, value } of db.getRange({ start: 'agent/', end: 'agent0' })) {
      const a = value as Record<string, unknown>;
      const change = changes[a.name as string];
      if (change === undefined) continue;
      change(a);
      db.putSync(key, a);
    }
  });
}

test('a flipped bit in an agent’s verifier or name index: its reads are refused with the damage code vault check names', async () => {
  await damageAgents({
    v: (a) => {
      const verifier = Buffer.from(a.verifier as Buffer);
      verifier[0] = (verifier[0] ?? 0) ^ 1;
      a.verifier = verifier;
    },
    i: (a) => {
      const index = { ...(a.index as Record<string, string>) };
      // Another first character, whatever it was ('0' over a '0' damaged
      // nothing: the agent read on, one run in sixteen).
      for (const k of Object.keys(index)) {
        const was = index[k] ?? '';
        index[k] = `${was.startsWith('0') ? '1' : '0'}${was.slice(1)}`;
      }
      a.index = index;
    },
  });
  const check = await rig.owner(['vault', 'check']);
  assert.notEqual(check.code, 0);
  assert.match(check.stdout + check.stderr, /VLT-3035/);

  const bad = assertRefused(await rig.agent(['get', 'A'], verifierAgent), 'VLT-3035');
  assert.match(bad, /vault check/);
  assertRefused(await rig.agent(['get', 'A'], indexAgent), 'VLT-3035');
  // An entry that does not exist gets the same answer: the damage names no record.
  assertRefused(await rig.agent(['get', 'Nothing'], indexAgent), 'VLT-3035');
  // Each refusal was audited as what it was.
  const denied = (await auditRecords(rig)).filter((r) => r.action === 'denied');
  assert.ok(denied.length >= 3, JSON.stringify(denied));
});
