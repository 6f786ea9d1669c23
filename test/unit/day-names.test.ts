// Issue 38: names with `/`. The audit quotes an entry name holding `/`, so
// `"1p/GitHub"/password` reads as one entry and its field, never as entry
// `1p` and field `GitHub/password`; the name reads back exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { displayEntry } from '../../src/core/audit.js';
import { recordTarget } from '../../tui/format.js';

test('an entry name with / is quoted in the audit table and the dashboard feed', () => {
  assert.equal(displayEntry('1p/GitHub'), '"1p/GitHub"');
  assert.equal(displayEntry('GitHub'), 'GitHub');
  const r = { entry: '1p/GitHub', field: 'password', subject: null } as Parameters<
    typeof recordTarget
  >[0];
  assert.equal(recordTarget(r), '"1p/GitHub"/password');
});

test('property: a shown name holding / is quoted and reads back exactly', () => {
  const part = fc.string({ unit: fc.constantFrom(...'abcXYZ09-_.'), minLength: 1, maxLength: 6 });
  fc.assert(
    fc.property(fc.array(part, { minLength: 2, maxLength: 4 }), (parts) => {
      const name = parts.join('/');
      const shown = displayEntry(name);
      assert.ok(shown.startsWith('"') && shown.endsWith('"'), shown);
      assert.equal(JSON.parse(shown), name);
    }),
  );
});
