// Audit names sealed per epoch (issue 28), through the built CLI, on a vault
// the previous build wrote (test/fixtures/vault-audit-v1: every audit record a
// box sealed to the owner's audit key, an archive and a backup of its own):
// this build appends epoch records to it, and `audit`, `audit --verify`,
// `vault check`, `audit archive` (old archive and new) and `vault restore`
// read both forms. Tampering with an epoch key or a sealed name is caught.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { recordHash } from '../../src/host/audit/log.js';
import { recordSum, type AuditRecord } from '../../src/store/schema.js';
import { assertRefused, auditRecords, hostProcesses, waitGone } from '../support/e2e-helpers.js';
import { readStore } from '../support/live-store.js';
import { ROOT, Rig, ok } from '../support/rig.js';
// The tamper test rewrites raw audit records on purpose, below the Store API.
import { editRecords } from '../support/store-damage.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'vault-audit-v1');
const PASS = 'fixture passphrase audit';
const TOKEN = 'vlt_0ff5KUPrbqEmOe4fwgoIiXf22L5ncnh56wQ6ebN8c2K1Ge4ST4WlfHT2KVk0oLzqX0omVrt';
const OLD_ARCHIVE = join(FIXTURE, 'before.archive');

const rig = new Rig();
const key = (seq: number) => `audit/${String(seq).padStart(12, '0')}`;

before(() => {
  mkdirSync(rig.vaultDir, { recursive: true, mode: 0o700 });
  copyFileSync(join(FIXTURE, 'vault.mdb'), join(rig.vaultDir, 'vault.mdb'));
  writeFileSync(rig.passphraseFile, PASS + '\n', { mode: 0o600 });
});
after(() => rig.dispose());

const get = async (entry: string, field = 'password') =>
  ok(await rig.agent(['get', entry, '--field', field], TOKEN));

/**
 * Ends the host without an owner command: `daemon stop` is one, and anchors
 * the chain head, which would vouch for the agent's last read.
 */
async function stopQuietly(): Promise<void> {
  for (const pid of hostProcesses(rig.vaultDir)) {
    process.kill(pid, 'SIGTERM');
    assert.ok(await waitGone(pid), 'the host ends on SIGTERM');
  }
}

const forms = () =>
  readStore(rig.vaultDir, (tx) =>
    tx
      .audit()
      .map((r) => [r.seq, r.sealed === null ? '-' : r.epoch === undefined ? 'box' : 'epoch']),
  );

test('the previous build’s records and this build’s read, verify and check together', async () => {
  assert.equal(await get('GitHub'), 'hunter2\n');
  assert.equal(await get('OpenAI', 'key'), 'sk-old\n');
  const audit = await auditRecords(rig);
  // Records 8 to 13 the previous build wrote (1-7 are archived), then this build's.
  assert.equal(audit[0]?.seq, 8);
  const reads = audit.filter((r) => r.action === 'read');
  assert.deepEqual(
    reads.slice(0, 4).map((r) => `${r.seq} ${r.entry}/${r.field}`),
    ['8 OpenAI/key', '9 GitHub/password', '11 GitHub/password', '13 OpenAI/key'],
  );
  assert.deepEqual(
    reads.slice(4).map((r) => `${r.entry}/${r.field}`),
    ['GitHub/password', 'OpenAI/key'],
  );
  const f = await forms();
  assert.ok(
    f.some(([, form]) => form === 'box'),
    'old records stay as written',
  );
  assert.ok(
    f.some(([, form]) => form === 'epoch'),
    'new records are sealed per epoch',
  );
  assert.ok(f.filter(([seq]) => (seq as number) <= 13).every(([, form]) => form !== 'epoch'));
  assert.match(ok(await rig.owner(['audit', '--verify'])), /^audit chain verified: /);
  assert.match(ok(await rig.owner(['vault', 'check'])), /^vault check: no damage found/);
});

