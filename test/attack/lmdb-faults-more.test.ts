// Injected disk faults on the real LMDB host (test/support/faults.ts), beyond
// a running host's own writes (lmdb-faults.test.ts): during its start-up
// scan, and during `vault backup`. Each with reads and owner writes in
// flight: every value released was audited, every owner write acknowledged
// is there, nothing is refused as damage (VLT-3034) for an intact store, and
// the host serves again once the fault ends, without a restart (issue 42).
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  accounted,
  codeOf,
  ownerOn,
  ownerWrites,
  readers,
  testBuild,
  canInject,
  FaultyHost,
  type FaultCall,
  type FaultErrno,
  type Writes,
} from '../support/faults.js';
import { Rig, ok, type Result } from '../support/rig.js';

const skip = canInject() ? false : 'needs a C compiler (cc) for the fault shim';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A vault with entry A, an agent allowed to read it without limits, and the test build. */
async function vaultWithReader(rig: Rig): Promise<{ token: string; cli: string }> {
  await rig.create();
  await rig.set('A', 'value-a');
  const token = await rig.addAgent(
    'reader',
    ['A'],
    ['--per-minute', '100000', '--per-hour', '100000'],
  );
  return { token, cli: testBuild(rig.root) };
}

/** Waits until the host serves the agent's read (up to about a minute); how many tries it took. */
async function served(rig: Rig, token: string, host: FaultyHost): Promise<number> {
  const codes: string[] = [];
  for (let i = 1; i <= 120; i++) {
    const r = await rig.agent(['get', 'A'], token);
    if (r.code === 0) return i;
    codes.push(codeOf(r));
    await sleep(250);
  }
  assert.fail(`never served: ${codes.slice(-5).join(' ')}; host log:\n${host.log}`);
}

/** Removes the clean close's record, so the next start scans the store again. */
const forgetCleanClose = (rig: Rig) =>
  rmSync(join(rig.vaultDir, 'vault.mdb.known-good'), { force: true });

/** The start-up scan's scratch copies left in the vault directory (a half-done scan). */
const scratch = (rig: Rig) => readdirSync(rig.vaultDir).filter((n) => n.startsWith('.check-'));

test(
  'EIO reading the store during the start-up scan: VLT-3004 naming it, never VLT-3034; served again once it ends, unrestarted',
  { skip },
  async (t) => {
    const rig = new Rig();
    let host: FaultyHost | null = null;
    try {
      const { token, cli } = await vaultWithReader(rig);
      await rig.stop();
      // The stop closed cleanly: the next start would skip the scan (known-good.ts).
      forgetCleanClose(rig);
      const store = join(rig.vaultDir, 'vault.mdb');
      // Every read of the store file through read(2) fails from before the host starts.
      host = FaultyHost.startFailing(rig, rig.root, cli, {
        calls: ['pread', 'read'],
        errno: 'EIO',
        file: store,
      });
      await host.listening();
      let phase: 'fault' | 'after' | 'done' = 'fault';
      const writes: Writes = { acknowledged: [], refused: [] };
      const running = readers(rig, token, 2, () => phase === 'done');
      const writing = ownerWrites(cli, rig, () => phase === 'done', writes);
      // Long enough for the scan to run again (once a second) and meet the fault again.
      await sleep(2500);
      const during = await rig.agent(['get', 'A'], token);
      const hits = host.hits().length;
      host.heal();
      phase = 'after';
      const tries = await served(rig, token, host);
      // An owner write acknowledged after the fault, too.
      for (let i = 0; i < 240 && writes.acknowledged.length === 0; i++) await sleep(250);
      phase = 'done';
      const tally = await running;
      await writing;

      assert.ok(hits > 0, 'the fault was never met');
      assert.equal(host.proc.exitCode, null, 'the host died');
      assert.match(host.log, /the store reads whole again: serving/);
      assert.equal(during.code, 74, 'a read during the fault was not refused');
      assert.match(during.stderr, /VLT-3004: The store file could not be read: [^\n]*\(EIO\)/);
      assert.ok(
        (tally.refused.get('VLT-3004') ?? 0) > 0,
        'no read was refused during the fault (VLT-3004)',
      );
      for (const code of tally.refused.keys())
        assert.equal(code, 'VLT-3004', `refused with ${code}: ${[...tally.said].join(' | ')}`);
      for (const code of writes.refused)
        assert.equal(code, 'VLT-3004', `an owner write refused with ${code}`);
      assert.ok(writes.acknowledged.length > 0, 'no owner write was acknowledged');
      await host.stop();
      host = null;
      assert.deepEqual(scratch(rig), [], 'a scan left its scratch copy');
      const reads = await accounted(rig, tally, 1, writes);
      t.diagnostic(
        `EIO on the store's reads from before the start: ${hits} calls failed; refused ${JSON.stringify([...tally.refused])}; ` +
          `served again ${tries} tries after the fault ended (same host); ${tally.released + 1} released, ${reads} audited; ` +
          `owner writes ${writes.acknowledged.length} acknowledged (all present), refused ${writes.refused.length} (VLT-3004)`,
      );
    } finally {
      await host?.stop();
      await rig.stop();
      await rig.dispose();
    }
  },
);

