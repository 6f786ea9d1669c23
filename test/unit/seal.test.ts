// The sealed state (src/store/seal.ts) over a real PostgreSQL host's copy of
// the rows (Mirror): whatever a host's transactions write, the digest a
// transaction keeps incrementally is the digest of the whole set, and the
// copy's own running digest agrees; any one record put back from earlier,
// changed or removed by someone without the key breaks both.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { Mirror, encodeRecord } from '../../src/store/pg/mirror.js';
import { Tx } from '../../src/store/tx.js';
import { STATE_KEY, type StateRecord } from '../../src/store/seal.js';

type Op = { kind: 'put'; id: number; n: number } | { kind: 'rm'; id: number };

const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), id: fc.nat(5), n: fc.nat(1000) }),
  fc.record({ kind: fc.constant('rm' as const), id: fc.nat(5) }),
);

/** One write transaction of the host on the copy, as pg.ts runs it. */
function write(m: Mirror, key: Buffer, fn: (tx: Tx) => void): void {
  m.begin();
  fn(new Tx(m, key));
  m.commit(m.version + 1);
}

function apply(tx: Tx, o: Op): void {
  if (o.kind === 'put') tx.putOwnerFailures({ count: o.n, last: o.id });
  if (o.kind === 'put') tx.putName(`n${o.id}`, `e${o.n}`);
  else tx.removeName(`n${o.id}`);
}

test('the digest kept write by write is the digest of the whole set; one record put back breaks it', () => {
  fc.assert(
    fc.property(fc.array(fc.array(op, { minLength: 1, maxLength: 5 }), { minLength: 2 }), (txs) => {
      const key = randomBytes(32);
      const m = new Mirror();
      write(m, key, (tx) => tx.sealAll(key));
      const before: { key: string; value: Buffer | null }[] = [];
      txs.forEach((ops, i) => {
        write(m, key, (tx) => {
          for (const o of ops) apply(tx, o);
          // A record every transaction rewrites, as a fill rewrites its rate record.
          tx.putPendingRotation([`r${i}`]);
        });
        if (i === 0) before.push({ key: 'rotate-pending', value: encodeRecord(['r0']) });
      });
      const tx = new Tx(m, key);
      assert.equal(tx.stateProblem(key), null);
      const state = m.get(STATE_KEY) as StateRecord;
      assert.ok(m.sealedDigest(key).equals(state.digest));
      assert.equal(state.version, 1 + txs.length);
      tx.assertSealed();
      // The attacker's copy of an earlier row (its checksum beside it is no help).
      m.apply(before, m.version + 1);
      assert.match(new Tx(m, key).stateProblem(key) ?? '', /^rollback detected/);
      assert.throws(() => new Tx(m, key).assertSealed(), { code: 'VLT-3045' });
    }),
    { numRuns: 40 },
  );
});

test('a state record forged without the key, or removed, is refused', () => {
  const key = randomBytes(32);
  const m = new Mirror();
  write(m, key, (tx) => tx.sealAll(key));
  write(m, key, (tx) => tx.putName('a', 'e1'));
  const state = m.get(STATE_KEY) as StateRecord;
  const forged = { ...state, version: state.version + 5, mac: randomBytes(32) };
  m.apply([{ key: STATE_KEY, value: encodeRecord(forged) }], m.version + 1);
  assert.throws(() => new Tx(m, key).assertSealed(), { code: 'VLT-3045' });
  m.apply([{ key: STATE_KEY, value: null }], m.version + 1);
  assert.throws(() => new Tx(m, key).assertSealed(), { code: 'VLT-3045' });
  // A host without the key writes nothing on a sealed vault.
  m.apply([{ key: STATE_KEY, value: encodeRecord(state) }], m.version + 1);
  assert.throws(() => new Tx(m, null).requireStateKey(), { code: 'VLT-3046' });
});

test('the MACs built from hash states equal createHmac: every key length, every record', async () => {
  const { createHmac } = await import('node:crypto');
  const { rowTag, stateMac, auditKeyMac } = await import('../../src/store/seal.js');
  const { recordSum } = await import('../../src/store/schema.js');
  const framed = (key: Buffer, ...parts: (string | number | Buffer)[]) => {
    const h = createHmac('sha256', key);
    for (const p of parts) {
      const b = Buffer.isBuffer(p) ? p : Buffer.from(String(p));
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      h.update(len).update(b);
    }
    return h.digest();
  };
  // More keys than the pads kept (8), so some are made again; lengths around the block (64).
  for (const size of [0, 1, 16, 32, 63, 64, 65, 100, 32, 32, 32, 32]) {
    const key = randomBytes(size);
    for (let i = 0; i < 20; i++) {
      // Row keys past one block, and not ASCII; canonical forms past the buffers kept.
      const value = { n: i, box: randomBytes(i * 40) };
      const rowKey = `entry/${'é'.repeat(i * 3)}${i}`;
      assert.deepEqual(rowTag(key, rowKey, value), framed(key, 'row-v1', rowKey, recordSum(value)));
      assert.deepEqual(
        auditKeyMac(key, i, randomBytes(32).fill(i)),
        framed(key, 'audit-key-v1', i, randomBytes(32).fill(i)),
      );
    }
    const st = { version: 7, digest: randomBytes(32), keyedFrom: 3 };
    assert.deepEqual(stateMac(key, st), framed(key, 'state-v1', 7, st.digest, 3));
  }
});
