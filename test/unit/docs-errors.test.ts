// The error table of docs/errors.md is the user's copy of src/core/errors.ts:
// every code, with its exit status, and nothing else.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS } from '../../src/core/errors.js';

test('the error table in docs/errors.md lists every code with its exit status', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| (VLT-[0-9]{4}) \|.*\| ([0-9]+) +\|$/gm)].map(
    (m) => [m[1], Number(m[2])] as const,
  );
  assert.deepEqual(
    rows,
    Object.entries(ERRORS).map(([code, e]) => [code, e.exit] as const),
  );
});
