// AEAD slots, sealed boxes, keyed hashes, the redacting Secret and the KDF header check.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { format, inspect } from 'node:util';
import fc from 'fast-check';
import {
  KEY_BYTES,
  KeyArena,
  newKey,
  open,
  randomBytes,
  seal,
  slot,
  unwrapKey,
  wipe,
} from '../../src/crypto/aead.js';
import { newKeyPair, openSealed, sealTo } from '../../src/crypto/box.js';
import { equal, keyedHash } from '../../src/crypto/hash.js';
import {
  DEFAULT_MEM,
  DEFAULT_OPS,
  kdfParamsSane,
  newKdfParams,
  tokenKeys,
} from '../../src/crypto/kdf.js';
import { Secret } from '../../src/crypto/secret.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const VAULT = randomBytes(16);
const AD = slot(VAULT, 'entry-1', 'password', 1);

test('property: seal then open gives back the plaintext', () => {
  const key = newKey();
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.string(), (plain, field) => {
      const ad = slot(VAULT, 'entry-1', field, 1);
      const blob = seal(key, plain, ad);
      assert.equal(blob.length, 24 + plain.length + 16);
      const back = open(key, blob, ad);
      assert.ok(back !== null);
      assert.deepEqual(new Uint8Array(back), plain);
    }),
    { numRuns: RUNS },
  );
});

test('open into guarded memory gives the same plaintext', () => {
  const key = newKey();
  const blob = seal(key, Buffer.from('hunter2'), AD);
  assert.equal(open(key, blob, AD, true)?.toString(), 'hunter2');
});

test('two seals of the same plaintext differ (fresh nonce)', () => {
  const key = newKey();
  const a = seal(key, Buffer.from('same'), AD);
  const b = seal(key, Buffer.from('same'), AD);
  assert.ok(!a.equals(b));
});

test('a blob moved to another slot does not open', () => {
  const key = newKey();
  const blob = seal(key, Buffer.from('hunter2'), AD);
  for (const other of [
    slot(VAULT, 'entry-2', 'password', 1),
    slot(VAULT, 'entry-1', 'key', 1),
    slot(VAULT, 'entry-1', 'password', 2),
    slot(randomBytes(16), 'entry-1', 'password', 1),
    slot(VAULT, 'entry-1', 'password'),
    Buffer.alloc(0),
  ]) {
    assert.equal(open(key, blob, other), null);
  }
  assert.equal(open(key, blob, AD)?.toString(), 'hunter2');
});

test('the wrong key does not open', () => {
  const blob = seal(newKey(), Buffer.from('hunter2'), AD);
  assert.equal(open(newKey(), blob, AD), null);
});

test('any flipped bit (nonce, ciphertext or tag) makes open return null', () => {
  const key = newKey();
  const blob = seal(key, Buffer.from('a secret of some length'), AD);
  for (let i = 0; i < blob.length; i++) {
    for (const bit of [0x01, 0x80]) {
      const bad = Buffer.from(blob);
      bad[i] = (bad[i] as number) ^ bit;
      assert.equal(open(key, bad, AD), null, `byte ${i} bit ${bit}`);
    }
  }
});

test('truncated and empty blobs return null, never throw', () => {
  const key = newKey();
  const blob = seal(key, Buffer.from('x'), AD);
  for (let n = 0; n < blob.length; n++) assert.equal(open(key, blob.subarray(0, n), AD), null);
  assert.equal(open(key, Buffer.concat([blob, Buffer.from([0])]), AD), null);
});

test('unwrapKey opens a wrapped key into guarded memory', () => {
  const kek = newKey();
  const inner = newKey();
  const ad = slot(VAULT, 'tier', 'default');
  const wrapped = seal(kek, inner, ad);
  const back = unwrapKey(kek, wrapped, ad);
  assert.ok(back !== null);
  assert.equal(back.length, KEY_BYTES);
  assert.ok(equal(back, inner));
  assert.equal(unwrapKey(kek, wrapped, slot(VAULT, 'tier', 'other')), null);
  assert.equal(unwrapKey(newKey(), wrapped, ad), null);
});

