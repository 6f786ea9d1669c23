// The audit chain in a real store: appended in write transactions, verified,
// tampered with, and read back by the owner's audit key only.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AuditEvent } from '../../src/core/audit.js';
import { newKeyPair, type KeyPair } from '../../src/crypto/box.js';
import { newKdfParams } from '../../src/crypto/kdf.js';
import { appendAudit, brokenLink, viewAudit } from '../../src/host/audit/log.js';
import {
  SCHEMA_VERSION,
  type AuditHead,
  type AuditRecord,
  type VaultHeader,
} from '../../src/store/schema.js';
import { Store } from '../../src/store/lmdb/store.js';

const T0 = Date.UTC(2025, 0, 1, 9, 0, 0);
/** Names that must never appear in the store file; random, so no other bytes match by chance. */
const tag = randomBytes(6).toString('hex');
const NAMES = [`Stripe Prod ${tag}`, `GitHub-${tag}`, `Payroll_${tag}`];
const FIELD = `field_${tag}`;
/** Stored in clear on purpose (the actor), so the byte scan is shown to see the file. */
const ACTOR = `cli:claude-${tag}`;

let dir = '';
let store: Store;
let keys: KeyPair;
let records: AuditRecord[] = [];
let head: AuditHead;
let events: AuditEvent[] = [];

function header(pair: KeyPair): VaultHeader {
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

function makeEvents(): AuditEvent[] {
  const out: AuditEvent[] = [];
  for (let i = 0; i < 10; i++) {
    const owner = i % 4 === 3;
    const name = NAMES[i % NAMES.length] as string;
    out.push({
      at: T0 + i * 1000,
      action: owner ? 'agent_scope' : i % 5 === 4 ? 'limited' : 'ai_read',
      actor: owner ? 'owner' : ACTOR,
      source: `pid:${4000 + i}`,
      outcome: i % 5 === 4 ? 'VLT-2042' : 'ok',
      entryId: owner ? null : `e${i % NAMES.length}`,
      entry: owner ? null : name,
      field: owner ? null : i % 2 === 0 ? 'password' : FIELD,
      host: null,
      subject: owner ? 'claude' : null,
    });
  }
  return out;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-audit-'));
  store = Store.open(dir);
  keys = newKeyPair();
  const h = header(keys);
  events = makeEvents();
  store.write((tx) => tx.putHeader(h));
  // Some events one per transaction, the rest together: both chain the same way.
  for (const e of events.slice(0, 5)) store.write((tx) => appendAudit(tx, h, e));
  store.write((tx) => {
    for (const e of events.slice(5)) appendAudit(tx, h, e);
  });
  records = store.read((tx) => tx.audit());
  const got = store.read((tx) => tx.auditHead());
  assert.ok(got !== null);
  head = got;
  await store.close();
});

