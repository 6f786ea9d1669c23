// The sweep's matcher against the obvious search: every occurrence of every
// pattern, whole, in random chunks and byte by byte; and the leak forms found
// where real encoders put a value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MultiMatcher, type MultiMatch } from '../../src/sweep/multi-match.js';
import { base64Core, leakForms, MIN_SWEEP_BYTES } from '../../src/sweep/leak-forms.js';

const runs = Number(process.env.FC_RUNS ?? 200);

function naive(patterns: readonly Uint8Array[], text: Uint8Array): MultiMatch[] {
  const out: MultiMatch[] = [];
  const t = Buffer.from(text);
  patterns.forEach((p, pattern) => {
    for (let at = t.indexOf(p); at !== -1; at = t.indexOf(p, at + 1)) {
      out.push({ pattern, start: at, end: at + p.length });
    }
  });
  return sorted(out);
}

function sorted(ms: MultiMatch[]): MultiMatch[] {
  return [...ms].sort((a, b) => a.start - b.start || a.pattern - b.pattern);
}

function streamed(patterns: readonly Uint8Array[], text: Uint8Array, cuts: number[]): MultiMatch[] {
  const s = new MultiMatcher(patterns).scanner();
  const out: MultiMatch[] = [];
  let at = 0;
  for (const cut of [...cuts.filter((c) => c <= text.length).sort((a, b) => a - b), text.length]) {
    s.push(text.subarray(at, cut), (m) => out.push(m));
    at = cut;
  }
  s.end();
  return sorted(out);
}

// A small alphabet, so patterns overlap, repeat and occur by chance.
const byte = fc.integer({ min: 97, max: 100 });
const pattern = fc.array(byte, { minLength: 1, maxLength: 12 }).map((a) => Uint8Array.from(a));
const case_ = fc
  .record({
    patterns: fc.array(pattern, { minLength: 1, maxLength: 8 }),
    noise: fc.array(fc.array(byte, { maxLength: 20 }), { minLength: 1, maxLength: 10 }),
  })
  .chain(({ patterns, noise }) =>
    fc
      .array(fc.nat(patterns.length - 1), { minLength: noise.length, maxLength: noise.length })
      .map((picks) => {
        const parts: number[] = [];
        noise.forEach((n, i) => parts.push(...n, ...(patterns[picks[i] as number] as Uint8Array)));
        return { patterns, text: Uint8Array.from(parts) };
      }),
  )
  .chain((c) => fc.array(fc.nat(c.text.length), { maxLength: 6 }).map((cuts) => ({ ...c, cuts })));

test('the matcher finds what the naive search finds, whole and in random chunks', () => {
  fc.assert(
    fc.property(case_, ({ patterns, text, cuts }) => {
      const want = naive(patterns, text);
      assert.deepEqual(streamed(patterns, text, []), want);
      assert.deepEqual(streamed(patterns, text, cuts), want);
    }),
    { numRuns: runs },
  );
});

test('the matcher finds what the naive search finds, byte by byte', () => {
  fc.assert(
    fc.property(case_, ({ patterns, text }) => {
      const every = Array.from({ length: text.length }, (_, i) => i);
      assert.deepEqual(streamed(patterns, text, every), naive(patterns, text));
    }),
    { numRuns: Math.ceil(runs / 4) },
  );
});

test('long patterns over random bytes: matches across chunk boundaries, none twice', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ minLength: 16, maxLength: 64 }), { minLength: 1, maxLength: 20 }),
      fc.uint8Array({ maxLength: 4000 }),
      fc.array(fc.nat(6000), { maxLength: 10 }),
      (patterns, noise, cuts) => {
        const text = Buffer.concat([noise, ...patterns, noise, ...patterns.slice().reverse()]);
        assert.deepEqual(streamed(patterns, text, cuts), naive(patterns, text));
      },
    ),
    { numRuns: runs },
  );
});

test('a pattern given twice is reported under both indexes', () => {
  const p = Buffer.from('same-secret');
  const got = streamed([p, Buffer.from('other-one'), p], Buffer.from('x same-secret y'), [5]);
  assert.deepEqual(
    got.map((m) => [m.pattern, m.start]),
    [
      [0, 2],
      [2, 2],
    ],
  );
});

