// A team host's file of digest shares (src/store/pg/digest-chunks.ts, issue
// 37): a host started again on a vault takes the sealed digest's shares of
// the chunks it met before from its file, and reaches the same digest; a
// row changed in the database since changes its chunk's hash, so its MACs
// are computed and the change is refused as without the file; a file not
// MACed under the state key's derived key is not trusted, whatever it maps.
// Stores on a real PostgreSQL, opened as a host opens them (its directory,
// its state key), started one after the other.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { keyedHash } from '../../src/crypto/hash.js';
import {
  DIGEST_CHUNKS_FILE,
  pageShare,
  readShares,
  writeShares,
} from '../../src/store/pg/digest-chunks.js';
import { encodeRecord, packRows } from '../../src/store/pg/mirror.js';
import { PgStore } from '../../src/store/pg/pg.js';
import type { EntryRecord } from '../../src/store/schema.js';
import { Postgres } from '../support/postgres.js';

let pg: Postgres;
const dirs: string[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  await pg?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Enough entries for several pages of the first load and a few dozen chunks. */
const ENTRIES = 12_000;

function entry(i: number): EntryRecord {
  return { id: `e${String(i).padStart(6, '0')}`, n: i } as unknown as EntryRecord;
}

/** A sealed vault in a new database, and a host directory for it (the vault's state key). */
async function vault(): Promise<{ url: string; db: string; dir: string; key: Buffer }> {
  const db = pg.database();
  const dir = mkdtempSync(join(tmpdir(), 'vault-team-chunks-'));
  dirs.push(dir);
  const key = randomBytes(32);
  const s = PgStore.open(db.url);
  s.create();
  s.write((tx) => {
    for (let i = 0; i < ENTRIES; i++) tx.putEntry(entry(i));
  });
  s.sealWith(key);
  s.write((tx) => tx.sealAll(key));
  await s.close();
  return { url: db.url, db: db.name, dir, key };
}

/**
 * A host's start: the store opened in its directory with the state key, its
 * first sealed check run (as access-records.ts runs it). What it took from
 * the file, or the refusal.
 */
async function start(
  url: string,
  dir: string,
  key: Buffer,
): Promise<{ reused: number; computed: number; error?: { code?: string } }> {
  const s = PgStore.open(url, dir);
  s.sealWith(key);
  try {
    s.read((tx) => tx.assertSealed());
    return { ...s.digestChunks };
  } catch (err) {
    return { ...s.digestChunks, error: err as { code?: string } };
  } finally {
    await s.close();
  }
}

/** The rows a first load reads, in its order (the table's: one plain scan), packed. */
function loadRows(db: string): Buffer {
  const out = pg.psql(
    db,
    `SELECT key || ' ' || encode(value, 'hex') FROM vault_rows WHERE value IS NOT NULL
       AND key NOT LIKE 'audit/%' AND key NOT LIKE 'sum/%'`,
  );
  const rows = out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [k, v] = l.split(' ') as [string, string];
      return { key: k, value: Buffer.from(v, 'hex') };
    });
  return packRows(rows);
}

/** An entry's bytes changed in the database, its checksum row untouched (no key to fix the digest). */
function tamper(db: string): void {
  const forged = encodeRecord({ ...entry(7), n: 1_000_007 }).toString('hex');
  pg.psql(
    db,
    `UPDATE vault_rows SET value = decode('${forged}', 'hex'),
       version = (SELECT version FROM vault_meta) + 1 WHERE key = 'entry/${entry(7).id}';
     UPDATE vault_meta SET version = version + 1;`,
  );
}

test('a host started again takes its chunks’ shares from its file and reaches the same digest', async () => {
  const { url, dir, key } = await vault();
  const first = await start(url, dir, key);
  assert.equal(first.error, undefined);
  assert.equal(first.reused, 0, 'no file yet');
  assert.ok(first.computed > 5, `${first.computed} chunks`);
  const again = await start(url, dir, key);
  assert.equal(again.error, undefined, 'the sealed check passed on shares from the file');
  assert.equal(again.reused, first.computed, 'every chunk from the file');
  assert.equal(again.computed, 0);
  // A host without the file (another machine's), and one whose file is of another key.
  const other = mkdtempSync(join(tmpdir(), 'vault-team-chunks-'));
  dirs.push(other);
  assert.deepEqual(await start(url, other, key), first);
  assert.equal((await start(url, dir, randomBytes(32))).reused, 0, 'another key: no share taken');
});

