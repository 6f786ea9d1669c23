// `vault check` as the owner meets it: a sound vault passes; a record changed
// outside vault-cli is named with its damage code, one line each, exit 74; a
// store whose first page is damaged (which crashes whatever opens it) gives
// VLT-3034 from every command instead of a dead host, and check says so.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
// The damage is made below the Store API, as a disk error would make it.
// eslint-disable-next-line no-restricted-imports
import { open } from 'lmdb';
import { assertRefused, disposeAll } from '../support/e2e-helpers.js';
import { Rig } from '../support/rig.js';

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
    await rig.stop();

    const db = open({
      path: join(rig.vaultDir, 'vault.mdb'),
      encoding: 'msgpack',
      compression: false,
      cache: false,
    });
    let entryId = '';
    try {
      const [key] = [...db.getKeys({ start: 'entry/', end: 'entry0' })];
      assert.ok(typeof key === 'string');
      entryId = key.slice('entry/'.length);
      const e = db.get(key) as Record<string, unknown>;
      // The "version 0, 1970" of the issue: a timestamp no seal covers.
      db.putSync(key, { ...e, updated: 0 });
      db.removeSync('audit/000000000002');
    } finally {
      await db.close();
    }
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
    for (const l of lines) assert.match(l, /^vault-cli: VLT-30[23][0-9]: [^:]+: .+$/);
    assert.match(r.stdout, /^vault check: [0-9]+ problem\(s\)/);
    const asJson = await rig.owner(['vault', 'check', '--json']);
    assert.equal(asJson.code, 74);
    const json = JSON.parse(asJson.stdout) as {
      problems: { code: string; where: string }[];
    };
    assert.ok(json.problems.some((p) => p.code === 'VLT-3035' && p.where === `entry ${entryId}`));
  });

  test('a store whose first page is damaged: VLT-3034 from every command, and from check, not a crash', async () => {
    await rig.stop();
    const file = join(rig.vaultDir, 'vault.mdb');
    const bytes = readFileSync(file);
    // mm_address of the first meta page: opening the store crashes LMDB's reader.
    bytes[29] = (bytes[29] ?? 0) ^ 0x02;
    writeFileSync(file, bytes);
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
