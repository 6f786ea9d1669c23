// The import parsers (src/import/formats.ts, zip.ts): documented cases,
// round-trips, and fuzzing. Whatever the input, a parser returns entries
// whose names and fields the vault takes, or throws VaultError VLT-1011 whose
// message names a line or item and never the file's text. FC_RUNS=5000 for a
// heavier run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import {
  checkImportName,
  dotenvEntries,
  formatCsv,
  formatDotenv,
  parse1PasswordCsv,
  parse1pux,
  parseCsv,
  parseDotenv,
  parsePassEntry,
  type Parsed,
} from '../../src/import/formats.js';
import { isFieldName, showable } from '../../src/core/names.js';
import { zipMember } from '../../src/import/zip.js';
import { makeZip } from '../support/zip.js';

const runs = Number(process.env.FC_RUNS ?? 300);

/** The message of every VLT-1011: where, then why; one line, no control character. */
const WHERE =
  /^(line \d+|item \d+|export\.data|--entry|pass entry [^:]*|the 1PUX archive): [^\u0000-\u001f\u007f-\u009f]+\.$/u;

/** `fn()`'s result, or null when it threw the documented refusal; anything else fails. */
function parsedOrRefused<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch (err) {
    assert.ok(err instanceof VaultError, `threw ${String(err)}`);
    assert.equal(err.code, 'VLT-1011', err.message);
    assert.match(err.message, WHERE);
    return null;
  }
}

/** What the vault takes of an import: checked names, field names, no empty value, nothing twice. */
function assertImportable(p: Parsed): void {
  const names = new Set<string>();
  for (const e of p.entries) {
    assert.equal(checkImportName(e.name, 'x'), e.name);
    assert.ok(!names.has(e.name), `name twice: ${e.name}`);
    names.add(e.name);
    assert.ok(e.fields.length > 0);
    const fields = new Set<string>();
    for (const f of e.fields) {
      assert.ok(isFieldName(f.field), `field ${f.field}`);
      assert.ok(!fields.has(f.field), `field twice: ${f.field}`);
      fields.add(f.field);
      assert.notEqual(f.value, '');
    }
  }
}

function refusal(fn: () => unknown): VaultError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof VaultError);
    return err;
  }
  assert.fail('expected a refusal');
}

// ------------------------------------------------------------------ dotenv

test('dotenv: quotes, escapes, export, comments, spaces and multi-line values', () => {
  const text = [
    '# a comment',
    '',
    'export PLAIN=abc',
    'SPACED = value with spaces   # trailing comment',
    'HASH=abc#def',
    "SINGLE='lit\\n $X'",
    'DOUBLE="a\\nb\\t\\"q\\" \\\\ \\$"',
    'BACK=`x y`',
    'MULTI="line one',
    'line two"',
    "PEM='-----BEGIN-----",
    'abc',
    "-----END-----' # the key",
    'JOIN="a\\',
    'b"',
    'EMPTY=',
    'EMPTYQ=""',
    'DOTTED.name-x=1',
  ].join('\r\n');
  const vars = Object.fromEntries(parseDotenv(text).map((v) => [v.name, v.value]));
  assert.deepEqual(vars, {
    PLAIN: 'abc',
    SPACED: 'value with spaces',
    HASH: 'abc#def',
    SINGLE: 'lit\\n $X',
    DOUBLE: 'a\nb\t"q" \\ $',
    BACK: 'x y',
    MULTI: 'line one\nline two',
    PEM: '-----BEGIN-----\nabc\n-----END-----',
    JOIN: 'ab',
    EMPTY: '',
    EMPTYQ: '',
    'DOTTED.name-x': '1',
  });
});

