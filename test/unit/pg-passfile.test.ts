// The team database's password file, as libpq reads it (src/store/pg/passfile.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  parseLine,
  parsePassfile,
  passfileModeSafe,
  passwordFor,
} from '../../src/store/pg/passfile.js';

const to = { host: 'db.internal', port: 5432, database: 'vault', user: 'vault' };

test('the first matching line wins; * matches any host, port, database or user', () => {
  const lines = parsePassfile(
    [
      '# the team database',
      'other.internal:5432:vault:vault:not-this',
      'db.internal:5433:vault:vault:not-this-port',
      '*:*:vault:vault:first',
      'db.internal:5432:vault:vault:second',
    ].join('\n'),
  );
  assert.equal(passwordFor(lines, to), 'first');
  assert.equal(passwordFor(lines, { ...to, database: 'other' }), undefined);
});

test('escaped colons and backslashes are themselves; an unescaped colon ends the password', () => {
  const line = parseLine('h\\:1:5432:d\\\\b:u:pa\\:ss:ignored');
  assert.deepEqual(line, {
    host: 'h:1',
    port: '5432',
    database: 'd\\b',
    user: 'u',
    password: 'pa:ss',
  });
  // An escaped star is a star, not a wildcard.
  const star = parsePassfile('\\*:5432:vault:vault:p');
  assert.equal(passwordFor(star, to), undefined);
  assert.equal(passwordFor(star, { ...to, host: '*' }), 'p');
});

test("libpq's default socket directory and no host are localhost to the file; other directories are themselves", () => {
  const lines = parsePassfile('localhost:5432:vault:vault:local\n/tmp/sock:5432:vault:vault:tmp');
  assert.equal(passwordFor(lines, { ...to, host: '/var/run/postgresql' }), 'local');
  assert.equal(passwordFor(lines, { ...to, host: '' }), 'local');
  assert.equal(passwordFor(lines, { ...to, host: '/tmp/sock' }), 'tmp');
  assert.equal(passwordFor(lines, { ...to, host: '/run/other' }), undefined);
});

test('comments, blank lines and lines of fewer than five fields are skipped', () => {
  assert.deepEqual(parsePassfile('#a:b:c:d:e\n\n  \nh:1:d:u\nh:1:d:u:p'), [
    { host: 'h', port: '1', database: 'd', user: 'u', password: 'p' },
  ]);
});

test('a file its group or others may read or write is not used', () => {
  assert.equal(passfileModeSafe(0o100600), true);
  assert.equal(passfileModeSafe(0o100400), true);
  assert.equal(passfileModeSafe(0o100640), false);
  assert.equal(passfileModeSafe(0o100604), false);
});

const field = fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !/[\r\n]/.test(s));
const escape = (s: string) => s.replace(/[\\:]/g, (c) => `\\${c}`);

test('property: any five fields, escaped and joined, parse back as themselves', () => {
  fc.assert(
    fc.property(field, field, field, field, field, (h, p, d, u, pw) => {
      // A bare star is the wildcard and a # first makes a comment: both are written escaped.
      const line = [h, p, d, u, pw]
        .map((f) => (f === '*' ? '\\*' : escape(f)))
        .join(':')
        .replace(/^#/, '\\#');
      assert.deepEqual(parseLine(line), {
        host: h,
        port: p,
        database: d,
        user: u,
        password: pw,
      });
    }),
  );
});

test('fuzz: any text parses without throwing, and every line it keeps has five fields', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
      for (const l of parsePassfile(text)) {
        assert.equal(typeof l.password, 'string');
        assert.equal(Object.keys(l).length, 5);
      }
    }),
  );
});