test('the carried tail stays below the longest pattern', () => {
  const m = new MultiMatcher([Buffer.from('abcdefgh'), Buffer.from('0123456789abcdef')]);
  assert.equal(m.maxLength, 16);
  assert.equal(m.step, 5);
  // From 16 bytes on, 8-byte grams: a stride of m - 7.
  assert.equal(new MultiMatcher([Buffer.from('0123456789abcdefXY')]).step, 11);
});

const value = fc.uint8Array({ minLength: MIN_SWEEP_BYTES, maxLength: 48 });
const context = fc.uint8Array({ maxLength: 10 });

test('base64: each alignment’s core is inside the encoding of the value among any bytes', () => {
  fc.assert(
    fc.property(value, context, context, (v, before, after) => {
      const enc = Buffer.concat([before, v, after]).toString('base64');
      const core = base64Core(Buffer.from(v), before.length % 3);
      assert.ok(enc.includes(core), `${core} in ${enc}`);
      assert.ok(core.length >= Math.floor((v.length * 8) / 6) - 1);
      const url = Buffer.concat([before, v, after]).toString('base64url');
      assert.ok(url.includes(core.replace(/\+/g, '-').replace(/\//g, '_')));
    }),
    { numRuns: runs },
  );
});

const text = fc.string({ unit: 'binary', minLength: MIN_SWEEP_BYTES, maxLength: 40 });

test('every encoder’s output holds one of the value’s forms', () => {
  fc.assert(
    fc.property(text, context, (s, before) => {
      const v = Buffer.from(s, 'utf8');
      const forms = leakForms(v).map((f) => f.bytes.toString('latin1'));
      const holds = (written: string) =>
        assert.ok(
          forms.some((f) => Buffer.from(written, 'utf8').toString('latin1').includes(f)),
          written,
        );
      holds(s);
      holds(encodeURIComponent(s));
      holds(new URLSearchParams({ q: s }).toString());
      holds(JSON.stringify({ out: s }));
      holds(JSON.stringify({ line: JSON.stringify({ out: s }) }));
      holds(Buffer.concat([before, v]).toString('base64'));
    }),
    { numRuns: runs },
  );
});

test('each form decodes back to the value', () => {
  fc.assert(
    fc.property(text, (s) => {
      for (const f of leakForms(Buffer.from(s, 'utf8'))) {
        const t = f.bytes.toString('latin1');
        if (f.form === 'url') assert.equal(decodeURIComponent(t.replace(/\+/g, ' ')), s);
        if (f.form === 'json') assert.equal(JSON.parse(`"${f.bytes.toString('utf8')}"`), s);
        if (f.form === 'json2') {
          const once = JSON.parse(`"${f.bytes.toString('utf8')}"`) as string;
          assert.equal(JSON.parse(`"${once}"`), s);
        }
      }
    }),
    { numRuns: runs },
  );
});

test('the caller’s chunks are left as they were (the carried tail is a copy)', () => {
  const p = Buffer.from('0123456789abcdef');
  const text = Buffer.concat([Buffer.from('xx'), p, Buffer.from('yy')]);
  const copy = Buffer.from(text);
  const s = new MultiMatcher([p]).scanner();
  s.push(text.subarray(0, 10), () => {});
  s.push(text.subarray(10), () => {});
  s.end();
  assert.deepEqual(text, copy);
});

test('long patterns over two letters (8-byte grams, overlaps everywhere) as the naive search', () => {
  const ab = fc.array(fc.constantFrom(97, 98), { minLength: 16, maxLength: 24 });
  fc.assert(
    fc.property(
      fc.array(ab, { minLength: 1, maxLength: 5 }),
      fc.array(fc.constantFrom(97, 98), { maxLength: 300 }),
      fc.array(fc.nat(400), { maxLength: 8 }),
      (ps, noise, cuts) => {
        const patterns = ps.map((p) => Uint8Array.from(p));
        const text = Buffer.concat([Uint8Array.from(noise), ...patterns, Uint8Array.from(noise)]);
        assert.deepEqual(streamed(patterns, text, cuts), naive(patterns, text));
      },
    ),
    { numRuns: runs },
  );
});