test('unwrapKey refuses an authentic blob that is not a key (wrong length)', () => {
  const kek = newKey();
  const ad = slot(VAULT, 'tier', 'default');
  assert.equal(unwrapKey(kek, seal(kek, randomBytes(KEY_BYTES - 1), ad), ad), null);
  assert.equal(unwrapKey(kek, seal(kek, randomBytes(KEY_BYTES + 1), ad), ad), null);
});

test('wipe zeroes its buffers and skips null', () => {
  const a = randomBytes(32);
  const b = Buffer.from('secret');
  wipe(a, null, b, undefined);
  assert.ok(a.equals(Buffer.alloc(32)));
  assert.ok(b.equals(Buffer.alloc(6)));
});

test('property: keys taken from one arena never overlap, also past its room', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 40 }), (sizes) => {
      const arena = new KeyArena();
      const keys = sizes.map((n, i) => arena.take(n).fill(i + 1));
      keys.forEach((k, i) => {
        assert.equal(k.length, sizes[i]);
        assert.ok(
          k.every((b) => b === i + 1),
          `key ${i} was overwritten`,
        );
      });
      arena.wipe();
    }),
    { numRuns: RUNS },
  );
});

test('wiping an arena zeroes every key taken from it; later keys are their own', () => {
  const arena = new KeyArena();
  const pair = newKeyPair();
  const dataKey = newKey();
  const box = sealTo(pair.publicKey, dataKey);
  const wrapped = seal(dataKey, dataKey, AD);
  const opened = openSealed(pair, box, arena);
  const unwrapped = unwrapKey(dataKey, wrapped, AD, arena);
  const { wrapKey } = tokenKeys(randomBytes(32), arena);
  assert.ok(opened && unwrapped);
  assert.ok(opened.equals(dataKey) && unwrapped.equals(dataKey));
  // All three share one allocation: slices of the same memory.
  assert.equal(opened.buffer, unwrapped.buffer);
  assert.equal(opened.buffer, wrapKey.buffer);
  arena.wipe();
  for (const k of [opened, unwrapped, wrapKey]) assert.ok(k.every((b) => b === 0));
  const later = arena.take(KEY_BYTES).fill(7);
  assert.notEqual(later.buffer, opened.buffer);
  assert.ok(opened.every((b) => b === 0));
});

test('property: a sealed box opens with its key pair', () => {
  const pair = newKeyPair();
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (msg) => {
      const box = sealTo(pair.publicKey, msg);
      const back = openSealed(pair, box);
      assert.ok(back !== null);
      assert.deepEqual(new Uint8Array(back), msg);
    }),
    { numRuns: RUNS },
  );
});

test('a sealed box does not open with another key pair, altered or cut short', () => {
  const pair = newKeyPair();
  const box = sealTo(pair.publicKey, Buffer.from('Stripe Prod'));
  assert.equal(openSealed(newKeyPair(), box), null);
  assert.equal(openSealed(pair, box, true)?.toString(), 'Stripe Prod');
  for (let i = 0; i < box.length; i++) {
    const bad = Buffer.from(box);
    bad[i] = (bad[i] as number) ^ 0x01;
    assert.equal(openSealed(pair, bad), null, `byte ${i}`);
  }
  for (let n = 0; n < box.length; n++) assert.equal(openSealed(pair, box.subarray(0, n)), null);
});

test('keyedHash depends on the key', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);
  const a = keyedHash(k1, 'Stripe Prod');
  assert.equal(a.length, 32);
  assert.ok(a.equals(keyedHash(k1, 'Stripe Prod')), 'deterministic');
  assert.ok(!a.equals(keyedHash(k2, 'Stripe Prod')));
  assert.ok(!a.equals(keyedHash(null, 'Stripe Prod')));
  assert.ok(!a.equals(keyedHash(k1, 'Stripe prod')));
});

test('keyedHash and slot keep part boundaries: (ab, c) is not (a, bc)', () => {
  const k = randomBytes(32);
  assert.ok(!slot('ab', 'c').equals(slot('a', 'bc')));
  assert.ok(!keyedHash(k, 'ab', 'c').equals(keyedHash(k, 'a', 'bc')));
  assert.ok(!keyedHash(null, 'ab', 'c').equals(keyedHash(null, 'a', 'bc')));
  assert.ok(!keyedHash(k, 'abc').equals(keyedHash(k, 'ab', 'c')));
  assert.ok(!keyedHash(k, 'a', '').equals(keyedHash(k, 'a')));
  assert.ok(!keyedHash(k, '', 'a').equals(keyedHash(k, 'a', '')));
});

