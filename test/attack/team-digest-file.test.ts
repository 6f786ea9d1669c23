// A team host's file of digest shares (src/store/pg/digest-chunks.ts) with
// real hosts on a real PostgreSQL: a host started again serves from it; the
// file holds hashes and shares only (no value, token or key); a row whose
// bytes an attacker changed in the database between two starts is refused
// exactly as without the file, and the refused start writes no file; a file
// replaced by anyone without the state key is ignored, and written anew.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { digestChunksKey } from '../../src/crypto/kdf.js';
import { parseToken } from '../../src/crypto/token.js';
import { DIGEST_CHUNKS_FILE, readShares } from '../../src/store/pg/digest-chunks.js';
import { decodeRecord, encodeRecord } from '../../src/store/pg/mirror.js';
import { assertRefused, disposeAll, hex } from '../support/e2e-helpers.js';
import { Postgres } from '../support/postgres.js';
import { ok, Rig } from '../support/rig.js';

let pg: Postgres;
const rigs: Rig[] = [];

before(async () => {
  pg = await Postgres.start();
});

after(async () => {
  for (const rig of rigs) await disposeAll(rig);
  await pg?.stop();
});

/** A team vault with a sentinel value and an agent; its host stopped, then started again by the agent. */
async function team(): Promise<{ rig: Rig; db: string; token: string; value: string }> {
  const db = pg.database();
  const rig = new Rig();
  rigs.push(rig);
  ok(await rig.owner(['vault', 'create', '--store', db.url]));
  const value = `SENTINEL-${hex(12)}`;
  await rig.set('db', value);
  for (let i = 0; i < 20; i++) await rig.set(`e${i}`, `other-${i}`);
  const token = await rig.addAgent('ci', ['db']);
  return { rig, db: db.name, token, value };
}

/** A cold start: the host stopped, an agent's `get` starts one, which loads the vault. */
async function coldGet(rig: Rig, token: string) {
  await rig.stop();
  return rig.agent(['get', 'db'], token);
}

test('a host started twice serves from its file, which holds no value, token or key', async () => {
  const { rig, token, value } = await team();
  const path = join(rig.vaultDir, DIGEST_CHUNKS_FILE);
  assert.equal(ok(await coldGet(rig, token)), `${value}\n`);
  assert.ok(existsSync(path), 'no file after a sound start');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const first = readFileSync(path);
  assert.equal(ok(await coldGet(rig, token)), `${value}\n`, 'the start from the file');
  // Written again (the get between changed the agent's rate record, so its chunk).
  assert.ok(readShares(rig.vaultDir, readFileSync(join(rig.vaultDir, 'state.key'))).size > 0);
  // What a reader of the file learns: chunks' hashes and shares, nothing of the vault's secrets.
  const stateKey = readFileSync(join(rig.vaultDir, 'state.key'));
  const macKey = digestChunksKey(stateKey);
  const secret = parseToken(token)?.secret as Buffer;
  for (const [name, bytes] of [
    ['the value', Buffer.from(value)],
    ['the value, hex', Buffer.from(Buffer.from(value).toString('hex'))],
    ['the token', Buffer.from(token)],
    ['the token’s secret', secret],
    ['the state key', stateKey],
    ['the file’s MAC key', Buffer.from(macKey)],
  ] as const) {
    assert.equal(first.indexOf(bytes), -1, `the file holds ${name}`);
  }
  // Its whole shape: a name, a count, 64 bytes a chunk (hash, share), its MAC.
  const magic = first.indexOf(0x0a) + 1;
  assert.equal(first.subarray(0, magic).toString(), 'vault-cli digest chunks row-v1\n');
  assert.equal(first.length, magic + 4 + 64 * first.readUInt32BE(magic) + 32);
});

test('an entry’s bytes changed in the database between two starts: refused as without the file, no file written', async () => {
  const { rig, db, token, value } = await team();
  assert.equal(ok(await coldGet(rig, token)), `${value}\n`);
  const path = join(rig.vaultDir, DIGEST_CHUNKS_FILE);
  const sound = readFileSync(path);
  await rig.stop();
  // The attacker's SQL: an entry's record changed, its checksum row left (no key to fix the digest).
  const key = pg.psql(db, "SELECT key FROM vault_rows WHERE key LIKE 'entry/%' LIMIT 1").trim();
  const raw = pg.psql(db, `SELECT encode(value, 'hex') FROM vault_rows WHERE key = '${key}'`);
  const changed = { ...(decodeRecord(Buffer.from(raw.trim(), 'hex')) as object), tampered: 1 };
  pg.psql(
    db,
    `UPDATE vault_rows SET value = decode('${encodeRecord(changed).toString('hex')}', 'hex'),
       version = (SELECT version FROM vault_meta) + 1 WHERE key = '${key}';
     UPDATE vault_meta SET version = version + 1;`,
  );
  assertRefused(await rig.agent(['get', 'db'], token), 'VLT-3045', 'a changed entry');
  assertRefused(await coldGet(rig, token), 'VLT-3045', 'the start after');
  assert.deepEqual(readFileSync(path), sound, 'a file written after a mismatch');
});

test('a file replaced without the state key is ignored, and written anew by the next sound start', async () => {
  const { rig, token, value } = await team();
  assert.equal(ok(await coldGet(rig, token)), `${value}\n`);
  const path = join(rig.vaultDir, DIGEST_CHUNKS_FILE);
  const stateKey = readFileSync(join(rig.vaultDir, 'state.key'));
  const sound = readFileSync(path);
  const forged = Buffer.from(sound);
  // Every share claimed anew (the MAC left): a file that would move the digest anywhere.
  for (let at = sound.indexOf(0x0a) + 1 + 4 + 32; at + 32 <= forged.length - 32; at += 64) {
    randomBytes(32).copy(forged, at);
  }
  writeFileSync(path, forged);
  assert.equal(readShares(rig.vaultDir, stateKey).size, 0);
  assert.equal(ok(await coldGet(rig, token)), `${value}\n`, 'a forged file refused the vault');
  assert.notDeepEqual(readFileSync(path), forged, 'the forged file kept');
  assert.ok(readShares(rig.vaultDir, stateKey).size > 0);
});
