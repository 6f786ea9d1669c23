// Fail closed: when the audit record cannot be committed (a full file system,
// a read-only store file), every mode refuses with VLT-3004 and releases
// nothing, and every value that was released has its record.
import assert from 'node:assert/strict';
import { closeSync, fstatSync, ftruncateSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Rig, ok, type Result } from '../support/rig.js';
import { bindReadOnly, canMount, mountTmpfs, unmount } from '../support/tmpfs.js';

const skip = canMount() ? false : 'needs permission to mount (root)';

function refusedClosed(r: Result, what: string): void {
  assert.equal(r.code, 74, `${what}: ${r.stderr}`);
  assert.equal(r.stdout, '', `${what} released something`);
  assert.match(r.stderr, /^vault-cli: VLT-3004: [^\n]*\n$/);
}

/** Fills the file system holding `dir` but for `spare` bytes. */
function fill(dir: string, spare: number): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(4096, 0x41);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    ftruncateSync(fd, Math.max(0, fstatSync(fd).size - spare));
  } finally {
    closeSync(fd);
  }
  return path;
}

test(
  'a full file system: reads stop with VLT-3004, and every released value was audited',
  { skip },
  async (t) => {
    const rig = new Rig();
    mountTmpfs(rig.vaultDir, 4096);
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      await rig.set('T', 'JBSWY3DPEHPK3PXP', 'totp');
      const token = await rig.addAgent(
        'filler',
        ['A', 'T'],
        ['--per-minute', '100000', '--per-hour', '100000'],
      );
      // Leave a little more than the host's 1 MiB of headroom: some reads fit, then none.
      const filler = fill(rig.vaultDir, 1024 * 1024 + 96 * 1024);

      let released = 0;
      let refused = 0;
      for (let i = 0; i < 2000 && refused < 3; i++) {
        const r = await rig.agent(['get', 'A'], token);
        if (r.code === 0) {
          assert.equal(r.stdout, 'value-a\n');
          released++;
        } else {
          refusedClosed(r, `get #${i}`);
          refused++;
        }
      }
      assert.equal(refused, 3, 'the file system never filled up');
      assert.ok(released > 0, 'no read fitted in the space left');
      refusedClosed(await rig.agent(['totp', 'T'], token), 'totp');

      rmSync(filler);
      const audit = ok(await rig.owner(['audit', '--agent', 'filler', '--json']));
      const reads = audit.split('\n').filter((l) => l.includes('"ai_read"'));
      assert.equal(reads.length, released, 'a value went out without its audit record');
      ok(await rig.owner(['audit', '--verify']));
      t.diagnostic(
        `full file system: ${released} reads released and audited, then ${refused + 1} refused with VLT-3004 (get, totp)`,
      );
    } finally {
      await rig.stop();
      unmount(rig.vaultDir);
      await rig.dispose();
    }
  },
);

test('a read-only store file: every mode refuses with VLT-3004', { skip }, async (t) => {
  const rig = new Rig();
  const store = join(rig.vaultDir, 'vault.mdb');
  let bound = false;
  try {
    await rig.create();
    await rig.set('A', 'value-a');
    await rig.set('T', 'JBSWY3DPEHPK3PXP', 'totp');
    const token = await rig.addAgent('reader', ['A', 'T']);
    assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');

    await rig.stop();
    bindReadOnly(store);
    bound = true;
    refusedClosed(await rig.agent(['get', 'A'], token), 'get');
    refusedClosed(await rig.agent(['get', 'A', '--field', 'password'], token), 'get --field');
    refusedClosed(await rig.agent(['totp', 'T'], token), 'totp');
    await rig.stop();
    unmount(store);
    bound = false;

    const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
    assert.equal(audit.split('\n').filter((l) => l.includes('"ai_read"')).length, 1);
    t.diagnostic('read-only store file: get, get --field, totp each refused with VLT-3004');
  } finally {
    await rig.stop();
    if (bound) unmount(store);
    await rig.dispose();
  }
});