for (const errno of ['EIO', 'ENOSPC'] as const) {
  test(
    `${errno} on writes into the start-up scan's scratch copy says nothing of the store: the host serves, never VLT-3034`,
    { skip },
    async (t) => {
      const rig = new Rig();
      let host: FaultyHost | null = null;
      try {
        const { token, cli } = await vaultWithReader(rig);
        await rig.stop();
        // The stop closed cleanly: the next start would skip the scan (known-good.ts).
        forgetCleanClose(rig);
        // The scan copies the store (write) into .check-<pid>/ and writes into
        // the copy (pwrite): the writes into the copy fail, the copy is made.
        host = FaultyHost.startFailing(rig, rig.root, cli, {
          calls: ['pwrite', 'fdatasync', 'fsync'],
          errno,
          file: join(rig.vaultDir, '.check-*', 'vault.mdb'),
        });
        // Its scan has run (it listens after it) and it holds the lock: no
        // client starts a production host instead (which wrote nothing into
        // the scan's copy under the shim: 0 faults met, seen in full runs).
        await host.listening();
        let phase: 'fault' | 'done' = 'fault';
        const tries = await served(rig, token, host);
        const writes: Writes = { acknowledged: [], refused: [] };
        const running = readers(rig, token, 2, () => phase === 'done');
        const writing = ownerWrites(cli, rig, () => phase === 'done', writes);
        // `vault check` runs the same scan, the fault still on: no damage either.
        const check = await ownerOn(cli, rig, ['vault', 'check']);
        await sleep(1000);
        const hits = host.hits().length;
        host.heal();
        phase = 'done';
        const tally = await running;
        await writing;

        assert.ok(hits > 0, 'the fault was never met');
        assert.equal(check.code, 0, `vault check under the fault: ${check.stderr}`);
        assert.equal(host.proc.exitCode, null, 'the host died');
        assert.deepEqual([...tally.refused], [], [...tally.said].join(' | '));
        assert.deepEqual(writes.refused, []);
        assert.ok(writes.acknowledged.length > 0, 'no owner write was acknowledged');
        assert.doesNotMatch(host.log, /cannot be read/);
        await host.stop();
        host = null;
        assert.deepEqual(scratch(rig), [], 'a scan left its scratch copy');
        const reads = await accounted(rig, tally, 1, writes);
        t.diagnostic(
          `${errno} on the scan's scratch writes: ${hits} calls failed; first read served on try ${tries}; ` +
            `${tally.released + 1} released, ${reads} audited, none refused; owner writes ${writes.acknowledged.length} acknowledged (all present)`,
        );
      } finally {
        await host?.stop();
        await rig.stop();
        await rig.dispose();
      }
    },
  );
}

const BACKUP_FAULTS: readonly {
  calls: readonly FaultCall[];
  errno: FaultErrno;
  said: RegExp;
}[] = [
  { calls: ['write', 'pwrite'], errno: 'ENOSPC', said: /its file system is full \(ENOSPC\)/ },
  { calls: ['write', 'pwrite'], errno: 'EIO', said: /its disk reported an I\/O error \(EIO\)/ },
  { calls: ['fsync', 'fdatasync'], errno: 'EIO', said: /its disk reported an I\/O error \(EIO\)/ },
  { calls: ['fsync', 'fdatasync'], errno: 'ENOSPC', said: /its file system is full \(ENOSPC\)/ },
  {
    calls: ['pread', 'read'],
    errno: 'EIO',
    said: /the copy did not read back, its disk reported an I\/O error \(EIO\)/,
  },
];

