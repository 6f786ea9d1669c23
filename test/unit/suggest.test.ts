// Issue 38: "did you mean" for commands and the owner's names, and a value
// typed as an argument is never repeated back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseArgv } from '../../src/commands/argv.js';
import { closest, distance } from '../../src/core/suggest.js';

function usageError(argv: string[]): string {
  try {
    parseArgv(argv);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail(`parsed: ${argv.join(' ')}`);
}

test('an unknown command names the nearest one', () => {
  assert.match(
    usageError(['entry', 'list']),
    /unknown command "entry list" \(did you mean "entry ls"\?\)/,
  );
  assert.match(usageError(['entyr', 'ls']), /unknown command "entyr" \(did you mean "entry"\?\)/);
  assert.match(usageError(['agnet']), /did you mean "agent"/);
  assert.doesNotMatch(usageError(['frobnicate']), /did you mean/);
});

test('a word typed after entry set or init is not repeated, and the history is named', () => {
  const secret = 'sk_live_51Hq7e2';
  const msg = usageError(['entry', 'set', 'Stripe', secret]);
  assert.ok(!msg.includes(secret), msg);
  assert.match(msg, /now in your shell history/);
  assert.match(msg, /reads it from its prompt or stdin/);
  assert.ok(!usageError(['init', secret]).includes(secret));
});

test('closest: slips, aliases and prefixes; nothing far', () => {
  assert.equal(closest('claud', ['claude', 'codex']), 'claude');
  assert.equal(closest('Githb', ['GitHub', 'DB']), 'GitHub');
  assert.equal(closest('list', ['ls', 'show']), 'ls');
  assert.equal(closest('xyz', ['GitHub', 'DB']), null);
});

test('property: closest returns a candidate, within a third of the word in edits, an alias or a prefix', () => {
  const word = fc.string({ unit: fc.constantFrom(...'abcde'), minLength: 1, maxLength: 8 });
  fc.assert(
    fc.property(word, fc.array(word, { maxLength: 6 }), (w, cands) => {
      const c = closest(w, cands);
      if (c === null) return;
      assert.ok(cands.includes(c));
      const near = distance(w, c) <= Math.max(1, Math.floor(w.length / 3));
      assert.ok(near || (w.length >= 3 && c.toLowerCase().startsWith(w.toLowerCase())));
    }),
  );
  fc.assert(
    fc.property(word, word, (a, b) => {
      assert.equal(distance(a, b), distance(b, a));
      assert.equal(distance(a, a), 0);
    }),
  );
});
