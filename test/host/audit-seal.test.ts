// Audit names sealed per epoch (issue 28): the epoch primitives on their own,
// then a real store whose log mixes records of the form before epochs (a box
// sealed to the owner's audit key per record, written as the previous build
// wrote them) with records of epochs, read, verified, checked and tampered with.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AuditEvent } from '../../src/core/audit.js';
import { slot } from '../../src/crypto/aead.js';
import {
  EpochOpener,
  SealEpoch,
  deriveEpochKey,
  EPOCH_PUBLIC_KEY_BYTES,
} from '../../src/crypto/audit-seal.js';
import { newKeyPair, openSealed, sealTo, type KeyPair } from '../../src/crypto/box.js';
import { newKdfParams } from '../../src/crypto/kdf.js';
import { appendAudit, brokenLink, recordHash, viewAudit } from '../../src/host/audit/log.js';
import {
  EPOCH_MS,
  EPOCH_RECORDS,
  endAuditEpoch,
  unopenedNames,
} from '../../src/host/audit/names.js';
import { auditShape } from '../../src/host/damage.js';
import { SCHEMA_VERSION, type AuditRecord, type VaultHeader } from '../../src/store/schema.js';
import { Store } from '../../src/store/lmdb/store.js';
import type { Tx } from '../../src/store/tx.js';

const T0 = Date.UTC(2026, 10, 1, 9, 0, 0);
const AD = slot('audit-names', 7);

test('an epoch seals names the owner’s audit key opens; another key pair opens none', () => {
  const owner = newKeyPair();
  const epoch = SealEpoch.start(owner.publicKey, T0);
  const blob = epoch.seal(Buffer.from('GitHub/password'), AD);
  assert.equal(epoch.publicKey.length, EPOCH_PUBLIC_KEY_BYTES);
  assert.equal(
    new EpochOpener(owner).open(epoch.publicKey, blob, AD)?.toString(),
    'GitHub/password',
  );
  assert.equal(new EpochOpener(newKeyPair()).open(epoch.publicKey, blob, AD), null);
  epoch.wipe();
});

test('a sealed name moved to another record, flipped, or under another epoch’s key does not open', () => {
  const owner = newKeyPair();
  const a = SealEpoch.start(owner.publicKey, T0);
  const b = SealEpoch.start(owner.publicKey, T0);
  const blob = a.seal(Buffer.from('Stripe'), AD);
  const opener = new EpochOpener(owner);
  assert.equal(opener.open(a.publicKey, blob, slot('audit-names', 8)), null, 'another record');
  const flipped = Buffer.from(blob);
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
  assert.equal(opener.open(a.publicKey, flipped, AD), null, 'a flipped bit');
  assert.equal(opener.open(b.publicKey, blob, AD), null, 'another epoch');
  assert.equal(opener.open(a.publicKey.subarray(1), blob, AD), null, 'a short key');
  // A low-order point makes an all-zero shared secret: nothing, not a throw.
  assert.equal(opener.open(Buffer.alloc(EPOCH_PUBLIC_KEY_BYTES), blob, AD), null);
  assert.equal(opener.open(a.publicKey, blob, AD)?.toString(), 'Stripe', 'the control');
  a.wipe();
  b.wipe();
});

test('each seal of an epoch has a nonce of its own; each epoch a key of its own', () => {
  const owner = newKeyPair();
  const epoch = SealEpoch.start(owner.publicKey, T0);
  const nonces = new Set<string>();
  for (let i = 0; i < 300; i++) {
    nonces.add(epoch.seal(Buffer.from('same'), AD).subarray(0, 24).toString('hex'));
  }
  assert.equal(nonces.size, 300);
  assert.equal(epoch.sealed, 300);
  const other = SealEpoch.start(owner.publicKey, T0);
  const ka = deriveEpochKey(owner, epoch.publicKey);
  const kb = deriveEpochKey(owner, other.publicKey);
  assert.ok(ka !== null && kb !== null && !ka.equals(kb));
  assert.ok(!epoch.publicKey.equals(other.publicKey));
  epoch.wipe();
  other.wipe();
});

test('an ended epoch seals nothing more', () => {
  const epoch = SealEpoch.start(newKeyPair().publicKey, T0);
  epoch.wipe();
  assert.equal(epoch.wiped, true);
  assert.throws(() => epoch.seal(Buffer.from('x'), AD));
});

// ---------------------------------------------------------------------------
// A real store.

let dir = '';
let store: Store;
let keys: KeyPair;
let header: VaultHeader;

function makeHeader(pair: KeyPair): VaultHeader {
  return {
    schema: SCHEMA_VERSION,
    vaultId: randomBytes(16),
    kdf: newKdfParams(),
    rootByOwner: randomBytes(72),
    rootByRecovery: randomBytes(72),
    indexKey: randomBytes(72),
    auditPublicKey: pair.publicKey,
    auditSecretKey: randomBytes(72),
    tiers: {},
    created: T0,
  };
}

