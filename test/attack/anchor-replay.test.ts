// Issue 24: replaying an old owner anchor. The anchor's MAC covers (seq, hash,
// at) and nothing newer, so a same-user agent that saved an earlier anchor can
// cut the log back to it, checksums and all, and the anchor holds. The owner's
// client remembers the anchor its last command left, and the host refuses the
// next owner command, `audit --verify` included, on a log cut back before it.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { recordSum } from '../../src/store/schema.js';
import { assertRefused } from '../support/e2e-helpers.js';
import { editRecords, type RawStore } from '../support/store-damage.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token = '';
const key = (seq: number) => `audit/${String(seq).padStart(12, '0')}`;

before(async () => {
  await rig.create();
  await rig.set('A', 'value-a');
  await rig.set('B', 'value-b');
  token = await rig.addAgent('bot', ['A', 'B'], ['--per-minute', '100', '--per-hour', '100']);
});
after(() => rig.dispose());

/** A record written as the store writes it, its checksum beside it. */
function put(db: RawStore, k: string, value: unknown): void {
  db.putSync(k, value);
  db.putSync(`sum/${k}`, recordSum(value));
}

interface Saved {
  anchor: unknown;
  head: { seq: number; hash: Buffer };
}

test('an old anchor put back with the log cut to it: the next owner command and audit --verify refuse with VLT-3003', async () => {
  ok(await rig.owner(['entry', 'ls']));
  // The agent saves the anchor the owner's last command left.
  const saved = await editRecords<Saved>(rig.vaultDir, (db) => ({
    anchor: db.get('audit-anchor') as unknown,
    head: db.get('audit-head') as Saved['head'],
  }));
  assert.ok(saved.anchor);
  // Reads the agent would rather hide, and owner commands after them.
  ok(await rig.agent(['get', 'A'], token));
  ok(await rig.agent(['get', 'B'], token));
  ok(await rig.owner(['agent', 'limits', 'bot', '--per-minute', '50']));
  ok(await rig.owner(['entry', 'ls']));
  assert.ok(existsSync(join(rig.configDir, 'anchors.json')), 'the owner’s client remembers');
  // The cut: records after the saved head gone, head and anchor put back.
  await rig.stop();
  const erased = await editRecords(rig.vaultDir, (db) => {
    const head = db.get('audit-head') as Saved['head'];
    for (let seq = saved.head.seq + 1; seq <= head.seq; seq++) db.removeSync(key(seq));
    put(db, 'audit-head', saved.head);
    put(db, 'audit-anchor', saved.anchor);
    return head.seq - saved.head.seq;
  });
  assert.ok(erased >= 3, `erased ${erased} records`);
  // Before: audit --verify passed, and every owner command went on over the cut log.
  const verify = assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'verify');
  assert.match(
    verify,
    /cut back: the store's anchor is at record [0-9]+, older than record [0-9]+ the owner's last command anchored, and the log now ends at record [0-9]+: records were erased/,
  );
  const ls = assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3003', 'entry ls');
  assert.match(ls, /Nothing was done/);
  // Refused again: nothing re-anchored the cut log meanwhile.
  assertRefused(await rig.owner(['agent', 'ls']), 'VLT-3003', 'agent ls');
  const check = await rig.owner(['vault', 'check']);
  assert.notEqual(check.code, 0);
  assert.match(check.stderr, /VLT-3033: audit-anchor: The audit log was cut back/);
  // An owner who accepts the log as it is forgets the memory (docs/threat-model.md).
  rmSync(join(rig.configDir, 'anchors.json'));
  ok(await rig.owner(['entry', 'ls']));
  ok(await rig.owner(['audit', '--verify']));
});

test('a log cut back and written again past the remembered record is refused as well', async () => {
  ok(await rig.owner(['entry', 'ls']));
  const saved = await editRecords<Saved>(rig.vaultDir, (db) => ({
    anchor: db.get('audit-anchor') as unknown,
    head: db.get('audit-head') as Saved['head'],
  }));
  ok(await rig.agent(['get', 'A'], token));
  ok(await rig.owner(['entry', 'ls']));
  await rig.stop();
  await editRecords(rig.vaultDir, (db) => {
    const head = db.get('audit-head') as Saved['head'];
    for (let seq = saved.head.seq + 1; seq <= head.seq; seq++) db.removeSync(key(seq));
    put(db, 'audit-head', saved.head);
    put(db, 'audit-anchor', saved.anchor);
  });
  // The agent's own reads refill the log past the record the owner remembers.
  for (let i = 0; i < 4; i++) ok(await rig.agent(['get', 'B'], token));
  const msg = assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3003');
  assert.match(msg, /record [0-9]+ is now another one/);
});

test('a vault restored from a backup is not a cut log: restore forgets the memory', async () => {
  rmSync(join(rig.configDir, 'anchors.json'), { force: true });
  const backup = join(rig.root, 'backup.vault');
  ok(await rig.owner(['vault', 'backup', backup]));
  ok(await rig.owner(['entry', 'ls']));
  ok(await rig.owner(['agent', 'ls']));
  ok(await rig.owner(['vault', 'restore', backup, '--yes']));
  ok(await rig.owner(['entry', 'ls']));
  ok(await rig.owner(['audit', '--verify']));
});
