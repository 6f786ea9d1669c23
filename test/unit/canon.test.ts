// canon() (src/core/canon.ts) orders an object's keys without Array.sort when
// it has few (issue 37): the text must be exactly what sorting them gives,
// since stored checksums and MACs depend on it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canon } from '../../src/core/canon.js';

/** canon as it was written first: the keys through Array.prototype.sort. */
function sortedCanon(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'u';
  if (v instanceof Uint8Array) return `b:${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return `[${v.map(sortedCanon).join(',')}]`;
  const o = v as Record<string, unknown>;
  const parts = Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${sortedCanon(o[k])}`);
  return `{${parts.join(',')}}`;
}

// Keys that sort differently by code unit than by code point or locale:
// surrogate pairs, an accented letter, digits (integer-like keys come first in
// Object.keys), upper and lower case.
const key = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'aAbB_0129é'.split('')), maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.constantFrom('\u{1F600}', '\uFF61', '\uD800', 'z', '10', '9', '-1', '01'),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.double(),
    fc.string({ maxLength: 6 }),
    fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(key, tie('v'), { maxKeys: 6 }),
    // Past the insertion sort's few keys: the other path.
    fc.dictionary(key, fc.integer(), { minKeys: 10, maxKeys: 40 }),
  ),
})).v;

test('canon orders keys exactly as Array.prototype.sort does, with few keys and many', () => {
  fc.assert(
    fc.property(value, (v) => {
      assert.equal(canon(v), sortedCanon(v));
    }),
    { numRuns: 3000 },
  );
});
