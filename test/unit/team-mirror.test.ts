// A team host's copy of the database's rows (src/store/pg/mirror.ts): ranges in
// LMDB's key order, a group's request undone alone, and the rows a
// transaction hands to the database exactly those it changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mirror, decodeRecord, encodeRecord } from '../../src/store/pg/mirror.js';

const row = (key: string, value: unknown) => ({ key, value: encodeRecord(value) });

test('rows fetched from the database read back in key order, removals included', () => {
  const m = new Mirror();
  m.apply([row('entry/b', { n: 2 }), row('entry/a', { n: 1 }), row('field/a/x', 'f')], 3);
  assert.equal(m.version, 3);
  assert.deepEqual(m.getKeys({ start: 'entry/', end: 'entry0' }), ['entry/a', 'entry/b']);
  m.apply([{ key: 'entry/a', value: null }], 4);
  assert.deepEqual(
    m.getRange({ start: 'entry/', end: 'entry0' }).map((r) => r.value),
    [{ n: 2 }],
  );
  assert.equal(m.get('entry/a'), undefined);
  assert.deepEqual(m.getKeys({ limit: 1 }), ['entry/b']);
});

test('a record keeps its bytes and types through the encoding (Buffers stay Buffers)', () => {
  const value = { box: Buffer.from([0, 1, 255]), n: 2 ** 40, s: 'é', none: null, list: [1, 'a'] };
  const back = decodeRecord(encodeRecord(value)) as typeof value;
  assert.deepEqual(back, value);
  assert.ok(Buffer.isBuffer(back.box));
});

test('a request of a group undone alone; the changes are what the rest wrote', () => {
  const m = new Mirror();
  m.apply([row('a', 1), row('b', 2)], 1);
  m.begin();
  m.put('a', 10);
  const mark = m.mark();
  m.put('b', 20);
  m.remove('a');
  m.put('c', 30);
  m.undoTo(mark);
  assert.equal(m.get('a'), 10);
  assert.equal(m.get('b'), 2);
  assert.equal(m.get('c'), undefined);
  m.put('b', 2); // written back as it was: no change to send
  const changes = m.changes().map((c) => [c.key, c.value === null ? null : decodeRecord(c.value)]);
  assert.deepEqual(changes, [['a', 10]]);
  m.commit(2);
  assert.equal(m.version, 2);
  assert.throws(() => m.put('x', 1), /outside a write transaction/);
});

test('a failed commit puts every row back as the database has it', () => {
  const m = new Mirror();
  m.apply([row('a', 1)], 5);
  m.begin();
  m.put('a', 2);
  m.remove('a');
  m.put('z', 3);
  m.rollback();
  assert.equal(m.get('a'), 1);
  assert.equal(m.get('z'), undefined);
  assert.deepEqual(m.getKeys({}), ['a']);
  assert.equal(m.version, 5);
});

test('the chunked key list agrees with one sorted array through inserts, removals and ranges', async () => {
  const { SortedKeys } = await import('../../src/store/pg/sorted-keys.js');
  // A seeded generator: the same run every time.
  let seed = 37;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const key = () => `k/${rand(5000).toString(36)}`;
  const initial = Array.from({ length: 3000 }, key);
  const s = SortedKeys.from([...initial]);
  const ref = new Set(initial);
  const sorted = () => [...ref].sort();
  for (let step = 0; step < 20_000; step++) {
    const k = key();
    if (rand(3) === 0) assert.equal(s.delete(k), ref.delete(k));
    else assert.equal(s.insert(k), !ref.has(k) && ref.add(k) !== undefined);
    if (step % 997 === 0) {
      const all = sorted();
      assert.deepEqual([...s], all);
      assert.equal(s.size, all.length);
      const a = key();
      const b = key();
      const limit = rand(50);
      assert.deepEqual(s.range(a, b, limit), all.filter((x) => x >= a && x < b).slice(0, limit));
      assert.deepEqual(
        s.range(a),
        all.filter((x) => x >= a),
      );
      assert.deepEqual(
        s.range(undefined, b),
        all.filter((x) => x < b),
      );
    }
  }
  // Emptied and filled again.
  for (const k of sorted()) assert.ok(s.delete(k));
  assert.deepEqual([...s], []);
  assert.ok(s.insert('z'));
  assert.deepEqual(s.range('a', 'zz'), ['z']);
});

test('a first load of rows in any order reads back sorted; the decoded cache is bounded, its reads right', () => {
  const m = new Mirror();
  const rows = Array.from({ length: 20_000 }, (_, i) => row(`r/${(i * 7919) % 20_000}`, { i }));
  m.apply(rows, 1);
  const keys = m.getKeys({});
  assert.equal(keys.length, 20_000);
  assert.deepEqual(keys, [...keys].sort());
  for (const r of rows) assert.deepEqual(m.get(r.key), decodeRecord(r.value));
  m.begin();
  m.put('r/5', { i: -5 });
  m.commit(2);
  assert.deepEqual(m.get('r/5'), { i: -5 });
});

test('a first load in pages, in any order, keeps the sealed digest the whole set has', async () => {
  const { randomBytes } = await import('node:crypto');
  const key = randomBytes(32);
  const rows = Array.from({ length: 3000 }, (_, i) =>
    row(i % 3 === 0 ? `audit/${i}` : `entry/${(i * 7919) % 3000}`, { i }),
  );
  const paged = new Mirror();
  for (let at = 0; at < rows.length; at += 700) paged.loadPage(rows.slice(at, at + 700), key);
  paged.loaded(9);
  const whole = new Mirror();
  whole.apply(rows, 9);
  // The worker's way: each page's share computed apart (pageDigest), the copy given it.
  const { pageDigest } = await import('../../src/store/pg/mirror.js');
  const shared = new Mirror();
  for (let at = 0; at < rows.length; at += 700) {
    const part = rows.slice(at, at + 700);
    shared.loadPage(part, key, pageDigest(key, part));
  }
  shared.loaded(9);
  assert.deepEqual(paged.getKeys({}), whole.getKeys({}));
  assert.deepEqual(paged.sealedDigest(key), whole.sealedDigest(key));
  assert.deepEqual(shared.sealedDigest(key), whole.sealedDigest(key));
  assert.notDeepEqual(whole.sealedDigest(key), Buffer.alloc(32));
  assert.equal(paged.version, 9);
});
