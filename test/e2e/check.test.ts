// `vault check` as the owner meets it: a sound vault passes; a record changed
// outside vault-cli is named with its damage code, one line each, exit 74; a
// store whose first page is damaged (which crashes whatever opens it) gives
// VLT-3034 from every command instead of a dead host, and check says so.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
// The write probe's own test builds a plain LMDB file, not a vault.
// eslint-disable-next-line no-restricted-imports
import { open } from 'lmdb';
import { scanInChild } from '../../src/store/lmdb/scan.js';
import { knownGoodPath } from '../../src/store/lmdb/known-good.js';
import { assertRefused, disposeAll, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Rig } from '../support/rig.js';
import {
  PAGE,
  editBytes,
  editRecords,
  flipBit,
  isLeaf,
  newerMeta,
  storeFile,
} from '../support/store-damage.js';

/**
 * Stops the host and waits until it is gone: the damage below is done to a
 * store closed cleanly, whose close the next start would trust if the file
 * were unchanged (src/store/lmdb/known-good.ts): it must scan it in full.
 */
async function stopClean(rig: Rig): Promise<void> {
  const pid = await hostPid(rig);
  await rig.stop();
  assert.ok(await waitGone(pid), 'the host did not stop');
  assert.ok(existsSync(knownGoodPath(storeFile(rig.vaultDir))), 'no clean close remembered');
}

describe('vault check', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('a sound vault passes; a changed timestamp and a removed audit record are each named', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-value');
    await rig.set('Bank', 'bank-value');
    await rig.addAgent('bot', ['Mail']);
    const sound = await rig.owner(['vault', 'check']);
    assert.equal(sound.code, 0, sound.stderr);
    assert.match(
      sound.stdout,
      /^vault check: no damage found \([0-9]+ records, 2 entries, 1 agents, [0-9]+ audit records\)\n$/,
    );
    await stopClean(rig);

    const entryId = await editRecords(rig.vaultDir, (db) => {
      const [key] = [...db.getKeys({ start: 'entry/', end: 'entry0' })];
      assert.ok(typeof key === 'string');
      const e = db.get(key) as Record<string, unknown>;
      // The "version 0, 1970" of the issue: a timestamp no seal covers.
      db.putSync(key, { ...e, updated: 0 });
      db.removeSync('audit/000000000002');
      return key.slice('entry/'.length);
    });
    const r = await rig.owner(['vault', 'check']);
    assert.equal(r.code, 74);
    const lines = r.stderr.trim().split('\n');
    assert.ok(
      lines.includes(
        `vault-cli: VLT-3035: entry ${entryId}: The record does not match its checksum (damaged).`,
      ),
      r.stderr,
    );
    assert.ok(
      lines.some((l) => /^vault-cli: VLT-3033: audit 2: /.test(l)),
      r.stderr,
    );
    // The changed record is also no longer the one the vault sealed (issue 36, store/seal.ts).
    assert.ok(
      lines.some((l) => /^vault-cli: VLT-3045: state: rollback detected/.test(l)),
      r.stderr,
    );
    for (const l of lines) assert.match(l, /^vault-cli: VLT-30[234][0-9]: [^:]+: .+$/);
    assert.match(r.stdout, /^vault check: [0-9]+ problem\(s\)/);
    const asJson = await rig.owner(['vault', 'check', '--json']);
    assert.equal(asJson.code, 74);
    const json = JSON.parse(asJson.stdout) as {
      problems: { code: string; where: string }[];
    };
    assert.ok(json.problems.some((p) => p.code === 'VLT-3035' && p.where === `entry ${entryId}`));
  });

  test('a store whose first page is damaged: VLT-3034 from every command, and from check, not a crash', async () => {
    await stopClean(rig);
    // mm_address of the first meta page: opening the store crashes LMDB's reader.
    editBytes(rig.vaultDir, (bytes) => flipBit(bytes, 29, 1));
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    const r = await rig.owner(['vault', 'check']);
    assert.equal(r.code, 74);
    assert.match(
      r.stderr,
      /^vault-cli: VLT-3034: store: The store file cannot be read whole: reading it crashed \(SIG[A-Z]+\)\.\n$/,
    );
    // The host is still there to answer.
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
  });
});