after(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** A shallow copy of the records with record `i` replaced by `change(record)`. */
function withChange(i: number, change: (r: AuditRecord) => AuditRecord): AuditRecord[] {
  return records.map((r, j) => (j === i ? change(r) : r));
}

test('the appended records are numbered 1..10 and chained to the head', () => {
  assert.equal(records.length, 10);
  assert.deepEqual(
    records.map((r) => r.seq),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  assert.equal(head.seq, 10);
  assert.ok(Buffer.from(head.hash).equals(Buffer.from(records[9]?.hash ?? [])));
  for (let i = 1; i < records.length; i++) {
    assert.ok(Buffer.from(records[i]?.prev ?? []).equals(Buffer.from(records[i - 1]?.hash ?? [])));
  }
});

test('no record keeps an entry id in clear: it is sealed with the name', () => {
  assert.ok(records.some((r) => r.sealed !== null));
  for (const r of records) assert.equal(r.entryId, null);
});

test('an untouched chain verifies, with and without the head', () => {
  assert.equal(brokenLink(records, head.hash), null);
  assert.equal(brokenLink(records, null), null);
  assert.equal(brokenLink([], null), null);
});

test('a changed record is detected, whichever field changed', () => {
  const i = 4; // seq 5
  const changes: [string, (r: AuditRecord) => AuditRecord][] = [
    ['action', (r) => ({ ...r, action: 'read' })],
    ['outcome', (r) => ({ ...r, outcome: 'ok' })],
    ['actor', (r) => ({ ...r, actor: 'cli:someone-else' })],
    ['source', (r) => ({ ...r, source: 'pid:1' })],
    ['at', (r) => ({ ...r, at: r.at + 1 })],
    ['entryId', (r) => ({ ...r, entryId: 'e9' })],
    ['sealed', (r) => ({ ...r, sealed: records[0]?.sealed ?? null })],
    ['sealed null', (r) => ({ ...r, sealed: null })],
    ['host', (r) => ({ ...r, host: 'evil.example' })],
    ['subject', (r) => ({ ...r, subject: 'claude' })],
  ];
  for (const [what, change] of changes) {
    const tampered = withChange(i, change);
    assert.equal(brokenLink(tampered, head.hash), 5, what);
    assert.equal(brokenLink(tampered, null), 5, `${what} (no head)`);
  }
});

test('a single flipped bit in the sealed names is detected', () => {
  const tampered = withChange(0, (r) => {
    const sealed = Buffer.from(r.sealed ?? []);
    sealed[sealed.length - 1] = (sealed[sealed.length - 1] as number) ^ 1;
    return { ...r, sealed };
  });
  assert.equal(brokenLink(tampered, head.hash), 1);
});

test('a deleted record is detected (first, middle)', () => {
  assert.equal(brokenLink(records.slice(1), head.hash), 1);
  const middle = records.filter((_, j) => j !== 4);
  assert.equal(brokenLink(middle, head.hash), 5);
});

test('a deleted record is detected even when later sequence numbers are renumbered', () => {
  const renumbered = records.filter((_, j) => j !== 4).map((r, j) => ({ ...r, seq: j + 1 }));
  assert.notEqual(brokenLink(renumbered, head.hash), null);
});

test('two swapped records are detected', () => {
  const swapped = [...records];
  [swapped[3], swapped[4]] = [swapped[4] as AuditRecord, swapped[3] as AuditRecord];
  assert.equal(brokenLink(swapped, head.hash), 4);
  // Swapping their sequence numbers back does not help: the links break.
  const renumbered = swapped.map((r, j) => ({ ...r, seq: j + 1 }));
  assert.equal(brokenLink(renumbered, head.hash), 4);
});

test('truncation is detected by the head, and only by the head', () => {
  const cut = records.slice(0, -1);
  assert.equal(brokenLink(cut, head.hash), 10);
  assert.equal(brokenLink(cut, null), null, 'without the head a prefix is a valid chain');
  assert.equal(brokenLink(records.slice(0, 3), head.hash), 4);
});

test('viewAudit opens the sealed names with the owner audit key', () => {
  const view = viewAudit(records, keys);
  assert.equal(view.length, events.length);
  view.forEach((v, i) => {
    const e = events[i] as AuditEvent;
    assert.equal(v.seq, i + 1);
    assert.equal(v.at, e.at);
    assert.equal(v.action, e.action);
    assert.equal(v.actor, e.actor);
    assert.equal(v.source, e.source);
    assert.equal(v.outcome, e.outcome);
    assert.equal(v.entry, e.entry);
    assert.equal(v.field, e.field);
    assert.equal(v.subject, e.subject);
  });
  assert.ok(view.some((v) => v.entry === NAMES[0]));
});

test('another key pair opens no name', () => {
  const view = viewAudit(records, newKeyPair());
  assert.ok(view.every((v) => v.entry === null && v.field === null));
  assert.equal(view[0]?.actor, ACTOR);
});

test('the raw store file holds no entry name and no field name', () => {
  const bytes = readFileSync(store.path);
  // The control: the actor is stored in clear, so a name in clear would be seen too.
  assert.ok(bytes.includes(Buffer.from(ACTOR, 'utf8')), 'the scan sees the records');
  for (const name of [...NAMES, FIELD]) {
    assert.ok(!bytes.includes(Buffer.from(name, 'utf8')), `${name} in the store file`);
    assert.ok(!bytes.includes(Buffer.from(name, 'utf16le')), `${name} (utf16) in the store file`);
  }
});
