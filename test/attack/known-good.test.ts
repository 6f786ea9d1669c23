// The host's start skips the store scan only for the very file the last host
// closed cleanly (src/store/lmdb/known-good.ts): a clean close is remembered
// and taken once; a host killed leaves nothing, and its successor scans; a
// byte changed after the clean close (harmless or not), or a record left from
// another file, means the full scan, exactly as before. (check.test.ts runs
// its damage against stores closed cleanly too.)
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { knownGoodPath, rememberClean, takeKnownGood } from '../../src/store/lmdb/known-good.js';
import { assertRefused, disposeAll, hostPid, waitGone } from '../support/e2e-helpers.js';
import { canInject, codeOf, FaultyHost, testBuild } from '../support/faults.js';
import { Rig, ok } from '../support/rig.js';
import { PAGE, editBytes, flipBit, isLeaf, storeFile } from '../support/store-damage.js';

const SKIPPED = 'not scanned again';

/** How many starts so far skipped the scan (host.log says so). */
function skips(rig: Rig): number {
  const log = readFileSync(join(rig.vaultDir, 'host.log'), 'utf8');
  return log.split('\n').filter((l) => l.includes(SKIPPED)).length;
}

/** Stops the host cleanly and waits until it is gone (its close is remembered last). */
async function stopClean(rig: Rig): Promise<void> {
  const pid = await hostPid(rig);
  await rig.stop();
  assert.ok(await waitGone(pid), 'the host did not stop');
  assert.ok(
    existsSync(knownGoodPath(storeFile(rig.vaultDir))),
    'the clean close was not remembered',
  );
}

describe('the start after a clean close', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('skips the scan once; a host killed leaves no record, and its successor scans', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-value');
    const token = await rig.addAgent('bot', ['Mail']);
    await stopClean(rig);
    assert.equal((await rig.agent(['get', 'Mail'], token)).stdout, 'mail-value\n');
    assert.equal(skips(rig), 1);
    // Taken at the start: a crash of this host from now on leaves nothing to trust.
    assert.equal(existsSync(knownGoodPath(storeFile(rig.vaultDir))), false);
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    assert.equal((await rig.agent(['get', 'Mail'], token)).stdout, 'mail-value\n');
    assert.equal(skips(rig), 1, 'the start after a kill skipped the scan');
    await stopClean(rig);
    ok(await rig.owner(['entry', 'ls']));
    assert.equal(skips(rig), 2);
  });

  test('a harmless byte changed after the clean close: the full scan, and the host serves', async () => {
    await stopClean(rig);
    // A byte of a leaf page's free middle (between its pointers and its
    // records; both bounds count from the 24-byte page header's end): LMDB
    // never reads it, the scan passes, but it is not the file that was closed.
    editBytes(rig.vaultDir, (bytes) => {
      for (let page = 2; page * PAGE < bytes.length; page++) {
        if (!isLeaf(bytes, page)) continue;
        const lower = bytes.readUInt16LE(page * PAGE + 20);
        const upper = bytes.readUInt16LE(page * PAGE + 22);
        if (upper - lower < 2) continue;
        flipBit(bytes, page * PAGE + 24 + lower, 3);
        return;
      }
      assert.fail('no leaf page with room');
    });
    ok(await rig.owner(['entry', 'ls']));
    assert.equal(skips(rig), 2, 'a changed file skipped the scan');
  });

  test('a record of another file (an older clean close put back): the full scan', async () => {
    await stopClean(rig);
    const record = knownGoodPath(storeFile(rig.vaultDir));
    const kept = readFileSync(record);
    await rig.set('Bank', 'bank-value');
    const pid = await hostPid(rig);
    const skipped = skips(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
    writeFileSync(record, kept);
    ok(await rig.owner(['entry', 'ls']));
    assert.equal(skips(rig), skipped, 'a record of another file skipped the scan');
  });

  test('the record itself: one start only; none for a file changed after the last write', async () => {
    await stopClean(rig);
    const file = join(rig.root, 'copy.mdb');
    copyFileSync(storeFile(rig.vaultDir), file);
    // The file's modification time is now: a host whose last write was a minute ago did not write it.
    rememberClean(file, Date.now() - 60_000);
    assert.equal(existsSync(knownGoodPath(file)), false);
    rememberClean(file, Date.now());
    assert.ok(existsSync(knownGoodPath(file)));
    assert.equal(takeKnownGood(file), true);
    assert.equal(existsSync(knownGoodPath(file)), false);
    assert.equal(takeKnownGood(file), false);
  });

  test('a leaf from the future after a clean close: VLT-3034 at start, not a crash at the first write', async () => {
    const token = await rig.addAgent('reader', ['Mail']);
    await stopClean(rig);
    // As check.test.ts: a leaf page claiming a later transaction reads fine but
    // crashes LMDB's first write into it; only the full scan's write probe finds it.
    const before = readFileSync(storeFile(rig.vaultDir));
    editBytes(rig.vaultDir, (bytes) => {
      for (let page = 2; page * PAGE < bytes.length; page++) {
        if (isLeaf(bytes, page)) flipBit(bytes, page * PAGE + 11, 0);
      }
    });
    assert.notDeepEqual(readFileSync(storeFile(rig.vaultDir)), before);
    assertRefused(await rig.agent(['get', 'Mail'], token), 'VLT-3034');
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    // A host that found damage remembers nothing as it stops.
    const pid = await hostPid(rig);
    await rig.stop();
    assert.ok(await waitGone(pid));
    assert.equal(existsSync(knownGoodPath(storeFile(rig.vaultDir))), false);
  });
});

describe('a run with a failed commit', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test(
    'leaves no record at its close: the next start scans in full',
    { skip: canInject() ? false : 'needs a C compiler (cc) for the fault shim' },
    async () => {
      await rig.create();
      await rig.set('A', 'value-a');
      const token = await rig.addAgent('reader', ['A']);
      const cli = testBuild(rig.root);
      // Its start takes the record the rig's host left (FaultyHost.start stops that one cleanly).
      const host = await FaultyHost.start(rig, rig.root, cli);
      try {
        host.fail(['pwrite', 'write', 'fdatasync', 'fsync'], 'EIO', storeFile(rig.vaultDir));
        const refused = await rig.agent(['get', 'A'], token);
        assert.equal(codeOf(refused), 'VLT-3004', refused.stderr);
        assert.ok(host.hits().length > 0, 'the fault was never met');
        host.heal();
      } finally {
        await host.stop();
      }
      assert.equal(existsSync(knownGoodPath(storeFile(rig.vaultDir))), false);
      const skipped = existsSync(join(rig.vaultDir, 'host.log')) ? skips(rig) : 0;
      assert.equal((await rig.agent(['get', 'A'], token)).stdout, 'value-a\n');
      assert.equal(skips(rig), skipped, 'the start after a failed commit skipped the scan');
    },
  );
});