test('property: distinct part lists give distinct slots', () => {
  const parts = fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 });
  fc.assert(
    fc.property(parts, parts, (a, b) => {
      fc.pre(JSON.stringify(a) !== JSON.stringify(b));
      assert.ok(!slot(...a).equals(slot(...b)));
    }),
    { numRuns: RUNS },
  );
});

test('equal compares lengths first and contents in full', () => {
  assert.equal(equal(Buffer.from('abc'), Buffer.from('abc')), true);
  assert.equal(equal(Buffer.from('abc'), Buffer.from('abd')), false);
  assert.equal(equal(Buffer.from('abc'), Buffer.from('abcd')), false);
  assert.equal(equal(Buffer.alloc(0), Buffer.alloc(0)), true);
});

test('tokenKeys: one secret gives a fixed verifier and wrap key, distinct from each other', () => {
  const secret = randomBytes(32);
  const a = tokenKeys(secret);
  const b = tokenKeys(Buffer.from(secret));
  assert.ok(a.verifier.equals(b.verifier));
  assert.ok(equal(a.wrapKey, b.wrapKey));
  assert.ok(!equal(a.verifier, a.wrapKey));
  assert.ok(!a.verifier.equals(tokenKeys(randomBytes(32)).verifier));
});

test('a Secret never shows its bytes: toString, template, JSON, inspect, format', () => {
  const text = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
  const s = Secret.fromString(text);
  const shown = [
    s.toString(),
    String(s),
    `${s}`,
    'x' + s,
    JSON.stringify(s),
    JSON.stringify({ nested: { s } }),
    inspect(s),
    inspect({ nested: [s] }, { depth: 10 }),
    inspect(s, { customInspect: false, showHidden: true }),
    format('%s %o %O %j', s, s, s, s),
  ];
  for (const out of shown) {
    assert.ok(!out.includes(text), out);
    assert.ok(!out.includes('sk_live'), out);
    assert.ok(!out.includes(Buffer.from(text).toString('hex').slice(0, 16)), out);
  }
  assert.equal(s.toString(), '[REDACTED]');
  assert.equal(JSON.stringify({ s }), '{"s":"[REDACTED]"}');
  assert.match(inspect(s), /REDACTED/);
  assert.deepEqual(Object.keys(s), []);
});

test('a Secret exposes its bytes on request and wipes them', () => {
  const s = new Secret(Buffer.from('hunter2'));
  assert.equal(s.length, 7);
  assert.equal(s.expose().toString(), 'hunter2');
  s.wipe();
  assert.ok(s.expose().equals(Buffer.alloc(7)));
});

test('kdfParamsSane accepts fresh parameters and the caps themselves', () => {
  const p = newKdfParams();
  assert.equal(p.ops, DEFAULT_OPS);
  assert.equal(p.mem, DEFAULT_MEM);
  assert.equal(kdfParamsSane(p), true);
  assert.equal(kdfParamsSane({ ...p, ops: 10 }), true);
  assert.equal(kdfParamsSane({ ...p, mem: 1024 * 1024 * 1024 }), true);
});

test('kdfParamsSane rejects a doctored header', () => {
  const p = newKdfParams();
  const doctored = [
    { ...p, ops: 11 },
    { ...p, ops: 1e9 },
    { ...p, ops: 0 },
    { ...p, ops: 3.5 },
    { ...p, ops: Number.NaN },
    { ...p, mem: 2 * 1024 * 1024 * 1024 },
    { ...p, mem: 1024 * 1024 * 1024 + 1 },
    { ...p, mem: 1024 },
    { ...p, mem: DEFAULT_MEM + 0.5 },
    { ...p, salt: p.salt.subarray(0, 15) },
    { ...p, salt: Buffer.alloc(0) },
    { ...p, salt: Buffer.concat([p.salt, Buffer.from([0])]) },
    { ...p, salt: new Uint8Array(16) as Buffer },
    { ...p, alg: 'argon2i13' as 'argon2id13' },
    { ...p, ops: '3' as unknown as number },
  ];
  for (const d of doctored) {
    assert.equal(kdfParamsSane(d), false, inspect({ ...d, salt: d.salt.length }));
  }
});