describe('a store that reads but crashes a write', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('every leaf page claims a later transaction: VLT-3034 from owner and agent, check names the write, the host lives', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-value');
    const token = await rig.addAgent('bot', ['Mail']);
    await stopClean(rig);
    // Bytes 8-15 of a page are the transaction that wrote it. A leaf "from the
    // future" reads fine, but LMDB's writer takes it for a page of its own
    // transaction and writes into the map in place: SIGSEGV. The host's start
    // must find that before a request writes.
    let leaves = 0;
    editBytes(rig.vaultDir, (bytes) => {
      for (let page = 2; page * PAGE < bytes.length; page++) {
        if (!isLeaf(bytes, page)) continue;
        flipBit(bytes, page * PAGE + 11, 0);
        leaves++;
      }
    });
    assert.ok(leaves > 0);
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    assertRefused(await rig.agent(['get', 'Mail'], token), 'VLT-3034');
    const r = await rig.owner(['vault', 'check']);
    assert.equal(r.code, 74);
    assert.match(
      r.stderr,
      /^vault-cli: VLT-3034: store: The store file cannot be read whole: writing into it crashed \(SIG[A-Z]+\)\.\n$/,
    );
    // The same host answers again; the probe left no copy of the store beside it.
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    assert.deepEqual(
      readdirSync(rig.vaultDir).filter((n) => n.startsWith('.check-')),
      [],
    );
  });
});

describe('a store whose free-page list names a page past its end', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('the host refuses with VLT-3034 at start instead of meeting it in a write; check names the write', async () => {
    await rig.create();
    // Owner writes free pages: the free-page list has records.
    for (let i = 0; i < 6; i++) await rig.set('Mail', `mail-value-${i}`);
    await stopClean(rig);
    editBytes(rig.vaultDir, (bytes) => {
      // The free-page tree's root (88) in the newer meta page: a leaf whose
      // first record is a list of page numbers (count, then the pages). A page
      // past the end goes in.
      const root = Number(bytes.readBigUInt64LE(newerMeta(bytes) + 88));
      assert.ok(isLeaf(bytes, root), 'the free-page root is a leaf');
      const page = root * PAGE;
      const node = page + 24 + bytes.readUInt16LE(page + 24);
      const data = node + 8 + bytes.readUInt16LE(node + 6);
      assert.ok(bytes.readBigUInt64LE(data) > 0n, 'the record lists pages');
      bytes.writeBigUInt64LE(BigInt(bytes.length / PAGE + 500), data + 8);
    });
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    const r = await rig.owner(['vault', 'check']);
    assert.equal(r.code, 74);
    assert.match(
      r.stderr,
      // Where LMDB meets the bad entry (reading the list's stats or taking its pages) varies with the layout.
      /^vault-cli: VLT-3034: store: The store file cannot be read whole: (reading|writing into) it (failed|crashed) \(.+\)\.\n$/,
    );
  });
});

describe('a store whose meta page puts its last page past the end of the file', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('refused with VLT-3034 before any write is sent gigabytes out', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-value');
    await stopClean(rig);
    // The newer meta page's last page number (at 144): 2^23 pages is 32 GiB out.
    editBytes(rig.vaultDir, (bytes) => {
      const meta = newerMeta(bytes);
      bytes.writeBigUInt64LE(bytes.readBigUInt64LE(meta + 144) | (1n << 23n), meta + 144);
    });
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3034');
    const r = await rig.owner(['vault', 'check']);
    assert.equal(r.code, 74);
    assert.equal(
      r.stderr,
      'vault-cli: VLT-3034: store: The store file cannot be read whole: reading it failed (its last page lies past the end of the file).\n',
    );
    assert.ok(statSync(storeFile(rig.vaultDir)).size < 1024 * 1024, 'the store file did not grow');
  });
});

describe('vault check while agents read', () => {
  const rig = new Rig();
  after(() => disposeAll(rig));

  test('a sound store stays sound: the probe writes into a consistent copy, not a torn one', async () => {
    await rig.create();
    await rig.set('Mail', 'mail-value');
    const token = await rig.addAgent(
      'bot',
      ['Mail'],
      ['--per-minute', '1000000', '--per-hour', '1000000'],
    );
    let reading = true;
    let reads = 0;
    const readers = [1, 2, 3].map(async () => {
      while (reading) {
        const r = await rig.agent(['get', 'Mail'], token);
        assert.equal(r.stdout, 'mail-value\n', r.stderr);
        reads++;
      }
    });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await rig.owner(['vault', 'check']);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /^vault check: no damage found/);
      }
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    assert.ok(reads > 0);
  });
});

describe('the write probe on a sound compacted copy', () => {
  test('a backup-sized compact copy passes: the probe writes in host-sized transactions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-cli-test-'));
    try {
      const db = open({ path: join(dir, 'live.mdb'), encoding: 'msgpack', compression: false });
      await db.transaction(() => {
        for (let i = 0; i < 2000; i++) void db.put(`k/${i}`, { v: Buffer.alloc(1500, i) });
      });
      await db.transaction(() => {
        for (let i = 0; i < 2000; i += 2) void db.remove(`k/${i}`);
      });
      // What `vault backup` writes: LMDB's compacted copy (one transaction over it crashed LMDB).
      await db.backup(join(dir, 'compact.mdb'), true);
      await db.close();
      assert.equal(await scanInChild(join(dir, 'compact.mdb')), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
