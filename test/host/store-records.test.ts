// The store's records as the host reads them (issue 28), on a real LMDB file:
// decoded records kept between reads, and an agent's rate state in a record
// of its own. A kept record must never show what the store does not hold at
// that moment for that reader: a write is seen by the next read, a write
// rolled back (a thrown transaction, an aborted child of a batched commit)
// leaves nothing, however the transaction read its own write meanwhile.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { canon } from '../../src/core/canon.js';
import { DEFAULT_LIMITS, FRESH_RATE_STATE, type RateState } from '../../src/core/policy.js';
import { Store } from '../../src/store/lmdb/store.js';
import type { AgentRecord } from '../../src/store/schema.js';
import type { Tx } from '../../src/store/tx.js';

const dir = mkdtempSync(join(tmpdir(), 'vault-store-records-'));
const store = Store.open(dir);
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const failures = (tx: Tx) => tx.ownerFailures();

test('a read after a write sees the new record, not the one decoded before it', () => {
  store.write((tx) => tx.putOwnerFailures({ count: 1, last: 10 }));
  assert.deepEqual(store.read(failures), { count: 1, last: 10 });
  store.write((tx) => tx.putOwnerFailures({ count: 2, last: 20 }));
  assert.deepEqual(store.read(failures), { count: 2, last: 20 });
});

test('a write that throws leaves the record as it was, though it read its own write first', () => {
  store.write((tx) => tx.putOwnerFailures({ count: 3, last: 30 }));
  assert.deepEqual(store.read(failures), { count: 3, last: 30 });
  assert.throws(
    () =>
      store.write((tx) => {
        tx.putOwnerFailures({ count: 4, last: 40 });
        // The writing transaction sees its own write (and decodes it)...
        assert.deepEqual(tx.ownerFailures(), { count: 4, last: 40 });
        throw new Error('rolled back');
      }),
    /rolled back/,
  );
  // ...and nobody sees it once it is rolled back.
  assert.deepEqual(store.read(failures), { count: 3, last: 30 });
  assert.deepEqual(
    store.write((tx) => tx.ownerFailures()),
    { count: 3, last: 30 },
  );
});

test('an aborted child of a batched commit leaves nothing; the next in the batch sees the record as committed', async () => {
  store.write((tx) => tx.putOwnerFailures({ count: 5, last: 50 }));
  assert.deepEqual(store.read(failures), { count: 5, last: 50 });
  // Asked in the same tick: lmdb-js runs them as children of one transaction.
  const aborted = store.writeDurable((tx) => {
    tx.putOwnerFailures({ count: 6, last: 60 });
    assert.deepEqual(tx.ownerFailures(), { count: 6, last: 60 });
    throw new Error('child rolled back');
  });
  const sibling = store.writeDurable((tx) => {
    const seen = tx.ownerFailures();
    tx.putPendingRotation(['e1']);
    return seen;
  });
  await assert.rejects(aborted, /child rolled back/);
  assert.deepEqual(await sibling, { count: 5, last: 50 });
  assert.deepEqual(store.read(failures), { count: 5, last: 50 });
  assert.deepEqual(
    store.read((tx) => tx.pendingRotation()),
    ['e1'],
  );
});

test('a record read is frozen: a change in place throws instead of reaching the next reader', () => {
  store.write((tx) => tx.putOwnerFailures({ count: 7, last: 70 }));
  const first = store.read(failures) as { count: number };
  assert.throws(() => {
    first.count = 99;
  }, TypeError);
  assert.deepEqual(store.read(failures), { count: 7, last: 70 });
});

test('a record over a mebibyte is not kept: decoded at each read, as before', () => {
  const field = (size: number) => ({
    version: 1,
    gen: 1,
    value: Buffer.alloc(size, 7),
    updated: 1,
  });
  store.write((tx) => {
    tx.putField('big', 'f', field(1024 * 1024 + 1));
    tx.putField('small', 'f', field(16));
  });
  const read = (id: string) => store.read((tx) => tx.field(id, 'f'));
  assert.equal(Object.isFrozen(read('small')), true);
  assert.equal(Object.isFrozen(read('big')), false);
  assert.notEqual(read('big'), read('big'));
  assert.equal(read('small'), read('small'));
});

