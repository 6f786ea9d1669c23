// Audit retention: FILLS proxy fills (each one write transaction with its
// audit record, through the host's own release path, in this process: real
// processes would take hours), archived; the next FILLS fills leave the store
// no larger than it was before them (the archived records' pages are reused),
// and the chain verifies across both archives and the store, through the CLI.
//
// Each fill is a synced LMDB commit: about 150 a second on this machine's
// disk, so 2 x 100,000 would take over 20 minutes. The vault of this test
// lives on tmpfs (/dev/shm, when there is one), where a sync costs nothing:
// the same code, the same store, without the disk's flush time.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Secret } from '../../src/crypto/secret.js';
import { authenticate, endSession, release } from '../../src/host/agent/access.js';
import { archiveAudit, verifyWithArchive } from '../../src/host/vault/archive.js';
import { HostContext } from '../../src/host/context.js';
import { unlockOwner } from '../../src/host/owner/keys.js';
import { assertRefused, disposeAll } from '../support/e2e-helpers.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const FILLS = Number(process.env.ARCHIVE_FILLS ?? 100_000);

if (existsSync('/dev/shm') && process.env.ARCHIVE_ON_DISK === undefined) {
  process.env.TMPDIR = '/dev/shm';
}

describe('audit archive keeps the store bounded', () => {
  const rig = new Rig();
  let token = '';
  before(async () => {
    await rig.create();
    await rig.set('API', 'api-key-value');
    token = await rig.addAgent(
      'filler',
      ['API'],
      ['--per-minute', '100000000', '--per-hour', '100000000', '--kind', 'script'],
    );
    await rig.stop();
  });
  after(() => disposeAll(rig));

  test(`${FILLS} fills, archive, ${FILLS} more: the store grows no larger; the chain verifies across both`, async (t) => {
    const ctx = new HostContext(rig.vaultDir);
    const store = join(rig.vaultDir, 'vault.mdb');
    const a1 = join(rig.root, 'audit-1.arc');
    const a2 = join(rig.root, 'audit-2.arc');
    const fill = async (n: number): Promise<number> => {
      const started = Date.now();
      const session = authenticate(ctx, Secret.fromString(token), 'test');
      try {
        for (let i = 0; i < n; i++) {
          // As in the host, requests come one event-loop turn after another (lmdb-js
          // renews its read snapshot between turns, so freed pages become reusable).
          if (i % 100 === 0) await new Promise((r) => setImmediate(r));
          const [v] = await release(
            ctx,
            session,
            [{ entry: 'API', field: 'password' }],
            { kind: 'fill', host: 'api.example.com' },
            'test',
          );
          assert.equal(v?.expose().toString('utf8'), 'api-key-value');
          v?.wipe();
        }
      } finally {
        endSession(session);
      }
      return Date.now() - started;
    };
    let sizes: number[] = [];
    try {
      const ms1 = await fill(FILLS);
      const full = statSync(store).size;
      const s = await unlockOwner(ctx, Secret.fromString(PASSPHRASE));
      try {
        const r1 = archiveAudit(ctx, s, { path: a1, before: Date.now() + 1 }, 'test');
        assert.ok(r1.archived > FILLS);
        await new Promise((r) => setImmediate(r));
        const before = statSync(store).size;
        const ms2 = await fill(FILLS);
        const after2 = statSync(store).size;
        const r2 = archiveAudit(ctx, s, { path: a2, before: Date.now() + 1 }, 'test');
        assert.equal(r2.firstSeq, r1.lastSeq + 1);
        const v = verifyWithArchive(ctx, s, [a2, a1]);
        assert.equal(v.brokenAt, null);
        assert.equal(v.archived, r1.archived + r2.archived);
        sizes = [full, before, after2, statSync(store).size];
        t.diagnostic(
          `fills: ${FILLS} in ${ms1} ms, then ${FILLS} in ${ms2} ms; store bytes: ${full} after the first, ` +
            `${before} after archiving, ${after2} after the next ${FILLS}; archives ${statSync(a1).size} and ${statSync(a2).size} bytes`,
        );
      } finally {
        s.wipe();
      }
    } finally {
      await ctx.close();
    }
    const [, beforeNext, afterNext] = sizes;
    assert.ok(afterNext !== undefined && beforeNext !== undefined);
    assert.ok(afterNext <= beforeNext, `the store grew from ${beforeNext} to ${afterNext} bytes`);

    // The CLI: both archives and the store verify as one chain, and the
    // owner's anchor holds over it: archiving vouches for the head it archives
    // (it refuses a log that does not extend the last anchor), so the anchor is
    // the last record of the second archive, the one the store's chain starts
    // after; one archive alone does not reach the store; a changed byte in an
    // archive is refused.
    const both = ok(await rig.owner(['audit', '--verify', '--archive', a1, '--archive', a2]));
    const m =
      /^audit chain verified: ([0-9]+) records \(([0-9]+) in the archive, [0-9]+ in the store\); anchored up to record ([0-9]+) by the owner, [0-9]+ after it unanchored\n$/.exec(
        both,
      );
    assert.ok(m !== null, both);
    assert.equal(m[3], m[2], 'anchored up to the last archived record');
    assertRefused(await rig.owner(['audit', '--verify', '--archive', a1]), 'VLT-3003');
    ok(await rig.owner(['audit', '--verify']));
    const bytes = readFileSync(a2);
    const at = bytes.length - 10;
    bytes[at] = (bytes[at] ?? 0) ^ 1;
    const bad = join(rig.root, 'audit-bad.arc');
    writeFileSync(bad, bytes);
    assertRefused(
      await rig.owner(['audit', '--verify', '--archive', a1, '--archive', bad]),
      'VLT-3037',
    );
    ok(await rig.owner(['vault', 'check']));
  });

  test('audit archive from the CLI: nothing that old, then the records before now', async () => {
    const file = join(rig.root, 'audit-3.arc');
    assert.match(
      ok(await rig.owner(['audit', 'archive', '--before', '2001-01-01', file])),
      /nothing archived/,
    );
    assert.match(
      ok(await rig.owner(['audit', 'archive', '--before', '0m', file])),
      /^archived records [0-9]+ to [0-9]+/,
    );
    ok(await rig.owner(['audit', '--verify']));
    ok(await rig.owner(['vault', 'check']));
  });
});