for (const fault of BACKUP_FAULTS) {
  test(
    `${fault.errno} on the backup file's ${fault.calls[0]}: backup refused naming it, nothing under its name, the vault untouched and serving`,
    { skip },
    async (t) => {
      const rig = new Rig();
      let host: FaultyHost | null = null;
      try {
        const { token, cli } = await vaultWithReader(rig);
        // Enough to copy that the copy is more than one write.
        for (let i = 0; i < 20; i++) await rig.set(`E${i}`, 'x'.repeat(4000));
        await rig.stop();
        // The stop closed cleanly: the next start would skip the scan (known-good.ts).
        forgetCleanClose(rig);
        host = FaultyHost.startFailing(rig, rig.root, cli, {
          calls: ['pwrite'],
          errno: 'EIO',
          file: '/nonexistent',
        });
        // Holding the lock before any reader runs: a reader that found no
        // socket started a production host, which the test build then refused
        // (VLT-3010) and no fault met (seen in a full run).
        await host.listening();
        await served(rig, token, host);
        const dir = join(rig.root, 'backups');
        mkdirSync(dir);
        const target = join(dir, 'vault.bak');
        let phase: 'fault' | 'done' = 'fault';
        const writes: Writes = { acknowledged: [], refused: [] };
        const running = readers(rig, token, 2, () => phase === 'done');
        const writing = ownerWrites(cli, rig, () => phase === 'done', writes);
        // The file the backup writes: <dir>/.vault.bak.tmp-<random>/vault.mdb, renamed to <dir>/vault.bak once whole.
        host.fail(fault.calls, fault.errno, join(dir, '.vault.bak.tmp-*', 'vault.mdb'));
        const refused: Result[] = [];
        for (let i = 0; i < 2; i++)
          refused.push(await ownerOn(cli, rig, ['vault', 'backup', target]));
        const hits = host.hits().length;
        const leftDuring = readdirSync(dir);
        host.heal();
        const after = await ownerOn(cli, rig, ['vault', 'backup', target]);
        phase = 'done';
        const tally = await running;
        await writing;

        const seen = `${refused.map((r) => r.stderr.trim()).join(' | ')}; host log:\n${host.log}`;
        assert.ok(hits > 0, `the fault was never met: ${seen}`);
        for (const r of refused) {
          assert.equal(r.code, 65, `a backup under the fault: ${r.code} ${r.stdout} ${seen}`);
          assert.match(r.stderr, /VLT-1002: Cannot write the backup to \S+vault\.bak: /);
          assert.match(r.stderr, fault.said);
        }
        assert.deepEqual(leftDuring, [], 'a refused backup left a file');
        assert.equal(after.code, 0, `the backup after the fault: ${after.stderr}`);
        assert.deepEqual(readdirSync(dir), ['vault.bak']);
        assert.equal(host.proc.exitCode, null, 'the host died');
        assert.deepEqual([...tally.refused], [], [...tally.said].join(' | '));
        assert.deepEqual(writes.refused, []);
        assert.ok(writes.acknowledged.length > 0, 'no owner write was acknowledged');
        await host.stop();
        host = null;
        const reads = await accounted(rig, tally, 1, writes);
        // Only the backup written is audited as one.
        const backups = ok(await rig.owner(['audit', '--json']))
          .split('\n')
          .filter((l) => l.includes('"vault_backup"')).length;
        assert.equal(backups, 1);
        t.diagnostic(
          `${fault.calls.join(',')} ${fault.errno} on the backup file: ${hits} calls failed; ${refused.length} backups refused ` +
            `(${/VLT-\d+: .*/.exec(refused[0]?.stderr ?? '')?.[0]}); meanwhile ${tally.released + 1} reads released, ${reads} audited, none refused; ` +
            `owner writes ${writes.acknowledged.length} acknowledged (all present); the backup after it written`,
        );
      } finally {
        await host?.stop();
        await rig.stop();
        await rig.dispose();
      }
    },
  );
}
