// Backups taken while the host serves: 50 of them while 20 agents read and the
// owner writes, each restored into a fresh directory, where it opens, passes
// `vault check`, lists its entries and verifies its audit chain. And the restore preview names
// what a restore would roll back: revived agents, lifted locks, lost records.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Secret } from '../../src/crypto/secret.js';
import { verifyWithArchive } from '../../src/host/vault/archive.js';
import { restoreVault } from '../../src/host/vault/backup.js';
import { checkStore } from '../../src/host/vault/check.js';
import { HostContext } from '../../src/host/context.js';
import { listEntries } from '../../src/host/entries/entries.js';
import { unlockOwner } from '../../src/host/owner/keys.js';
import { assertRefused, disposeAll, waitGone } from '../support/e2e-helpers.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const BACKUPS = Number(process.env.BACKUP_TRIALS ?? 50);
const AGENTS = 20;
const ENTRIES = 5;

interface Summary {
  path: string;
  bytes: number;
  entries: number;
  agents: number;
  auditRecords: number;
  head: { seq: number; hash: string } | null;
}

/**
 * Restores `backup` into the fresh directory `dir` with the host's own code,
 * in this process, as `vault restore --yes` would; then it must open, pass
 * `vault check`'s checks, list every entry and verify its audit chain and
 * anchor. (The store file is still read whole in a child first, as the host
 * does: that is part of what is tested.)
 */
async function restoreInProcess(
  backup: string,
  dir: string,
  names: readonly string[],
  b: number,
): Promise<void> {
  const ctx = new HostContext(dir);
  try {
    const done = await restoreVault(
      ctx,
      { path: backup, passphrase: Secret.fromString(PASSPHRASE), confirm: true },
      'test',
    );
    assert.equal(done.restored, true, `backup ${b}`);
    const report = await checkStore(
      ctx.storePath,
      () => ctx.store(),
      () => unlockOwner(ctx, Secret.fromString(PASSPHRASE), 'test'),
      ctx.now(),
    );
    assert.deepEqual(report.problems, [], `backup ${b}`);
    const s = await unlockOwner(ctx, Secret.fromString(PASSPHRASE), 'test');
    try {
      assert.deepEqual(
        listEntries(ctx, s)
          .map((e) => e.name)
          .sort(),
        names,
      );
      const v = verifyWithArchive(ctx, s, []);
      assert.equal(v.brokenAt, null, `backup ${b}`);
      assert.equal(v.anchorProblem, null, `backup ${b}`);
    } finally {
      s.wipe();
    }
  } finally {
    await ctx.close();
  }
  assert.ok(existsSync(join(dir, 'vault.mdb')));
}

/** Stops a rig's host without another Argon2 unlock. */
async function killHost(rig: Rig): Promise<void> {
  const status = await rig.owner(['daemon', 'status', '--json']);
  if (status.code !== 0) return;
  const { pid } = JSON.parse(status.stdout) as { pid: number };
  process.kill(pid, 'SIGTERM');
  await waitGone(pid);
}