function event(i: number, named = true): AuditEvent {
  return {
    at: T0 + i,
    action: named ? 'fill' : 'agent_add',
    actor: named ? 'cli:bot' : 'owner',
    source: `pid:${1000 + i}`,
    outcome: 'ok',
    entryId: named ? `e${i % 3}` : null,
    entry: named ? `Entry ${i % 3}` : null,
    field: named ? 'token' : null,
    host: named ? 'api.example.com' : null,
    subject: named ? null : 'bot',
  };
}

/** How the build before audit epochs appended a record: a box sealed to the owner per record. */
function appendOldForm(tx: Tx, h: VaultHeader, e: AuditEvent): AuditRecord {
  const head = tx.auditHead();
  const named = !(e.entry === null && e.field === null && e.entryId === null);
  const base = {
    seq: (head?.seq ?? 0) + 1,
    at: e.at,
    action: e.action,
    actor: e.actor,
    source: e.source,
    outcome: e.outcome,
    entryId: null,
    sealed: named
      ? sealTo(
          h.auditPublicKey,
          Buffer.from(JSON.stringify({ entry: e.entry, field: e.field, entryId: e.entryId })),
        )
      : null,
    host: e.host,
    subject: e.subject,
    prev: head?.hash ?? Buffer.alloc(32),
  };
  const r: AuditRecord = { ...base, hash: recordHash(base) };
  tx.appendAudit(r);
  return r;
}

let records: AuditRecord[] = [];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'vault-audit-seal-'));
  store = Store.open(dir);
  keys = newKeyPair();
  header = makeHeader(keys);
  store.write((tx) => tx.putHeader(header));
  endAuditEpoch();
  // Old form, then epochs, then old form again (an older host on the same vault), then epochs.
  store.write((tx) => {
    for (let i = 0; i < 4; i++) appendOldForm(tx, header, event(i, i !== 2));
  });
  store.write((tx) => {
    for (let i = 4; i < 8; i++) appendAudit(tx, header, event(i, i !== 6));
  });
  store.write((tx) => appendOldForm(tx, header, event(8)));
  endAuditEpoch();
  store.write((tx) => {
    for (let i = 9; i < 12; i++) appendAudit(tx, header, event(i));
  });
  records = store.read((tx) => tx.audit());
});

