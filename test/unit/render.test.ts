// The renderer without a host: values given directly. Output is the same fed
// whole, chunked and byte by byte; escaped values parse back to exactly the
// secret in JSON, YAML, TOML and .env; a file without references is untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseEnv } from 'dotenv';
import fc from 'fast-check';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { formatReference } from '../../src/core/reference.js';
import { chooseFormat, type Format } from '../../src/render/format.js';
import { Collector, Renderer, check } from '../../src/render/render.js';

const runs = Number(process.env.FC_RUNS ?? 200);

/** Renders `template` with `values` (by entry/field), cutting the input at `cuts`. */
function render(
  template: Buffer | string,
  format: Format,
  values: Record<string, string | Buffer> = {},
  cuts: readonly number[] = [],
): Buffer {
  const input = typeof template === 'string' ? Buffer.from(template) : template;
  const chunks: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    chunks.push(input.subarray(at, cut));
    at = cut;
  }
  const collector = new Collector(format);
  for (const c of chunks) collector.write(c);
  const collected = collector.end();
  assert.deepEqual(collected.malformed, []);
  const byKey = new Map(
    Object.entries(values).map(([k, v]) => {
      const [entry, field] = k.split('/') as [string, string];
      return [formatReference(entry, field), Buffer.from(v)];
    }),
  );
  const problems = check(collected, byKey);
  if (problems.length > 0) throw new Error(problems.map((p) => p.reason).join('; '));
  const r = new Renderer(format, byKey);
  const out: Buffer[] = [];
  for (const c of chunks) {
    // The reader reuses its buffer: a renderer must not keep a slice of it.
    const copy = Buffer.from(c);
    out.push(r.write(copy));
    copy.fill(0x3f);
  }
  out.push(r.end());
  return Buffer.concat(out);
}

const everyByte = (n: number) => Array.from({ length: Math.max(n - 1, 0) }, (_, i) => i + 1);

/** Any string: quotes, backslashes, line breaks, control characters, Unicode. */
const secret = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc
      .array(
        fc.constantFrom(
          '"',
          "'",
          '`',
          '\\',
          '\n',
          '\r',
          '\t',
          '#',
          ': ',
          '\\n',
          'a',
          ' ',
          '$',
          '\u0085',
          '\u2028',
          '\ufeff',
          'vault://x/y',
          '\u0000',
        ),
        { maxLength: 12 },
      )
      .map((a) => a.join('')),
  )
  .filter((s) => Buffer.from(s).toString() === s);

test('the spec’s example: JSON references replaced, escaped, piped', () => {
  const out = render(
    '{\n  "stripe": "vault://Stripe Prod/key",\n  "db": {"password": {{ vault://db/password }}}\n}\n',
    'json',
    { 'Stripe Prod/key': 'sk_live_"x"', 'db/password': 'p\\w\nd' },
  );
  assert.deepEqual(JSON.parse(out.toString()), {
    stripe: 'sk_live_"x"',
    db: { password: 'p\\w\nd' },
  });
});

test('a value holding vault:// is inserted once, not expanded', () => {
  const out = render('a=vault://a/b\n', 'raw', { 'a/b': 'vault://a/b and vault://c/d' });
  assert.equal(out.toString(), 'a=vault://a/b and vault://c/d\n');
});

test('raw inserts bytes as they are, even invalid UTF-8', () => {
  const value = Buffer.from([0xff, 0x00, 0x22, 0x0a]);
  const out = render('[vault://a/b]', 'raw', { 'a/b': value });
  assert.deepEqual(out, Buffer.concat([Buffer.from('['), value, Buffer.from(']')]));
  assert.throws(() => render('"vault://a/b"', 'json', { 'a/b': value }), /not UTF-8/);
});

