// The reference scanner: the grammar by example, then properties: the same
// events fed whole, in random chunks and byte by byte; format/parse round trips.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  MAX_ENTRY_BYTES,
  ReferenceScanner,
  formatReference,
  parseReference,
  scan,
  type ScanSink,
} from '../../src/core/reference.js';

const runs = Number(process.env.FC_RUNS ?? 200);

/** Events of a scan, adjacent texts merged, as comparable data. */
function events(input: Buffer, cuts: readonly number[] = []): unknown[] {
  const out: unknown[] = [];
  let text: Buffer[] = [];
  const flush = () => {
    if (text.length > 0) out.push(['text', Buffer.concat(text).toString('latin1')]);
    text = [];
  };
  const sink: ScanSink = {
    // Copied: the slice is only valid during the call.
    text: (b) => text.push(Buffer.from(b)),
    reference: (r) => {
      flush();
      out.push(['ref', r.entry, r.field, r.written, r.offset]);
    },
    malformed: (m) => {
      flush();
      out.push(['bad', m.written, m.reason, m.offset]);
    },
  };
  const s = new ReferenceScanner();
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    // A reused buffer, as render's file reader does.
    const chunk = Buffer.from(input.subarray(at, cut));
    s.write(chunk, sink);
    chunk.fill(0x21);
    at = cut;
  }
  s.end(sink);
  flush();
  return out;
}

const refs = (text: string) => scan(text).references.map((r) => [r.entry, r.field, r.written]);
const bad = (text: string) => scan(text).malformed.map((m) => [m.written, m.reason]);

test('finds references with spaces, escapes and the enclosed form', () => {
  assert.deepEqual(refs('Authorization: Bearer vault://Stripe Prod/key\n'), [
    ['Stripe Prod', 'key', 'vault://Stripe Prod/key'],
  ]);
  assert.deepEqual(refs('{"p": "vault://db/password"}'), [
    ['db', 'password', 'vault://db/password'],
  ]);
  assert.deepEqual(refs('u=vault://a%2Fb%25c/f_1-x!'), [
    ['a/b%c', 'f_1-x', 'vault://a%2Fb%25c/f_1-x'],
  ]);
  assert.deepEqual(refs('x{{vault://a/b}}y {{  vault://Stripe Prod/key\t}}'), [
    ['a', 'b', 'vault://a/b'],
    ['Stripe Prod', 'key', 'vault://Stripe Prod/key'],
  ]);
  assert.deepEqual(refs('vault://a/b/c'), [['a', 'b', 'vault://a/b']]);
  assert.deepEqual(refs('/vault://a/b :vault://c/d'), [
    ['a', 'b', 'vault://a/b'],
    ['c', 'd', 'vault://c/d'],
  ]);
  assert.deepEqual(refs('vault://ünïcödé 名前/k'), [
    ['ünïcödé 名前', 'k', 'vault://ünïcödé 名前/k'],
  ]);
});

test('vault:// glued to a word or scheme is not a reference at all', () => {
  for (const text of [
    'myvault://a/b',
    'x.vault://a/b',
    'git+vault://a/b',
    '9vault://a/b',
    '-vault://x',
  ]) {
    assert.deepEqual(scan(text), { references: [], malformed: [] }, text);
  }
  assert.deepEqual(scan('{{ other }} {x} {{ vault}}'), { references: [], malformed: [] });
});

test('malformed references: what starts a reference must complete', () => {
  assert.deepEqual(bad('see vault://no field here\nnext'), [
    ['vault://no field here', 'no /field after the entry name'],
  ]);
  assert.deepEqual(bad('vault://'), [['vault://', 'no /field after the entry name']]);
  assert.deepEqual(bad('vault://a/ b'), [['vault://a/', 'no field name after the /']]);
  assert.deepEqual(bad('vault:///f'), [['vault:///f', 'empty entry name']]);
  assert.match(bad('vault://100%/f')[0]?.[1] ?? '', /% in an entry name/);
  assert.match(bad('vault://a%2/f')[0]?.[1] ?? '', /% in an entry name/);
  assert.match(bad('{{ vault://a/b c }}')[0]?.[1] ?? '', /not closed/);
  assert.match(bad('{{ vault://a/b/c }}')[0]?.[1] ?? '', /not closed/);
  assert.match(bad('{{ vault://a/b')[0]?.[1] ?? '', /not closed/);
  assert.match(
    bad(`vault://${'e'.repeat(MAX_ENTRY_BYTES + 1)}/f`)[0]?.[1] ?? '',
    /longer than 256/,
  );
  assert.match(bad(`vault://${'e'.repeat(800)}`)[0]?.[1] ?? '', /longer than 256/);
  assert.match(bad(`vault://e/${'f'.repeat(65)}`)[0]?.[1] ?? '', /longer than 64/);
  assert.match(
    scan(Buffer.from([...Buffer.from('vault://'), 0xff, 0x2f, 0x66])).malformed[0]?.reason ?? '',
    /UTF-8/,
  );
  // A well-formed one next to a malformed one is still found.
  const r = scan('vault://ok/f vault://bad\n');
  assert.equal(r.references.length, 1);
  assert.equal(r.malformed.length, 1);
});