after(async () => {
  endAuditEpoch();
  await store.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const view = (rs: readonly AuditRecord[]) => viewAudit(rs, keys);
const headHash = () => store.read((tx) => tx.auditHead()?.hash ?? null);

test('a log that mixes old-form and epoch records reads, verifies and checks', () => {
  assert.equal(records.length, 12);
  const forms = records.map((r) =>
    r.sealed === null ? '-' : r.epoch === undefined ? 'box' : 'epoch',
  );
  assert.deepEqual(forms, [
    'box',
    'box',
    '-',
    'box',
    'epoch',
    'epoch',
    '-',
    'epoch',
    'box',
    'epoch',
    'epoch',
    'epoch',
  ]);
  // A record without names carries no epoch.
  assert.ok(records.filter((r) => r.sealed === null).every((r) => r.epoch === undefined));
  assert.ok(records.every(auditShape));
  assert.equal(brokenLink(records, headHash()), null);
  assert.deepEqual(unopenedNames(records, keys), []);
  view(records).forEach((v, i) => {
    const e = event(i, i !== 2 && i !== 6);
    assert.equal(v.entry, e.entry, `record ${i + 1}`);
    assert.equal(v.field, e.field);
    assert.equal(v.subject, e.subject);
  });
  // The old form opens as it always did.
  assert.ok(openSealed(keys, records[0]?.sealed ?? Buffer.alloc(0)) !== null);
  // Records of one epoch share its key; an ended epoch's successor has another.
  assert.ok(records[4]?.epoch?.equals(records[7]?.epoch ?? Buffer.alloc(0)));
  assert.ok(!records[7]?.epoch?.equals(records[9]?.epoch ?? Buffer.alloc(0)));
});

test('another key pair opens no name of either form', () => {
  assert.ok(viewAudit(records, newKeyPair()).every((v) => v.entry === null));
  assert.equal(unopenedNames(records, newKeyPair()).length, 10);
});

/** The records with record `i` changed and, when `rechain`, every hash after it made to fit again. */
function tampered(i: number, change: (r: AuditRecord) => AuditRecord, rechain: boolean) {
  const out: AuditRecord[] = [];
  for (const [j, r] of records.entries()) {
    let next = j === i ? change(r) : r;
    if (rechain && j >= i) {
      const prev = out[j - 1]?.hash ?? Buffer.alloc(32);
      const { hash: _h, ...rest } = { ...next, prev };
      void _h;
      next = { ...rest, hash: recordHash(rest) };
    }
    out.push(next);
  }
  return out;
}

test('a changed epoch key or sealed name breaks the chain; re-chained, its name no longer opens', () => {
  const other = SealEpoch.start(keys.publicKey, T0);
  const changes: [string, (r: AuditRecord) => AuditRecord][] = [
    ['epoch key replaced', (r) => ({ ...r, epoch: other.publicKey })],
    ['epoch key flipped', (r) => ({ ...r, epoch: flip(r.epoch ?? Buffer.alloc(32)) })],
    ['sealed name flipped', (r) => ({ ...r, sealed: flip(r.sealed ?? Buffer.alloc(1)) })],
    ['sealed name of another record', (r) => ({ ...r, sealed: records[9]?.sealed ?? null })],
    [
      'name sealed anew under another epoch',
      (r) => ({
        ...r,
        epoch: other.publicKey,
        sealed: other.seal(Buffer.from('{"entry":"x","field":"y"}'), slot('audit-names', 6)),
      }),
    ],
  ];
  for (const [what, change] of changes) {
    // Record 5 (index 4) is the first epoch record.
    assert.equal(brokenLink(tampered(4, change, false), headHash()), 5, what);
    const rechained = tampered(4, change, true);
    assert.equal(brokenLink(rechained, null), null, `${what}: re-chained`);
    // Record 5's own seal under another epoch is sealed for record 6's place: it fails too.
    assert.deepEqual(unopenedNames(rechained, keys), [5], what);
  }
  other.wipe();
});

test('removing the epoch key from a record, or adding one to an old record, changes its hash', () => {
  const stripped = tampered(
    4,
    (r) => {
      const { epoch: _e, ...rest } = r;
      void _e;
      return rest;
    },
    false,
  );
  assert.equal(brokenLink(stripped, headHash()), 5);
  const added = tampered(0, (r) => ({ ...r, epoch: records[4]?.epoch ?? Buffer.alloc(32) }), false);
  assert.equal(brokenLink(added, headHash()), 1);
});

test('a record with an epoch key but no sealed name, or an epoch that is not bytes, is misshapen', () => {
  assert.equal(auditShape({ ...records[4], sealed: null }), false);
  assert.equal(auditShape({ ...records[4], epoch: 'abc' }), false);
  assert.equal(auditShape(records[4]), true);
  assert.equal(auditShape(records[0]), true);
});

function flip(b: Buffer): Buffer {
  const c = Buffer.from(b);
  c[0] = (c[0] as number) ^ 0x80;
  return c;
}

test(`an epoch ends after ${EPOCH_RECORDS} records, after ${EPOCH_MS / 1000} s, when the audit key changes, and when ended`, () => {
  endAuditEpoch();
  const epochs = (rs: readonly AuditRecord[]) =>
    new Set(rs.map((r) => r.epoch?.toString('hex') ?? '')).size;
  const d = mkdtempSync(join(tmpdir(), 'vault-audit-epochs-'));
  const s = Store.open(d);
  try {
    s.write((tx) => tx.putHeader(header));
    s.write((tx) => {
      for (let i = 0; i < EPOCH_RECORDS + 1; i++) appendAudit(tx, header, event(0));
    });
    let rs = s.read((tx) => tx.audit());
    assert.equal(epochs(rs), 2, 'the record after the bound starts a new epoch');
    assert.ok(rs[EPOCH_RECORDS - 1]?.epoch?.equals(rs[0]?.epoch ?? Buffer.alloc(0)));
    const last = rs[EPOCH_RECORDS]?.epoch;
    // Time: just before the bound the same epoch, at it another. Its clock starts at `event(0).at`.
    s.write((tx) => appendAudit(tx, header, { ...event(0), at: T0 + EPOCH_MS - 1 }));
    s.write((tx) => appendAudit(tx, header, { ...event(0), at: T0 + EPOCH_MS }));
    rs = s.read((tx) => tx.audit());
    assert.ok(rs.at(-2)?.epoch?.equals(last ?? Buffer.alloc(0)));
    assert.ok(!rs.at(-1)?.epoch?.equals(last ?? Buffer.alloc(0)));
    // A clock that goes back ends it too.
    s.write((tx) => appendAudit(tx, header, { ...event(0), at: T0 }));
    // Another audit key (a vault restored or made anew under the host).
    const other = newKeyPair();
    const h2 = { ...header, auditPublicKey: other.publicKey };
    s.write((tx) => appendAudit(tx, h2, { ...event(0), at: T0 + 1 }));
    endAuditEpoch();
    s.write((tx) => appendAudit(tx, header, { ...event(0), at: T0 + 2 }));
    rs = s.read((tx) => tx.audit());
    assert.equal(epochs(rs.slice(-4)), 4);
    assert.deepEqual(unopenedNames(rs, keys), [rs.at(-2)?.seq], 'the other key’s record');
    assert.deepEqual(unopenedNames(rs.slice(-2, -1), other), []);
    assert.equal(brokenLink(rs, null), null);
  } finally {
    endAuditEpoch();
    void s.close();
    rmSync(d, { recursive: true, force: true });
  }
});