test('dotenv: refusals name the line, never its text', () => {
  const secret = 'sk_live_SENTINEL_4242';
  const cases: [string, RegExp][] = [
    [`A=1\n${secret}\n`, /^line 2: not a NAME=value line\.$/],
    [`A=1\nB="${secret}\n`, /^line 2: the quote is never closed\.$/],
    [`A="${secret}" trailing`, /^line 1: text after the closing quote\.$/],
    [`9A=${secret}`, /^line 1: the name is not a variable name/],
    [`A=${secret}\nexport A=${secret}`, /^line 2: A is also set on line 1\.$/],
    ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n', /^line 1: not a NAME=value/],
  ];
  for (const [text, want] of cases) {
    const err = refusal(() => parseDotenv(text));
    assert.equal(err.code, 'VLT-1011');
    assert.match(err.message, want);
    assert.ok(!err.message.includes(secret));
    assert.ok(!err.message.includes('b3Blbn'));
  }
});

test('dotenv entries: one per variable with --field and --prefix, or one entry of fields; empty values passed over', () => {
  const vars = parseDotenv('STRIPE_KEY=sk\nEMPTY=\nDB_URL=pg://x\n');
  assert.deepEqual(dotenvEntries(vars, { field: 'key', prefix: 'app/' }), {
    entries: [
      { name: 'app/STRIPE_KEY', fields: [{ field: 'key', value: 'sk' }] },
      { name: 'app/DB_URL', fields: [{ field: 'key', value: 'pg://x' }] },
    ],
    skipped: 1,
  });
  assert.deepEqual(dotenvEntries(vars, { field: 'password', entry: 'app' }).entries, [
    {
      name: 'app',
      fields: [
        { field: 'STRIPE_KEY', value: 'sk' },
        { field: 'DB_URL', value: 'pg://x' },
      ],
    },
  ]);
  const err = refusal(() =>
    dotenvEntries(parseDotenv('A.B=1'), { field: 'password', entry: 'app' }),
  );
  assert.match(err.message, /^line 1: with --entry/);
});

/** Characters dotenv's syntax is made of, so the fuzzer meets quotes, escapes and comments. */
const dotenvChars = fc.constantFrom(
  ...'AZaz_09.-= \t#\'"`\\$\n\r{}exportEXPORT'.split(''),
  '\u0000',
  '\u001b',
  '\u009b',
  'é',
  '\u202e',
);
const dotenvText = fc.oneof(
  fc.array(dotenvChars, { maxLength: 200 }).map((a) => a.join('')),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

test('dotenv fuzz: returns importable entries or refuses with VLT-1011 naming the line', () => {
  fc.assert(
    fc.property(dotenvText, fc.boolean(), (text, oneEntry) => {
      const vars = parsedOrRefused(() => parseDotenv(text));
      if (vars === null) return;
      const opts = oneEntry ? { field: 'password', entry: 'app' } : { field: 'password' };
      const p = parsedOrRefused(() => dotenvEntries(vars, opts));
      if (p !== null) assertImportable(p);
    }),
    { numRuns: runs },
  );
});

const envName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,20}$/);

test('dotenv round-trip: formatDotenv then parseDotenv gives the same names and values', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.record({ name: envName, value: fc.string({ unit: 'binary' }) }), {
        selector: (v) => v.name,
        maxLength: 10,
      }),
      (vars) => {
        const back = parseDotenv(formatDotenv(vars)).map((v) => ({ name: v.name, value: v.value }));
        assert.deepEqual(
          back,
          vars.map((v) => ({ ...v })),
        );
      },
    ),
    { numRuns: runs },
  );
});

// ------------------------------------------------------------------ names

test('names with control or invisible characters are refused naming the code point, never shown raw', () => {
  for (const bad of [
    'a\u001b]52;c;x\u0007',
    'a\u009b31m',
    'pay\u202epal',
    'zero\u200bwidth',
    'x\u0000',
  ]) {
    const err = refusal(() => checkImportName(bad, 'item 3'));
    assert.equal(err.code, 'VLT-1011');
    assert.match(
      err.message,
      /^item 3: the name holds a control or invisible character \(U\+[0-9A-F]{4,5}\)\.$/,
    );
    assert.doesNotMatch(showable(bad), /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e]/);
  }
  assert.equal(showable('Stripe Prod é'), 'Stripe Prod é');
  assert.equal(showable('a\u001bb'), 'a\\u{1b}b');
});

