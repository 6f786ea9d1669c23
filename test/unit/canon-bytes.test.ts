// The canonical form from a record's bytes (src/store/pg/canon-bytes.ts) is a
// shortcut for canon(decode(bytes)), never a second opinion: whatever it
// takes, it writes exactly what the decoder and canon would; what it does not
// take, it gives back (null) for the slow path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canon } from '../../src/core/canon.js';
import { canonBytes } from '../../src/store/pg/canon-bytes.js';
import { decodeRecord, encodeRecord } from '../../src/store/pg/mirror.js';

/** canon(decode(raw)), or undefined when the record does not decode (or canon throws). */
function slow(raw: Buffer): string | undefined {
  try {
    return canon(decodeRecord(raw));
  } catch {
    return undefined;
  }
}

const asciiKey = fc.string({
  unit: fc.constantFrom(...'abcdefgh_XYZ019"\\ '.split('')),
  maxLength: 8,
});
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
    fc.integer({ min: -200, max: 300 }),
    fc.maxSafeInteger(),
    fc.double(),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: 'grapheme', maxLength: 4 }),
    fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(asciiKey, tie('v'), { maxKeys: 5 }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie('v'), { maxKeys: 3 }),
  ),
})).v;

test('what the fast path writes is canon of the decoded record, whatever the record', () => {
  let taken = 0;
  fc.assert(
    fc.property(value, (v) => {
      const raw = encodeRecord(v);
      const fast = canonBytes(raw);
      if (fast === null) return;
      taken++;
      assert.equal(fast.toString('utf8'), slow(raw));
    }),
    { numRuns: 3000 },
  );
  // Most of them: the shortcut is taken, not only given back.
  assert.ok(taken > 1500, `taken ${taken}`);
});

test('bytes changed or cut: the fast path takes only what decodes, to the same form', () => {
  fc.assert(
    fc.property(
      value,
      fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 3 }),
      fc.nat(),
      (v, flips, cut) => {
        const raw = Buffer.from(encodeRecord(v));
        for (const [at, b] of flips) raw[at % raw.length] = b;
        for (const bytes of [raw, raw.subarray(0, cut % (raw.length + 1))]) {
          const fast = canonBytes(bytes);
          if (fast !== null) assert.equal(fast.toString('utf8'), slow(bytes));
        }
      },
    ),
    { numRuns: 3000 },
  );
});

test('the store’s own records take the fast path: maps out of order, binary, timestamps', () => {
  const record = {
    v: 2,
    name: Buffer.alloc(40, 1),
    created: Date.now(),
    fields: ['a', 'b'],
    limits: { perMinute: 100, perHour: 70_000, off: false, none: null },
    at: 1.5,
  };
  const raw = encodeRecord(record);
  assert.equal(canonBytes(raw)?.toString('utf8'), canon(record));
});