test('the archive the previous build made verifies after, and joins the store’s chain', async () => {
  assert.match(
    ok(await rig.owner(['audit', '--verify', '--archive', OLD_ARCHIVE])),
    /^audit chain verified: \d+ records \(7 in the archive, \d+ in the store\)/,
  );
});

test('an archive of old and new records verifies with the old one', async () => {
  await get('GitHub');
  await new Promise((r) => setTimeout(r, 1100));
  const newer = join(rig.root, 'mixed.archive');
  ok(await rig.owner(['audit', 'archive', '--before', '1s', newer]));
  assert.match(
    ok(await rig.owner(['audit', '--verify', '--archive', OLD_ARCHIVE, '--archive', newer])),
    /^audit chain verified: \d+ records \(\d+ in the archives?, \d+ in the store\)/,
  );
  assert.match(ok(await rig.owner(['vault', 'check'])), /^vault check: no damage found/);
});

test('a backup the previous build made restores, reads, verifies and takes new records', async () => {
  const out = ok(
    await rig.owner(['vault', 'restore', join(FIXTURE, 'before.backup'), '--yes', '--json']),
  );
  assert.ok(out.length > 0);
  assert.equal(await get('GitHub'), 'hunter2\n');
  const audit = await auditRecords(rig);
  assert.ok(audit.some((r) => r.seq === 9 && r.entry === 'GitHub'));
  assert.equal(audit.at(-1)?.entry, 'GitHub');
  assert.match(ok(await rig.owner(['audit', '--verify'])), /^audit chain verified: /);
  assert.match(ok(await rig.owner(['vault', 'check'])), /^vault check: no damage found/);
});

test('a changed epoch key is caught by --verify and check; re-chained, check finds its name sealed', async () => {
  await get('GitHub');
  await get('OpenAI', 'key');
  await stopQuietly();
  const records = await readStore(rig.vaultDir, (tx) => tx.audit());
  // The last record: an agent's read after the owner's last command, so not anchored.
  const last = records.at(-1) as AuditRecord;
  assert.ok(last.epoch !== undefined && last.action === 'read');
  const flipped = Buffer.from(last.epoch);
  flipped[3] = (flipped[3] as number) ^ 1;
  await editRecords(rig.vaultDir, (db) => db.putSync(key(last.seq), { ...last, epoch: flipped }));
  const verify = await rig.owner(['audit', '--verify']);
  assert.match(assertRefused(verify, 'VLT-3003'), new RegExp(`\\brecord ${last.seq}\\b`));
  const check = await rig.owner(['vault', 'check']);
  assert.equal(check.code, 74);
  assert.match(check.stderr, new RegExp(`VLT-3033: audit ${last.seq}: `));

  // Re-hashed to fit the chain (an attacker can hash, not MAC), with what
  // `vault check` appended since: the changed record is after the owner's
  // anchor, so the chain verifies, but its name opens no more.
  await stopQuietly();
  await editRecords(rig.vaultDir, (db) => {
    const after = [...db.getRange({ start: key(last.seq), end: 'audit0' })].map(
      (r) => r.value as AuditRecord,
    );
    let prev = last.prev;
    let head = { seq: 0, hash: prev };
    for (const r of after) {
      const { hash: _h, ...rest } = {
        ...r,
        prev,
        ...(r.seq === last.seq ? { epoch: flipped } : {}),
      };
      void _h;
      head = { seq: r.seq, hash: recordHash(rest) };
      db.putSync(key(r.seq), { ...rest, hash: head.hash });
      prev = head.hash;
    }
    db.putSync('audit-head', head);
    db.putSync('sum/audit-head', recordSum(head));
  });
  // Issue 36: records after the anchor are keyed by the hosts too (store/seal.ts), so the
  // re-hashed one no longer verifies, anchored or not.
  assert.match(
    assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3045'),
    new RegExp(`audit record ${last.seq} was not written by a vault host`),
  );
  const again = await rig.owner(['vault', 'check']);
  assert.equal(again.code, 74);
  assert.match(
    again.stderr,
    new RegExp(`VLT-3031: audit ${last.seq}: Its sealed entry name does not open`),
  );
});
