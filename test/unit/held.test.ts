// What `run` holds of an agent's state (shell/held.ts): the names it prints
// come from the agent, so they can never drive the owner's terminal; a
// session name is a name, never a path; a restore brings back what it names.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import { HeldSession, heldLines, restoreHeld, sessionName, shownPath } from '../../shell/held.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

test('property: a shown path holds no control character and is one line', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (name) => {
      const shown = shownPath(`/home/u/.claude/${name}`, '/home/u');
      assert.ok(!/\p{Cc}/u.test(shown), JSON.stringify(shown));
    }),
    { numRuns: RUNS },
  );
  assert.equal(shownPath('/home/u/.claude/rules/x.md', '/home/u'), '~/.claude/rules/x.md');
});

test('a session is named by its time and six hex digits; anything else is nothing held (VLT-1014)', () => {
  const root = mkdtempSync(join(tmpdir(), 'held-'));
  try {
    assert.match(
      sessionName(new Date('2026-11-29T04:30:00Z'), 'a1b2c3ff'),
      /^20261129-043000-a1b2c3$/,
    );
    for (const bad of ['../x', '..', '20261129-043000-a1b2c3/..', ''])
      assert.throws(
        () => restoreHeld(root, bad, undefined),
        (e: unknown) => e instanceof VaultError && e.code === 'VLT-1014',
      );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('held files and keys are named one a line and restored one path at a time', () => {
  const root = mkdtempSync(join(tmpdir(), 'held-'));
  try {
    const home = join(root, 'home');
    mkdirSync(home);
    const id = '20261129-043000-a1b2c3';
    const s = new HeldSession(join(root, 'held'), id, 'claude');
    const from = join(root, 'a.md');
    writeFileSync(from, 'agent\n');
    s.move(from, join(home, 'rules', 'a.md'), 'file');
    writeFileSync(join(home, 'c.json'), '{"n":1}\n');
    s.keys(join(home, 'c.json'), { k: 'v' }, ['k']);
    s.save();
    const lines = heldLines(s, id, 'claude');
    assert.equal(lines.length, 3);
    assert.ok(lines[1]?.endsWith("c.json key k: not on the claude profile's keep list"));
    assert.ok(!lines.join('\n').includes('"v"'), 'no value');
    assert.deepEqual(restoreHeld(join(root, 'held'), id, join(home, 'rules')), [
      join(home, 'rules', 'a.md'),
    ]);
    assert.equal(readFileSync(join(home, 'rules', 'a.md'), 'utf8'), 'agent\n');
    restoreHeld(join(root, 'held'), id, undefined);
    assert.deepEqual(JSON.parse(readFileSync(join(home, 'c.json'), 'utf8')), { n: 1, k: 'v' });
    // Nothing left: the session's folder is gone.
    assert.throws(() => restoreHeld(join(root, 'held'), id, undefined), /VLT-1014|Nothing is held/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
