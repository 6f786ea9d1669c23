import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VaultError, oneLine } from '../../src/core/errors.js';
import { checkEntryName, showable } from '../../src/core/names.js';

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
