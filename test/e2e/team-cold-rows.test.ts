// Team mode at scale (issue 37): a host does not hold the audit records and
// the records' checksums (most of a vault's rows), it reads them from the
// database when asked for. Two stores on one real PostgreSQL, as two hosts:
// what each reads is what the database holds, a transaction sees its own
// writes of those rows and loses them when it fails, and a read that meets
// rows committed after its copy's version runs again on a copy brought up
// to them (never the audit records of one version with the head of another).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PgStore } from '../../src/store/pg/pg.js';
import type { AuditRecord, EntryRecord } from '../../src/store/schema.js';
import { Postgres } from '../support/postgres.js';

let pg: Postgres;
const stores: PgStore[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const s of stores) await s.close();
  await pg?.stop();
});

function open(url: string): PgStore {
  const s = PgStore.open(url);
  stores.push(s);
  return s;
}

function record(seq: number): AuditRecord {
  return {
    seq,
    at: 1_700_000_000_000 + seq,
    action: 'read',
    actor: 'agent:test',
    source: 'test',
    outcome: 'ok',
    entryId: null,
    sealed: null,
    host: null,
    subject: null,
    prev: Buffer.alloc(32, seq - 1),
    hash: Buffer.alloc(32, seq),
  } as unknown as AuditRecord;
}

function entry(i: number): EntryRecord {
  return { id: `e${String(i).padStart(4, '0')}`, n: i } as unknown as EntryRecord;
}

/** How many rows the store's copy holds (the rows it does not hold left out). */
function held(s: PgStore): number {
  return s['mirror'].size;
}

test('audit records and checksums are read from the database when asked for, never held by the copy', () => {
  const url = pg.database().url;
  const a = open(url);
  a.create();
  a.write((tx) => {
    for (let i = 1; i <= 40; i++) tx.putEntry(entry(i));
    for (let seq = 1; seq <= 60; seq++) tx.appendAudit(record(seq));
  });

  // A second host, cold: its first load takes the entries, not the audit records or checksums.
  const b = open(url);
  const seqs = b.read((tx) => tx.audit().map((r) => r.seq));
  assert.deepEqual(
    seqs,
    Array.from({ length: 60 }, (_, i) => i + 1),
  );
  // 40 entries and the audit head: no `audit/` row, no `sum/` row.
  assert.equal(held(b), 41);
  assert.equal(
    b.read((tx) => tx.entries().length),
    40,
  );
  // A range with a limit, a single record, from the middle of the chain.
  assert.deepEqual(
    b.read((tx) => tx.audit(58).map((r) => r.seq)),
    [58, 59, 60],
  );
  // The checksums come too, for `vault check` (one per entry and one for the head).
  const raw = b.read((tx) => tx.rawRecords());
  assert.equal(raw.filter((r) => r.key.startsWith('entry/')).length, 40);
  assert.ok(raw.filter((r) => r.key.startsWith('entry/')).every((r) => r.sumOk === true));
  assert.equal(raw.filter((r) => r.key.startsWith('audit/')).length, 60);
  assert.ok(!raw.some((r) => r.error !== undefined));

  // A transaction sees its own writes of them before its commit; the other host after it.
  const inside = b.write((tx) => {
    tx.appendAudit(record(61));
    tx.putEntry(entry(41));
    return tx.audit(59).map((r) => r.seq);
  });
  assert.deepEqual(inside, [59, 60, 61]);
  assert.deepEqual(
    a.read((tx) => tx.audit(59).map((r) => r.seq)),
    [59, 60, 61],
  );
  assert.equal(held(b), 42);

  // A transaction that fails leaves nothing of them, on either host.
  assert.throws(
    () =>
      b.write((tx) => {
        tx.appendAudit(record(62));
        assert.deepEqual(
          tx.audit(61).map((r) => r.seq),
          [61, 62],
        );
        throw new Error('refused');
      }),
    /refused/,
  );
  assert.deepEqual(
    b.read((tx) => tx.audit(60).map((r) => r.seq)),
    [60, 61],
  );
  assert.deepEqual(
    a.read((tx) => tx.audit(60).map((r) => r.seq)),
    [60, 61],
  );

  // Archived (pruned) records are gone for both hosts.
  a.write((tx) => tx.pruneAudit({ seq: 50, hash: record(50).hash }));
  assert.deepEqual(
    b.read((tx) => tx.audit().map((r) => r.seq)),
    Array.from({ length: 11 }, (_, i) => i + 51),
  );
});

test('a read that meets audit records committed after its copy’s version runs again: head and records of one version', () => {
  const url = pg.database().url;
  const a = open(url);
  a.create();
  a.write((tx) => {
    for (let seq = 1; seq <= 5; seq++) tx.appendAudit(record(seq));
  });
  const b = open(url);
  b.read((tx) => tx.auditHead());
  let runs = 0;
  const seen = b.read((tx) => {
    runs++;
    const head = tx.auditHead()?.seq;
    // Another host commits between this read's refresh and its reading of the records.
    if (runs === 1) a.write((w) => w.appendAudit(record(6)));
    return { head, last: tx.audit().at(-1)?.seq };
  });
  assert.equal(runs, 2);
  assert.deepEqual(seen, { head: 6, last: 6 });
});