test('showable fuzz: leaves no control or invisible character and is idempotent', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (s) => {
      const shown = showable(s);
      assert.equal(showable(shown), shown);
      // What showable leaves is a name checkImportName takes (given it is not empty or space-ended).
      const inner = `x${shown}x`;
      if (Buffer.byteLength(inner) <= 256) assert.equal(checkImportName(inner, 'x'), inner);
    }),
    { numRuns: runs },
  );
});

// ------------------------------------------------------------------ CSV

test('1Password CSV: the 1Password 8 columns, quoting, archived rows and custom columns', () => {
  const csv = formatCsv([
    [
      'Title',
      'Url',
      'Username',
      'Password',
      'OTPAuth',
      'Favorite',
      'Archived',
      'Tags',
      'Notes',
      'PIN code',
    ],
    [
      'Stripe Prod',
      'https://stripe.com',
      'me@x',
      'p,"w"\nd',
      '',
      'false',
      'false',
      'pay',
      'two\nlines',
      '1234',
    ],
    ['Old', '', 'u', 'p', '', 'false', 'true', '', '', ''],
    ['Stripe Prod', '', '', 'second', '', '', '', '', '', ''],
    ['', '', '', 'untitled', '', '', '', '', '', ''],
  ]);
  assert.deepEqual(parse1PasswordCsv(csv, { prefix: '1p/' }), {
    entries: [
      {
        name: '1p/Stripe Prod',
        fields: [
          { field: 'url', value: 'https://stripe.com' },
          { field: 'username', value: 'me@x' },
          { field: 'password', value: 'p,"w"\nd' },
          { field: 'notes', value: 'two\nlines' },
          { field: 'pin_code', value: '1234' },
        ],
      },
      { name: '1p/Stripe Prod (2)', fields: [{ field: 'password', value: 'second' }] },
      { name: '1p/Untitled', fields: [{ field: 'password', value: 'untitled' }] },
    ],
    skipped: 1,
  });
});

test('CSV refusals name the line', () => {
  assert.match(
    refusal(() => parseCsv('a,b\n"x,y\n')).message,
    /^line 2: the quote is never closed\.$/,
  );
  assert.match(refusal(() => parseCsv('a,b\nx"y,z\n')).message, /^line 2: a quote inside/);
  assert.match(refusal(() => parseCsv('"a"b\n')).message, /^line 1: text after a closing quote/);
  assert.match(refusal(() => parse1PasswordCsv('Url,Password\nx,y\n')).message, /no Title column/);
  assert.match(refusal(() => parse1PasswordCsv('Title\nx,y\n')).message, /^line 2: more cells/);
  const esc = formatCsv([
    ['Title', 'Password'],
    ['\u001b]0;pwned\u0007', 'p'],
  ]);
  const err = refusal(() => parse1PasswordCsv(esc));
  assert.match(err.message, /^line 2: the name holds a control .*U\+001B/);
  assert.doesNotMatch(err.message, /\u001b|pwned/);
});

const csvText = fc.oneof(
  fc
    .array(fc.constantFrom(...'Title,Password,x"\r\n é\u001b'.split('')), { maxLength: 200 })
    .map((a) => a.join('')),
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => `Title,Password,Notes\n${s}`),
);

test('CSV fuzz: parse1PasswordCsv returns importable entries or refuses with VLT-1011', () => {
  fc.assert(
    fc.property(csvText, (text) => {
      const p = parsedOrRefused(() => parse1PasswordCsv(text));
      if (p !== null) assertImportable(p);
    }),
    { numRuns: runs },
  );
});

test('CSV round-trip: formatCsv then parseCsv gives the same rows', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.array(fc.string({ unit: 'binary', maxLength: 20 }), { minLength: 1, maxLength: 5 }),
        {
          maxLength: 8,
        },
      ),
      (rows) => {
        assert.deepEqual(
          parseCsv(formatCsv(rows)).map((r) => r.cells),
          rows,
        );
      },
    ),
    { numRuns: runs },
  );
});

// ------------------------------------------------------------------ 1PUX