test('a row changed in the database between two starts is refused, though the file holds its chunk’s old share', async () => {
  const { url, db, dir, key } = await vault();
  const first = await start(url, dir, key);
  assert.equal(first.error, undefined);
  const file = readFileSync(join(dir, DIGEST_CHUNKS_FILE));
  tamper(db);
  const after = await start(url, dir, key);
  assert.equal(after.error?.code, 'VLT-3045', 'the changed row was taken');
  // The rest came from the file; the changed row's chunk (and the one it moved into) did not.
  assert.ok(after.reused >= first.computed - 2, `${after.reused} of ${first.computed} reused`);
  assert.ok(after.computed >= 1 && after.computed <= 3, `${after.computed} computed`);
  // No file is written after a mismatch: it is the one the sound start wrote.
  assert.deepEqual(readFileSync(join(dir, DIGEST_CHUNKS_FILE)), file);
  // And at the start after: the file learned nothing from the refused one.
  assert.equal((await start(url, dir, key)).error?.code, 'VLT-3045');
});

test('a forged file is not trusted: a chunk tampered with is still caught', async () => {
  const { url, db, dir, key } = await vault();
  assert.equal((await start(url, dir, key)).error, undefined);
  const path = join(dir, DIGEST_CHUNKS_FILE);
  const genuine = readFileSync(path);
  const old = pageShare(loadRows(db), key, null);
  tamper(db);
  const now = pageShare(loadRows(db), key, null);
  // The forger's entries: each new chunk's hash mapped so that the XOR of the
  // shares is the sealed digest again (the old shares of the chunks that are gone).
  const hashes = (c: Buffer) =>
    Array.from({ length: c.length / 64 }, (_, i) => c.toString('hex', 64 * i, 64 * i + 32));
  const oldHashes = hashes(old.chunks);
  const newHashes = hashes(now.chunks);
  const goneShare = Buffer.alloc(32);
  oldHashes.forEach((h, i) => {
    if (newHashes.includes(h)) return;
    for (let j = 0; j < 32; j++) {
      goneShare[j] = (goneShare[j] as number) ^ (old.chunks[64 * i + 32 + j] as number);
    }
  });
  const fresh = newHashes.filter((h) => !oldHashes.includes(h));
  assert.ok(fresh.length >= 1 && fresh.length <= 2, `${fresh.length} chunks changed`);
  const forged = Buffer.concat(
    fresh.map((h, i) =>
      Buffer.concat([Buffer.from(h, 'hex'), i === 0 ? goneShare : Buffer.alloc(32)]),
    ),
  );
  // Those entries in the genuine file's body, with (a) its MAC as it was,
  // (b) a MAC under the state key itself, (c) under a key of the forger's.
  const magic = genuine.subarray(0, genuine.indexOf(0x0a) + 1);
  const entries = genuine.subarray(magic.length + 4, genuine.length - 32);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length / 64 + forged.length / 64);
  const body = Buffer.concat([magic, count, entries, forged]);
  for (const [name, mac] of [
    ['its old MAC', genuine.subarray(genuine.length - 32)],
    ['a MAC under the state key', keyedHash(key, 'digest-chunks-v1', body)],
    ['a MAC under another key', keyedHash(randomBytes(32), 'digest-chunks-v1', body)],
  ] as const) {
    writeFileSync(path, Buffer.concat([body, mac]));
    assert.equal(readShares(dir, key).size, 0, name);
    const got = await start(url, dir, key);
    assert.equal(got.error?.code, 'VLT-3045', `the tamper passed with a file of ${name}`);
    assert.equal(got.reused, 0, name);
  }
  // The same entries under the file's own key (only a holder of the state key
  // can make it: whoever has state.key is the host) are taken, which is what
  // makes the refusals above the MAC's doing, not a forgery that missed.
  writeShares(dir, key, [entries, forged]);
  const blessed = await start(url, dir, key);
  assert.equal(blessed.error, undefined, 'a forgery under the right key did not even match');
  assert.equal(blessed.computed, 0);
});
