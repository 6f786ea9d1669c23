// Issue 16, bounded requests: a cap on references per request, refused names
// charged to the agent's limits as the guardrail skill says, and an audit trail
// that one request of guesses cannot grow without bound.
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertRefused, auditRecords, disposeAll } from '../support/e2e-helpers.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '100000', '--per-hour', '100000'];

function template(rig: Rig, name: string, names: readonly string[]): string {
  const file = join(rig.root, name);
  writeFileSync(file, names.map((n, i) => `k${i}={{ vault://${n}/password }}\n`).join(''));
  return file;
}

describe('bounded requests', () => {
  const rig = new Rig();
  let roomyToken = '';
  let strictToken = '';
  before(async () => {
    await rig.create();
    await rig.set('Known', 'known-value');
    roomyToken = await rig.addAgent('roomy', ['Known'], roomy);
    strictToken = await rig.addAgent('strict', ['Known']);
  });
  after(() => disposeAll(rig));

  test('a render naming more than 1,000 references is refused whole (VLT-1006), nothing audited', async () => {
    const before = (await auditRecords(rig)).length;
    const names = Array.from({ length: 1001 }, (_, i) => `guess ${i}`);
    const r = await rig.agent(['render', template(rig, 'big.env', names)], roomyToken);
    assert.match(assertRefused(r, 'VLT-1006'), /at most 1000 references; this one names 1001/);
    assert.equal(r.stdout, '');
    assert.equal((await auditRecords(rig)).length, before);
  });

  test('1,000 unknown names: refused, audited in 17 records, the store grows by a bounded amount', async () => {
    const store = join(rig.vaultDir, 'vault.mdb');
    const before = (await auditRecords(rig)).length;
    const size = statSync(store).size;
    const names = Array.from({ length: 1000 }, (_, i) => `unknown ${i}`);
    const r = await rig.agent(['render', template(rig, 'guesses.env', names)], roomyToken);
    assert.equal(r.code, 77, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /VLT-2041: .*unknown 0\b/);
    const fresh = (await auditRecords(rig)).slice(before);
    assert.equal(fresh.length, 17, JSON.stringify(fresh.slice(-2)));
    assert.ok(fresh.every((x) => x.action === 'denied' && x.outcome === 'VLT-2041'));
    assert.equal(fresh[16]?.entry, '(984 more references)');
    // The audit records and the agent's charged names: well under 1 MB (it was ~590 KB for 1,000 before).
    const growth = statSync(store).size - size;
    assert.ok(growth < 256 * 1024, `store grew by ${growth} bytes`);
  });

  test('guessing names counts against the agent: three guesses use up the minute, the next read is a violation', async () => {
    // Each guess is refused as the specification says (VLT-2041, the agent stays active)...
    for (const name of ['nope 1', 'nope 2', 'nope 3', 'nope 4']) {
      assertRefused(await rig.agent(['get', name], strictToken), 'VLT-2041');
    }
    const after = JSON.parse(ok(await rig.owner(['agent', 'show', 'strict', '--json']))) as {
      state: string;
      usage: { minute: number; hour: number };
      violations: number[];
    };
    // ...but each distinct name took a slot of the windows, as a read would.
    assert.equal(after.state, 'active');
    assert.deepEqual(after.usage, { minute: 4, hour: 4 });
    assert.equal(after.violations.length, 0);
    // So the entry in scope now waits, and asking is the violation.
    assert.match(
      assertRefused(await rig.agent(['get', 'Known'], strictToken), 'VLT-2042'),
      /violation recorded/,
    );
    // The same name guessed again in the window costs nothing more.
    assertRefused(await rig.agent(['get', 'nope 1'], strictToken), 'VLT-2041');
    const last = JSON.parse(ok(await rig.owner(['agent', 'show', 'strict', '--json']))) as {
      usage: { hour: number };
      violations: number[];
    };
    assert.equal(last.usage.hour, 4);
    assert.equal(last.violations.length, 1);
  });
});