function exportData(items: unknown[], vaultName = 'Private'): string {
  return JSON.stringify({
    accounts: [{ attrs: { accountName: 'me' }, vaults: [{ attrs: { name: vaultName }, items }] }],
  });
}

test('1PUX export.data: logins, passwords, sections, TOTP, SSH keys, notes; archived passed over', () => {
  const data = exportData([
    {
      uuid: 'a',
      state: 'active',
      overview: { title: 'Stripe Prod', url: 'https://stripe.com' },
      details: {
        loginFields: [
          { value: 'me@x', name: 'username', fieldType: 'T', designation: 'username' },
          { value: 'pw1', name: 'password', fieldType: 'P', designation: 'password' },
        ],
        notesPlain: 'note',
        sections: [
          {
            title: 'API',
            fields: [
              { title: 'Secret Key', id: 'k1', value: { concealed: 'sk_live_1' } },
              {
                title: 'one-time password',
                id: 'TOTP_1',
                value: { totp: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP' },
              },
              { title: 'expires', id: 'd', value: { date: 1700000000 } },
              { title: '', id: 'Custom ID', value: { string: 'cid' } },
            ],
          },
        ],
      },
    },
    { uuid: 'b', state: 'archived', overview: { title: 'Old' }, details: { password: 'x' } },
    { uuid: 't', trashed: true, overview: { title: 'Binned' }, details: { password: 'x' } },
    {
      uuid: 'c',
      overview: { title: 'Server key' },
      details: {
        sections: [
          {
            fields: [
              { title: 'private key', value: { sshKey: { privateKey: 'PEM', metadata: {} } } },
            ],
          },
        ],
      },
    },
    { uuid: 'd', overview: { title: 'Wifi' }, details: { password: 'wifi-pw' } },
    { uuid: 'e', overview: { title: 'Document' }, details: {} },
  ]);
  assert.deepEqual(parse1pux(data), {
    entries: [
      {
        name: 'Stripe Prod',
        fields: [
          { field: 'username', value: 'me@x' },
          { field: 'password', value: 'pw1' },
          { field: 'url', value: 'https://stripe.com' },
          { field: 'secret_key', value: 'sk_live_1' },
          { field: 'totp', value: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP' },
          { field: 'custom_id', value: 'cid' },
          { field: 'notes', value: 'note' },
        ],
      },
      { name: 'Server key', fields: [{ field: 'private_key', value: 'PEM' }] },
      { name: 'Wifi', fields: [{ field: 'password', value: 'wifi-pw' }] },
    ],
    skipped: 3,
  });
  assert.match(
    refusal(() => parse1pux('{"accounts": 1}')).message,
    /^export\.data: no accounts list/,
  );
  assert.match(refusal(() => parse1pux('not json')).message, /^export\.data: not JSON\.$/);
  const evil = exportData([{ overview: { title: 'Bank\u009b2J' }, details: { password: 'p' } }]);
  assert.match(refusal(() => parse1pux(evil)).message, /^item 1: the name holds .*U\+009B/);
});

const jsonish = fc.jsonValue({ maxDepth: 6 });
const itemish = fc.record(
  {
    state: fc.constantFrom('active', 'archived', 'deleted', 'other'),
    overview: fc.record(
      { title: fc.string({ unit: 'binary', maxLength: 30 }), url: jsonish },
      { requiredKeys: [] },
    ),
    details: fc.record(
      {
        loginFields: fc.array(
          fc.record({
            value: jsonish,
            name: fc.string(),
            designation: fc.constantFrom('username', 'password', '', 'x'),
          }),
          { maxLength: 4 },
        ),
        password: jsonish,
        notesPlain: jsonish,
        sections: fc.array(
          fc.record({
            title: fc.string(),
            fields: fc.array(
              fc.record({
                title: fc.string({ unit: 'binary', maxLength: 80 }),
                id: fc.string(),
                value: fc.oneof(
                  jsonish,
                  fc.record({ concealed: fc.string() }),
                  fc.record({ totp: fc.string() }),
                  fc.record({ sshKey: fc.record({ privateKey: jsonish }) }),
                  fc.record({ email: fc.record({ email_address: jsonish }) }),
                ),
              }),
              { maxLength: 5 },
            ),
          }),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

test('1PUX fuzz: any JSON, and any item shape, gives importable entries or VLT-1011', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        jsonish.map((j) => JSON.stringify(j)),
        fc.array(fc.oneof(itemish, jsonish), { maxLength: 8 }).map((items) => exportData(items)),
        fc.string({ unit: 'binary', maxLength: 100 }),
      ),
      (data) => {
        const p = parsedOrRefused(() => parse1pux(data));
        if (p !== null) assertImportable(p);
      },
    ),
    { numRuns: runs },
  );
});

// ------------------------------------------------------------------ pass

test('pass entry: first line the password, key: value lines fields, otpauth the seed, the rest notes', () => {
  const plain =
    'hunter2\nuser: alice\nURL: https://x.example\notpauth://totp/x?secret=JBSWY3DPEHPK3PXP\nfree text\nhttps://not-a-field\n\n';
  assert.deepEqual(parsePassEntry('web/github.com', plain, { prefix: 'pass/' }), {
    entries: [
      {
        name: 'pass/web/github.com',
        fields: [
          { field: 'password', value: 'hunter2' },
          { field: 'user', value: 'alice' },
          { field: 'url', value: 'https://x.example' },
          { field: 'totp', value: 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP' },
          { field: 'notes', value: 'free text\nhttps://not-a-field' },
        ],
      },
    ],
    skipped: 0,
  });
  assert.deepEqual(parsePassEntry('empty', ''), { entries: [], skipped: 1 });
  const err = refusal(() => parsePassEntry('evil\u001b[2J', 'p'));
  assert.match(err.message, /^pass entry evil\\u\{1b\}\[2J: the name holds/);
  assert.doesNotMatch(err.message, /\u001b/);
});

test('pass fuzz: any path and plaintext gives importable entries or VLT-1011', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      (path, plain) => {
        const p = parsedOrRefused(() => parsePassEntry(path, plain));
        if (p === null) return;
        assertImportable(p);
        const first = plain.split(/\r?\n/)[0] ?? '';
        if (first !== '') assert.equal(p.entries[0]?.fields[0]?.value, first);
      },
    ),
    { numRuns: runs },
  );
});

// ------------------------------------------------------------------ zip

test('zip: a member back, stored or deflated; absent is null; a bomb stops at the cap', () => {
  const data = Buffer.from(exportData([]));
  const files = { 'export.attributes': Buffer.from('{}'), 'files/a.png': Buffer.alloc(100, 1) };
  assert.deepEqual(
    zipMember(makeZip({ ...files, 'export.data': data }), 'export.data', 1 << 20),
    data,
  );
  assert.deepEqual(zipMember(makeZip({ 'export.data': data }, true), 'export.data', 1 << 20), data);
  assert.equal(zipMember(makeZip(files), 'export.data', 1 << 20), null);
  const bomb = makeZip({ 'export.data': Buffer.alloc(32 << 20) });
  assert.ok(bomb.length < 64 * 1024, 'the bomb is small packed');
  assert.match(
    refusal(() => zipMember(bomb, 'export.data', 1 << 20)).message,
    /larger than 1048576 bytes/,
  );
  assert.match(
    refusal(() => zipMember(Buffer.from('PK not really'), 'export.data', 10)).message,
    /not a zip/,
  );
});

test('zip fuzz: random and damaged archives give a member, null or VLT-1011', () => {
  const good = makeZip({ 'export.data': Buffer.from(exportData([])), other: Buffer.from('x') });
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
        fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })).map(([at, b]) => {
          const z = Buffer.from(good);
          z[at] = b;
          return z;
        }),
        fc.nat(good.length).map((n) => good.subarray(0, n)),
      ),
      (zip) => {
        const got = parsedOrRefused(() => zipMember(zip, 'export.data', 1 << 16));
        if (got !== null) assert.ok(got.length <= 1 << 16);
      },
    ),
    { numRuns: runs },
  );
});