describe('vault backup while the host serves', () => {
  const rig = new Rig();
  const fresh: Rig[] = [];
  before(() => rig.create());
  after(async () => {
    await disposeAll(rig);
    for (const r of fresh) await r.dispose();
  });

  test(`${BACKUPS} backups while ${AGENTS} agents read and the owner writes: each restores, opens and passes check`, async (t) => {
    const names = Array.from({ length: ENTRIES }, (_, i) => `entry ${i}`);
    for (const n of names) await rig.set(n, `${n} v0`);
    const tokens: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      tokens.push(
        await rig.addAgent(`reader${i}`, names, [
          '--per-minute',
          '100000',
          '--per-hour',
          '100000',
          '--kind',
          'script',
        ]),
      );
    }
    let stop = false;
    let reads = 0;
    let writes = 0;
    const readers = tokens.map(async (token, i) => {
      for (let n = 0; !stop; n++) {
        const name = names[(i + n) % ENTRIES] ?? 'entry 0';
        const r = await rig.agent(['get', name], token);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^${name} v[0-9]+\\n$`));
        reads++;
      }
    });
    const writer = (async () => {
      for (let v = 1; !stop; v++) {
        ok(
          await rig.owner(['entry', 'set', names[v % ENTRIES] ?? 'entry 0'], {
            input: `${names[v % ENTRIES]} v${v}`,
          }),
        );
        writes++;
      }
    })();

    const summaries: Summary[] = [];
    const taking = Date.now();
    try {
      for (let b = 0; b < BACKUPS; b++) {
        const path = join(rig.root, `backup-${b}.mdb`);
        const r = await rig.owner(['vault', 'backup', path, '--json']);
        assert.equal(r.code, 0, r.stderr);
        summaries.push(JSON.parse(r.stdout) as Summary);
      }
    } finally {
      stop = true;
      await Promise.all([...readers, writer]);
    }
    t.diagnostic(
      `${reads} agent reads and ${writes} owner writes during ${BACKUPS} backups (${Date.now() - taking} ms)`,
    );
    // No temp file is left beside the backups.
    assert.deepEqual(
      readdirSync(rig.root).filter((f) => f.includes('.tmp-')),
      [],
    );
    let lastSeq = 0;
    for (const s of summaries) {
      assert.equal(s.entries, ENTRIES);
      assert.equal(s.agents, AGENTS);
      assert.ok(s.head !== null && s.head.seq >= lastSeq && s.auditRecords === s.head.seq);
      lastSeq = s.head.seq;
    }

    // The first and last backups go through the CLI and a host of their own;
    // the others through the same host code in this process (restore, check,
    // list, chain): a dozen fewer processes each, the same checks. (Two at a
    // time was no faster here under load.)
    const restoring = Date.now();
    for (const [b, s] of summaries.entries()) {
      if (b === 0 || b === summaries.length - 1) continue;
      await restoreInProcess(s.path, join(rig.root, `restored-${b}`), names, b);
    }
    for (const [b, s] of summaries.entries()) {
      if (b !== 0 && b !== summaries.length - 1) continue;
      const target = new Rig();
      fresh.push(target);
      const restore = await target.owner(['vault', 'restore', s.path, '--yes']);
      assert.equal(restore.code, 0, `backup ${b}: ${restore.stderr}`);
      assert.match(restore.stdout, /vault restored and verified/);
      const check = await target.owner(['vault', 'check']);
      assert.equal(check.code, 0, `backup ${b}: ${check.stderr}`);
      assert.match(check.stdout, /no damage found/);
      // It opens: every entry is there, with a value, and the chain verifies.
      const listed = JSON.parse(ok(await target.owner(['entry', 'ls', '--json']))) as {
        name: string;
      }[];
      assert.deepEqual(listed.map((e) => e.name).sort(), names);
      ok(await target.owner(['audit', '--verify']));
      await killHost(target);
      assert.ok(existsSync(join(target.vaultDir, 'vault.mdb')));
    }
    t.diagnostic(`${summaries.length} backups restored and checked (${Date.now() - restoring} ms)`);
  });
});

describe('the restore preview', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('names revived agents, lifted locks, undone rotations and lost audit records; refuses without --yes off a terminal', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-v1');
    await rig.set('Bank', 'bank-v1');
    await rig.addAgent('old-bot', ['Mail']);
    await rig.addAgent('helper', ['Bank']);
    const backup = join(rig.root, 'before.mdb');
    ok(await rig.owner(['vault', 'backup', backup]));
    const before = JSON.parse(
      ok(await rig.owner(['audit', '--json']))
        .trim()
        .split('\n')
        .pop() ?? '{}',
    ) as { seq: number };

    ok(await rig.owner(['agent', 'revoke', 'old-bot']));
    ok(await rig.owner(['agent', 'lock', 'helper']));
    await rig.set('Bank', 'bank-v2');
    const now = ok(await rig.owner(['audit', '--json']))
      .trim()
      .split('\n').length;

    const preview = await rig.owner(['vault', 'restore', backup, '--dry-run', '--json']);
    assert.equal(preview.code, 0, preview.stderr);
    const p = (JSON.parse(preview.stdout) as { preview: Record<string, unknown> }).preview;
    assert.deepEqual(p.revivedAgents, ['old-bot']);
    assert.deepEqual(p.liftedLocks, ['helper']);
    assert.ok((p.undoneRotations as string[]).includes('Bank'));
    // Every record after the backup's (the backup's own record included) would be lost.
    assert.equal(p.lostAuditRecords, now + 1 - before.seq);

    // The words a person reads.
    const text = await rig.owner(['vault', 'restore', backup]);
    assert.equal(text.code, 64);
    assert.match(text.stderr, /^vault-cli: VLT-1010: /);
    assert.match(text.stdout, /agents that come back +"old-bot"/);
    assert.match(text.stdout, /locks that lift +"helper"/);
    assert.match(text.stdout, /audit records lost +[0-9]+ of [0-9]+/);
    // Nothing was replaced: the agent is still revoked.
    const agents = JSON.parse(ok(await rig.owner(['agent', 'ls', '--json']))) as { name: string }[];
    assert.ok(!agents.some((a) => a.name === 'old-bot'));

    // Confirmed: the vault is the backup's, the vault as it was kept aside.
    const done = await rig.owner(['vault', 'restore', backup, '--yes']);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /kept at .*vault\.mdb\.before-restore-/);
    const back = JSON.parse(ok(await rig.owner(['agent', 'ls', '--json']))) as { name: string }[];
    assert.ok(back.some((a) => a.name === 'old-bot'));
    ok(await rig.owner(['vault', 'check']));
    ok(await rig.owner(['audit', '--verify']));
  });

  test('a file that is not a backup is refused and nothing changes', async () => {
    const junk = join(rig.root, 'passphrase');
    const r = await rig.owner(['vault', 'restore', junk, '--yes']);
    assertRefused(r, 'VLT-3037');
    ok(await rig.owner(['vault', 'check']));
  });
});