test('offsets point at the first replaced byte', () => {
  const r = scan('ab {{ vault://x/y }} vault://z/w');
  assert.deepEqual(
    r.references.map((x) => x.offset),
    [3, 21],
  );
});

/** Text made of the pieces that matter to the grammar, and any bytes. */
const piece = fc.oneof(
  fc.constantFrom(
    'vault://',
    'vault:/',
    '{{',
    '{{ ',
    ' }}',
    '}}',
    '/',
    '%2F',
    '%25',
    '%2',
    '%',
    ' ',
    '\t',
    '\n',
    '\r\n',
    'Stripe Prod',
    'key',
    'a',
    '.',
    '\ufeff',
    'ü',
    'x'.repeat(300),
  ),
  fc.uint8Array({ maxLength: 6 }).map((a) => Buffer.from(a).toString('latin1')),
);
const input = fc
  .array(fc.tuple(piece, fc.boolean()), { maxLength: 40 })
  .map((parts) => Buffer.concat(parts.map(([p, bin]) => Buffer.from(p, bin ? 'latin1' : 'utf8'))));
const withCuts = input.chain((buf) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: buf.length }), { maxLength: 12 })
    .map((cuts) => ({ buf, cuts: cuts.sort((a, b) => a - b) })),
);

test('property: the same events fed whole, in random chunks and byte by byte', () => {
  fc.assert(
    fc.property(withCuts, ({ buf, cuts }) => {
      const whole = events(buf);
      assert.deepEqual(events(buf, cuts), whole);
      const bytes = Array.from({ length: Math.max(buf.length - 1, 0) }, (_, i) => i + 1);
      assert.deepEqual(events(buf, bytes), whole);
    }),
    { numRuns: runs },
  );
});

test('property: every byte outside references comes out untouched, in order', () => {
  fc.assert(
    fc.property(withCuts, ({ buf, cuts }) => {
      const ev = events(buf, cuts) as [string, ...unknown[]][];
      const refsOrBad = ev.filter((e) => e[0] !== 'text').length;
      const text = ev
        .filter((e) => e[0] === 'text')
        .map((e) => e[1] as string)
        .join('');
      if (refsOrBad === 0) assert.equal(text, buf.toString('latin1'));
      else assert.ok(text.length < buf.length);
    }),
    { numRuns: runs },
  );
});

const entryName = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 40 })
  .filter(
    (s) =>
      !/[\u0000-\u001f\u007f]/.test(s) &&
      Buffer.from(s).toString() === s &&
      Buffer.byteLength(s) <= MAX_ENTRY_BYTES,
  );
const fieldName = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

test('property: parse(format(entry, field)) gives them back, and format(parse(x)) is x', () => {
  fc.assert(
    fc.property(entryName, fieldName, fc.boolean(), (entry, field, enclosed) => {
      const text = formatReference(entry, field);
      assert.deepEqual(parseReference(enclosed ? `{{ ${text} }}` : text), { entry, field });
      assert.equal(formatReference(entry, field), text);
      const again = parseReference(text);
      assert.ok(again !== null);
      assert.equal(formatReference(again.entry, again.field), text);
      // Found the same way inside other text, however it is cut.
      assert.deepEqual(refs(`key: ${text}\n`), [[entry, field, text]]);
    }),
    { numRuns: runs },
  );
});

test('parseReference refuses anything but exactly one reference', () => {
  assert.equal(parseReference('vault://a/b '), null);
  assert.equal(parseReference('xvault://a/b'), null);
  assert.equal(parseReference('vault://a/b vault://c/d'), null);
  assert.equal(parseReference('vault://a'), null);
  assert.deepEqual(parseReference('vault://a%2f/b'), { entry: 'a/', field: 'b' });
});