function agentRecord(id: string, rate: RateState = FRESH_RATE_STATE): AgentRecord {
  return {
    id,
    name: `agent-${id}`,
    kind: 'ai',
    scope: ['e1'],
    limits: DEFAULT_LIMITS,
    rate,
    verifier: Buffer.alloc(32, 1),
    publicKey: Buffer.alloc(32, 2),
    secretKey: Buffer.alloc(72, 3),
    grants: { e1: { gen: 1, box: Buffer.alloc(80, 4) } },
    index: { ['ab'.repeat(16)]: 'e1' },
    indexKey: Buffer.alloc(80, 5),
    mac: Buffer.alloc(32, 6),
    created: 1,
    revoked: null,
  };
}

/** Every record as stored (checksums included), by key, as canonical text. */
function stored(): Map<string, string> {
  return new Map(store.read((tx) => tx.allRecords()).map((r) => [r.key, canon(r.value)] as const));
}

const charged: RateState = { ...FRESH_RATE_STATE, reads: { e1: 1000 } };

test('a charge writes the rate record and its checksum only: the agent record stays as it was', () => {
  store.write((tx) => tx.putAgent(agentRecord('a1')));
  const before = stored();
  assert.equal(before.has('rate/a1'), true);
  assert.equal(before.get('agent/a1')?.includes('"rate"'), false);
  store.write((tx) => tx.putRate('a1', charged));
  const now = stored();
  const changed = [...now.keys()].filter((k) => now.get(k) !== before.get(k));
  assert.deepEqual(changed.sort(), ['rate/a1', 'sum/rate/a1']);
  assert.deepEqual(
    store.read((tx) => tx.agent('a1')?.rate),
    charged,
  );
  assert.deepEqual(
    store.read((tx) => tx.agents().find((a) => a.id === 'a1')?.rate),
    charged,
  );
});

test('an agent record of the older layout (its rate inside, no rate record) is read with its rate; the first charge moves it out', () => {
  const locked: RateState = {
    ...FRESH_RATE_STATE,
    reads: { e1: 500 },
    lock: { at: 600, reason: 'violations' },
  };
  // As a vault from before issue 28 holds it: written through the store's own copy path.
  store.write((tx) => {
    const records = tx.allRecords().filter((r) => r.key !== 'rate/a2' && r.key !== 'sum/rate/a2');
    tx.replaceAll([...records, { key: 'agent/a2', value: agentRecord('a2', locked) }]);
  });
  assert.equal(stored().has('rate/a2'), false);
  assert.deepEqual(
    store.read((tx) => tx.agent('a2')?.rate),
    locked,
  );
  store.write((tx) => tx.putRate('a2', { ...locked, reads: { e1: 700 } }));
  const now = stored();
  assert.equal(now.get('agent/a2')?.includes('"rate"'), false);
  assert.deepEqual(
    store.read((tx) => tx.agent('a2')?.rate),
    { ...locked, reads: { e1: 700 } },
  );
});

test('the rate record wins over a rate left inside the agent record', () => {
  store.write((tx) => {
    tx.putAgent(agentRecord('a3', charged));
    const records = tx.allRecords().filter((r) => r.key !== 'agent/a3');
    tx.replaceAll([...records, { key: 'agent/a3', value: agentRecord('a3', FRESH_RATE_STATE) }]);
  });
  assert.deepEqual(
    store.read((tx) => tx.agent('a3')?.rate),
    charged,
  );
});

test('an agent whose rate state is gone reads as locked; a revoked agent keeps no rate record', () => {
  store.write((tx) => tx.putAgent(agentRecord('a4', charged)));
  store.write((tx) => {
    const records = tx.allRecords().filter((r) => r.key !== 'rate/a4');
    tx.replaceAll(records);
  });
  assert.equal(
    store.read((tx) => tx.agent('a4')?.rate.lock?.reason),
    'lost',
  );
  store.write((tx) => tx.putAgent(agentRecord('a5', charged)));
  store.write((tx) => {
    const a = tx.agent('a5');
    assert.ok(a !== null);
    tx.putAgent({ ...a, revoked: 2 });
  });
  const now = stored();
  assert.equal(now.has('rate/a5'), false);
  assert.equal(now.has('sum/rate/a5'), false);
  assert.equal(now.has('agent/a5'), true);
});
