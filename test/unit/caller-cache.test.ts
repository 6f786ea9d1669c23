// The host's cache of authenticated callers' keys (src/host/agent/caller-cache.ts):
// a token finds its keys only while the records still say they are valid;
// dropped keys are wiped, at once or when the last request using them ends;
// clear, idleness and a re-granted key are each seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyArena, newKey } from '../../src/crypto/aead.js';
import { newKeyPair, sealTo } from '../../src/crypto/box.js';
import { CallerCache, IDLE_MS, type CallerKeys } from '../../src/host/agent/caller-cache.js';

function caller(agentId = 'agent-1'): { keys: CallerKeys; arena: KeyArena } {
  const arena = new KeyArena();
  const pair = newKeyPair();
  const indexKey = arena.take(32);
  indexKey.fill(7);
  return {
    keys: { agentId, keys: pair, indexKey, verifier: Buffer.alloc(32, 1) },
    arena,
  };
}

const zero = (b: Buffer) => b.every((x) => x === 0);
const token = (s: string) => Buffer.from(s);

test('a kept token is lent its keys while valid; an invalid one is dropped and wiped', () => {
  const cache = new CallerCache();
  const c = caller();
  cache.keep(token('t1'), c.keys, c.arena).done();
  const lent = cache.borrow(token('t1'), () => true);
  assert.ok(lent !== null);
  assert.equal(lent.keys.indexKey, c.keys.indexKey);
  lent.done();
  assert.equal(
    cache.borrow(token('other'), () => true),
    null,
    'another token finds nothing',
  );
  assert.equal(
    cache.borrow(token('t1'), () => false),
    null,
    'records say no: not lent',
  );
  assert.equal(cache.size, 0);
  assert.ok(zero(c.keys.indexKey) && zero(c.keys.keys.secretKey), 'keys wiped');
  assert.equal(
    cache.borrow(token('t1'), () => true),
    null,
    'and gone for good',
  );
});

test('keys dropped while a request uses them are wiped when it is done, not before', () => {
  const cache = new CallerCache();
  const c = caller();
  const first = cache.keep(token('t1'), c.keys, c.arena);
  cache.clear();
  assert.equal(cache.size, 0);
  assert.ok(!zero(c.keys.indexKey), 'still in use');
  first.done();
  assert.ok(zero(c.keys.indexKey), 'wiped once released');
});

test('unused for IDLE_MS: dropped and wiped', () => {
  let now = 1_000_000;
  const cache = new CallerCache(() => now);
  const c = caller();
  cache.keep(token('t1'), c.keys, c.arena).done();
  now += IDLE_MS + 1;
  assert.equal(
    cache.borrow(token('t1'), () => true),
    null,
  );
  assert.ok(zero(c.keys.indexKey));
  cache.clear();
});

test('a granted key is opened once per sealed box; a re-granted one is opened afresh', () => {
  const cache = new CallerCache();
  const c = caller();
  const lent = cache.keep(token('t1'), c.keys, c.arena);
  const dataKey = newKey();
  const box = sealTo(c.keys.keys.publicKey, dataKey);
  const a = lent.unseal(box);
  assert.ok(a !== null && a.equals(dataKey));
  assert.equal(lent.unseal(box), a, 'the same key, not opened again');
  const again = lent.unseal(sealTo(c.keys.keys.publicKey, dataKey));
  assert.ok(again !== null && again !== a && again.equals(dataKey));
  assert.equal(lent.unseal(sealTo(newKeyPair().publicKey, dataKey)), null, 'not for this caller');
  lent.done();
  cache.clear();
  assert.ok(zero(a) && zero(again), 'opened keys wiped with the caller');
});

test('disabled: nothing is kept', () => {
  const cache = new CallerCache();
  cache.enabled = false;
  assert.equal(
    cache.borrow(token('t1'), () => true),
    null,
  );
});

test('one request opening more boxes than the cache keeps: every key intact until it is done', () => {
  const cache = new CallerCache();
  const c = caller();
  const lent = cache.keep(token('t1'), c.keys, c.arena);
  // A render of 120 distinct references opens 120 grants before it decrypts any value.
  const keys = Array.from({ length: 120 }, () => newKey());
  const opened = keys.map((k) => lent.unseal(sealTo(c.keys.keys.publicKey, k)));
  opened.forEach((o, i) => assert.ok(o !== null && o.equals(keys[i]!), `key ${i} intact`));
  lent.done();
  // The keys pushed out while it ran are wiped now; the ones still kept are not.
  assert.ok(zero(opened[0]!), 'an early key wiped once the request is done');
  assert.ok(!zero(opened[119]!), 'the last ones still kept for the next request');
});

test('a name’s index row is computed once per kept caller, and not kept for a caller dropped', () => {
  const cache = new CallerCache();
  const c = caller();
  let computed = 0;
  const compute = (name: string) => {
    computed++;
    return `row:${name}`;
  };
  const lent = cache.keep(token('t1'), c.keys, c.arena);
  assert.equal(lent.row('GitHub', compute), 'row:GitHub');
  assert.equal(lent.row('GitHub', compute), 'row:GitHub');
  assert.equal(computed, 1, 'kept after the first');
  // Names past the bound are computed each time, never kept.
  for (let i = 0; i < 200; i++) lent.row(`guess-${i}`, compute);
  const before = computed;
  lent.row('guess-199', compute);
  assert.equal(computed, before + 1, 'a name past the bound is not kept');
  lent.done();
  cache.clear();
  const again = caller();
  const fresh = cache.keep(token('t1'), again.keys, again.arena);
  fresh.row('GitHub', compute);
  assert.equal(computed, before + 2, 'a caller kept anew computes its rows anew');
  fresh.done();
  cache.clear();
});