test('property: without references, every format gives back the same bytes', () => {
  const bytes = fc
    .array(
      fc.oneof(
        fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
        fc
          .constantFrom('\r\n', '\ufeff', '"', "'", '{{ x }}', 'myvault://a/b', '#')
          .map((s) => Buffer.from(s)),
      ),
      { maxLength: 20 },
    )
    .map((parts) => Buffer.concat(parts))
    .filter(
      (b) =>
        !b.includes('vault://') ||
        b.toString('latin1').match(/(?<![A-Za-z0-9+.-])vault:\/\//) === null,
    );
  fc.assert(
    fc.property(
      bytes,
      fc.constantFrom<Format>('json', 'yaml', 'toml', 'env', 'raw'),
      (buf, format) => {
        assert.deepEqual(render(buf, format), buf);
        assert.deepEqual(render(buf, format, {}, everyByte(buf.length)), buf);
      },
    ),
    { numRuns: runs },
  );
});

test('a BOM, CRLF and invalid UTF-8 around references stay as they were', () => {
  const tpl = Buffer.concat([
    Buffer.from('\ufeffa: "vault://a/b"\r\n'),
    Buffer.from([0xc3, 0x28, 0xff, 0x0d, 0x0a]),
  ]);
  const out = render(tpl, 'yaml', { 'a/b': 'v' });
  assert.deepEqual(
    out,
    Buffer.concat([Buffer.from('\ufeffa: "v"\r\n'), Buffer.from([0xc3, 0x28, 0xff, 0x0d, 0x0a])]),
  );
});

/** Templates per format: where the reference stands, and how to read the value back. */
const cases: {
  format: Format;
  template: string;
  read: (out: string) => unknown;
}[] = [
  {
    format: 'json',
    template: '{"a": "vault://e/f"}',
    read: (o) => (JSON.parse(o) as { a: unknown }).a,
  },
  {
    format: 'json',
    template: '{"a": {{ vault://e/f }} }',
    read: (o) => (JSON.parse(o) as { a: unknown }).a,
  },
  { format: 'json', template: '["x", vault://e/f]', read: (o) => (JSON.parse(o) as unknown[])[1] },
  { format: 'yaml', template: 'a: vault://e/f\n', read: (o) => (parseYaml(o) as { a: unknown }).a },
  {
    format: 'yaml',
    template: 'a: "vault://e/f"\n',
    read: (o) => (parseYaml(o) as { a: unknown }).a,
  },
  {
    format: 'yaml',
    template: '# it\'s "quoted"\nl:\n  - {{ vault://e/f }}\n',
    read: (o) => (parseYaml(o) as { l: unknown[] }).l[0],
  },
  { format: 'toml', template: 'a = vault://e/f\n', read: (o) => parseToml(o).a },
  { format: 'toml', template: 'a = "vault://e/f"\n', read: (o) => parseToml(o).a },
  { format: 'toml', template: 'a = """vault://e/f"""\n', read: (o) => parseToml(o).a },
  {
    format: 'toml',
    template: '# a "comment\n[t]\nb = {{vault://e/f}}\n',
    read: (o) => (parseToml(o).t as { b: unknown }).b,
  },
  { format: 'env', template: 'A=vault://e/f\n', read: (o) => parseEnv(o).A },
  {
    format: 'env',
    template: '# x\nexport B = {{ vault://e/f }} # c\nC=1\n',
    read: (o) => parseEnv(o).B,
  },
];

for (const c of cases) {
  test(`property: ${c.format} ${JSON.stringify(c.template)} parses back to exactly the secret`, () => {
    fc.assert(
      fc.property(secret, (value) => {
        if (
          c.format === 'env' &&
          /['\r]/.test(value) &&
          /"|\\[nr]/.test(value) &&
          /[`\r]/.test(value)
        ) {
          assert.throws(
            () => render(c.template, c.format, { 'e/f': value }),
            /every kind of .env quote/,
          );
          return;
        }
        const out = render(c.template, c.format, { 'e/f': value });
        assert.equal(c.read(out.toString()), value);
        const cuts = everyByte(c.template.length);
        assert.deepEqual(render(c.template, c.format, { 'e/f': value }, cuts), out);
      }),
      { numRuns: runs },
    );
  });
}

test('property: a value in a quoted string of its own kind either parses back or is refused', () => {
  const quoted: {
    format: Format;
    template: string;
    read: (o: string) => unknown;
    expect: (v: string) => string;
  }[] = [
    {
      format: 'yaml',
      template: "a: 'x vault://e/f y'\n",
      read: (o) => (parseYaml(o) as { a: unknown }).a,
      expect: (v) => `x ${v} y`,
    },
    {
      format: 'yaml',
      template: 'a: x:vault://e/f\n',
      read: (o) => (parseYaml(o) as { a: unknown }).a,
      expect: (v) => `x:${v}`,
    },
    {
      format: 'toml',
      template: "a = 'vault://e/f'\n",
      read: (o) => parseToml(o).a,
      expect: (v) => v,
    },
    {
      format: 'toml',
      template: "a = \'\'\'\nvault://e/f\'\'\'\n",
      read: (o) => parseToml(o).a,
      expect: (v) => v,
    },
    {
      format: 'env',
      template: "A='x vault://e/f'\n",
      read: (o) => parseEnv(o).A,
      expect: (v) => `x ${v}`,
    },
    {
      format: 'env',
      template: 'A="x vault://e/f"\n',
      read: (o) => parseEnv(o).A,
      expect: (v) => `x ${v}`,
    },
    {
      format: 'env',
      template: 'A=x:vault://e/f\n',
      read: (o) => parseEnv(o).A,
      expect: (v) => `x:${v}`,
    },
  ];
  fc.assert(
    fc.property(secret, fc.constantFrom(...quoted), (value, c) => {
      let out: Buffer;
      try {
        out = render(c.template, c.format, { 'e/f': value });
      } catch (err) {
        assert.match(String(err), /cannot be written/);
        return;
      }
      assert.equal(c.read(out.toString()), c.expect(value));
    }),
    { numRuns: runs },
  );
});

test('an unquoted .env value with U+2028 or U+2029 is refused: a JavaScript reader ends the line there', () => {
  for (const sep of ['\u2028', '\u2029']) {
    assert.throws(
      () => render('A=x:vault://e/f\n', 'env', { 'e/f': `a${sep}b` }),
      /cannot be written inside an unquoted value/,
    );
    const out = render('A="vault://e/f"\n', 'env', { 'e/f': `a${sep}b` });
    assert.equal(parseEnv(out.toString()).A, `a${sep}b`);
  }
});

test('format by extension, --format and --raw', () => {
  assert.equal(chooseFormat('conf/app.JSON', undefined, false), 'json');
  assert.equal(chooseFormat('a.yml', undefined, false), 'yaml');
  assert.equal(chooseFormat('a.toml', undefined, false), 'toml');
  assert.equal(chooseFormat('.env', undefined, false), 'env');
  assert.equal(chooseFormat('.env.local', undefined, false), 'env');
  assert.equal(chooseFormat('prod.env', undefined, false), 'env');
  assert.equal(chooseFormat('nginx.conf', undefined, false), 'raw');
  assert.equal(chooseFormat('a.json', 'yaml', false), 'yaml');
  assert.equal(chooseFormat('a.json', undefined, true), 'raw');
  assert.throws(() => chooseFormat('a', 'xml', false), /Unknown format/);
  assert.throws(() => chooseFormat('a', 'json', true), /different formats/);
});

test('a template that changes between the passes stops the render', () => {
  const collector = new Collector('raw');
  collector.write(Buffer.from('vault://a/b'));
  const values = new Map([[formatReference('a', 'b'), Buffer.from('v')]]);
  assert.deepEqual(check(collector.end(), values), []);
  const r = new Renderer('raw', values);
  assert.throws(() => {
    r.write(Buffer.from('vault://c/d'));
    r.end();
  }, /changed while it was being rendered/);
});
