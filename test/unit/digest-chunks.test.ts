// A team host's file of digest shares (src/store/pg/digest-chunks.ts): rows
// are cut into chunks by content (a chunk ends after a row whose key hashes
// to an edge), so a row inserted, removed or moved changes only the chunks
// around it, and every other chunk's SHA-256, and so its record in the
// file, stays as it was; a page's share, whoever takes it and whatever the
// file holds, is the share its rows' MACs make.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DIGEST_CHUNKS_FILE,
  edgeAfterBytes,
  edgeAfterKey,
  EDGE,
  pageShare,
  readShares,
  sharesOf,
  writeShares,
} from '../../src/store/pg/digest-chunks.js';
import { encodeRecord, packRows, pageDigest } from '../../src/store/pg/mirror.js';

type Row = { key: string; value: Buffer };

const row = (key: string, n: number): Row => ({ key, value: encodeRecord({ id: key, n }) });

/** Each chunk's SHA-256 (hex) of `rows` packed as one page. */
function chunks(rows: readonly Row[], key: Buffer): string[] {
  const c = pageShare(packRows(rows), key, null).chunks;
  const out: string[] = [];
  for (let at = 0; at < c.length; at += 64) out.push(c.toString('hex', at, at + 32));
  return out;
}

/** How many of `a` are not in `b`. */
function gone(a: readonly string[], b: readonly string[]): number {
  const has = new Set(b);
  return a.filter((h) => !has.has(h)).length;
}

const hex = fc.nat().map((n) => n.toString(16));
const keyArb = fc.oneof(
  hex.map((h) => `entry/${h}`),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => `name/${s}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).map((s) => `field/${s}`),
);

test('the edge of a key is the same from its string (the worker) and from its bytes (a packed page)', () => {
  fc.assert(
    fc.property(keyArb, (k) => {
      const b = Buffer.from(k, 'utf8');
      assert.equal(edgeAfterKey(k), edgeAfterBytes(b, 0, b.length));
    }),
    { numRuns: 2000 },
  );
  // About one key in EDGE ends a chunk.
  let edges = 0;
  for (let i = 0; i < 200 * EDGE; i++) if (edgeAfterKey(`entry/${i.toString(16)}`)) edges++;
  assert.ok(edges > 150 && edges < 250, `${edges} edges in ${200 * EDGE} keys`);
});

test('a row inserted, removed or moved changes the chunks around it only (property)', () => {
  const key = randomBytes(32);
  // Rows enough for a few dozen chunks, under keys outside the sealed set
  // (seal.ts sealedKey): only their hashes are taken, which is all this is about.
  const base = Array.from({ length: 30 * EDGE }, (_, i) =>
    row(`audit-t/${(i * 7919).toString(16)}`, i),
  );
  const before = chunks(base, key);
  assert.ok(before.length > 15, `${before.length} chunks`);
  fc.assert(
    fc.property(fc.nat(base.length - 1), fc.nat(base.length - 1), hex, (at, to, name) => {
      // Inserted: the chunk it lands in changes (split in two if the new row is an edge).
      const inserted = [...base.slice(0, at), row(`audit-t/new-${name}`, -1), ...base.slice(at)];
      const ins = chunks(inserted, key);
      assert.ok(gone(before, ins) <= 1, 'an insertion changed more than its chunk');
      assert.ok(gone(ins, before) <= 2);
      // Removed: its chunk changes, merged with the next if it was an edge.
      const removed = base.filter((_, i) => i !== at);
      assert.ok(gone(before, chunks(removed, key)) <= 2, 'a removal changed more');
      // Moved (an update moves a row in the table's order): its chunk, and the chunk it joins.
      const moved = [...removed.slice(0, to), base[at] as Row, ...removed.slice(to)];
      assert.ok(gone(before, chunks(moved, key)) <= 3, 'a move changed more');
    }),
    { numRuns: 40 },
  );
});

test('a page’s share is its rows’ MACs, with the file’s shares or without, however the pages fall', () => {
  const key = randomBytes(32);
  const rows = Array.from({ length: 6 * EDGE }, (_, i) =>
    row(i % 5 === 0 ? `settled` + i : `entry/${(i * 31).toString(16)}`, i),
  );
  const whole = pageDigest(key, rows);
  assert.notDeepEqual(whole, Buffer.alloc(32));
  const first = pageShare(packRows(rows), key, null);
  assert.deepEqual(first.share, whole);
  assert.equal(first.reused, 0);
  // The worker's way, from its rows as objects: the same chunks, the same shares.
  assert.deepEqual(pageShare(packRows(rows), key, null, rows), first);
  // Every chunk known: nothing computed, the same share.
  const known = sharesOf(first.chunks);
  const again = pageShare(packRows(rows), key, known);
  assert.deepEqual(again.share, whole);
  assert.equal(again.computed, 0);
  assert.equal(again.reused, first.computed);
  // Pages cut anywhere (a page's end ends a chunk): the XOR of their shares is the digest.
  fc.assert(
    fc.property(fc.uniqueArray(fc.nat(rows.length), { maxLength: 8 }), (cuts) => {
      const ends = [...cuts.sort((a, b) => a - b), rows.length];
      const d = Buffer.alloc(32);
      let from = 0;
      for (const end of ends) {
        const s = pageShare(packRows(rows.slice(from, end)), key, known).share;
        for (let i = 0; i < 32; i++) d[i] = (d[i] as number) ^ (s[i] as number);
        from = end;
      }
      assert.deepEqual(d, whole);
    }),
    { numRuns: 30 },
  );
});

test('the file: read back under its key, 0600; not under another key, nor altered, nor cut short', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vault-digest-chunks-'));
  try {
    const key = randomBytes(32);
    const rows = Array.from({ length: 3 * EDGE }, (_, i) => row(`entry/${i}`, i));
    const page = pageShare(packRows(rows), key, null);
    assert.equal(readShares(dir, key).size, 0, 'no file: nothing known');
    writeShares(dir, key, [page.chunks]);
    const path = join(dir, DIGEST_CHUNKS_FILE);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const back = readShares(dir, key);
    assert.equal(back.size, page.computed);
    assert.deepEqual(pageShare(packRows(rows), key, back).share, page.share);
    assert.equal(readShares(dir, randomBytes(32)).size, 0, 'another key');
    const raw = readFileSync(path);
    for (const at of [0, 40, raw.length - 40, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at] = (bad[at] as number) ^ 1;
      writeFileSync(path, bad);
      assert.equal(readShares(dir, key).size, 0, `byte ${at} changed`);
    }
    writeFileSync(path, raw.subarray(0, raw.length - 64));
    assert.equal(readShares(dir, key).size, 0, 'cut short');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
