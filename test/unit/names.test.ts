import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VaultError, oneLine } from '../../src/core/errors.js';
import fc from 'fast-check';
import { displayEntry } from '../../src/core/audit.js';
import { checkEntryName, showable, showableJson, unshowableIn } from '../../src/core/names.js';

/**
 * A name is shown to the owner on a terminal (entry ls, prompts, error lines).
 * An agent that can create one (`import` of a file it wrote, a request with the
 * owner's session) must not be able to make it act on the terminal or read as
 * another name.
 */
const HOSTILE: [string, string][] = [
  ['C1 CSI, which a terminal may take as ESC [', 'Stripe\u009b2J'],
  ['a right-to-left override', 'Stripe \u202eProd'],
  ['a bidi isolate', 'Stripe \u2066Prod'],
  ['a zero-width space', 'Stripe\u200bProd'],
  ['a byte-order mark', '\ufeffStripe'],
  ['an escape', 'Stripe\u001b[2J'],
  ['a line feed', 'Stripe\nProd'],
];

for (const [what, name] of HOSTILE) {
  test(`entry names: ${what} is refused with the code point named`, () => {
    assert.throws(
      () => checkEntryName(name),
      (e: unknown) =>
        e instanceof VaultError &&
        e.code === 'VLT-1002' &&
        /U\+[0-9A-F]{4}/.test(e.message) &&
        !e.message.includes(name),
    );
    assert.doesNotMatch(
      showable(name),
      /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/,
    );
  });
}

test('entry names: printable text in any script, spaces inside, is a name', () => {
  for (const name of ['Stripe Prod', 'Prod é', 'عميل', '客户 API', 'a/b']) {
    assert.equal(checkEntryName(name), name);
  }
});

test('error lines: C1 controls are escaped like C0 ones', () => {
  const line = new VaultError('VLT-1002', 'No such entry: "x\u009b2J\u001by".').line();
  assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f]/);
  assert.match(line, /\\x9b2J\\x1by/);
  assert.equal(oneLine('plain é'), 'plain é');
});

test('error lines: a bidi override or a zero-width character in a name is escaped too', () => {
  const line = new VaultError('VLT-2045', 'Refused: "ok \u202eyrros" to api\u200b.example.').line();
  assert.doesNotMatch(line, /[\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
  assert.match(line, /ok \\u\{202e\}yrros/);
});

// Names in refusals' audit records are the agent's: shown on the owner's
// terminal (`audit`, the dashboard), nothing in them may act on it or make a
// line read otherwise; what is shown still says exactly which name it was.
test('displayEntry and showableJson: nothing unshowable left, and the name read back exactly', () => {
  const unshowable = fc.constantFrom(
    '\u009b',
    '\u0085',
    '\u202e',
    '\u2066',
    '\u200b',
    '\u00ad',
    '\ufeff',
    '\u{e0041}',
    '\u001b',
    '\u0007',
    '\u007f',
    '"',
    ' ',
  );
  const name = fc
    .array(fc.oneof(fc.string({ maxLength: 3 }), unshowable), { maxLength: 8 })
    .map((parts) => parts.join(''));
  fc.assert(
    fc.property(name, (n) => {
      const shown = displayEntry(n);
      assert.equal(unshowableIn(shown), null, JSON.stringify(shown));
      assert.equal(shown === n ? n : (JSON.parse(shown) as string), n);
      const json = showableJson(JSON.stringify({ entry: n }));
      assert.equal(unshowableIn(json), null);
      assert.deepEqual(JSON.parse(json), { entry: n });
    }),
  );
  assert.equal(displayEntry('Stripe Prod'), '"Stripe Prod"');
  assert.equal(displayEntry('x\u009b2J'), '"x\\u009b2J"');
  assert.equal(displayEntry('github'), 'github');
});
