// What the host keeps between a caller's resolves (its keys, the decoded
// records, each entry's opened name and meta and field keys) never outlives a
// change: on one kept channel, as the proxy holds it, the very next resolve
// after each owner command sees it: a new value, a host binding set, changed
// and cleared, an entry taken out of scope, a lock, a revocation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HostChannel } from '../../src/client/channel.js';
import { VaultError } from '../../src/core/errors.js';
import { hostPid } from '../support/e2e-helpers.js';
import { CLI, Rig, ok } from '../support/rig.js';

test('every owner change is seen by the very next resolve on a kept channel', async () => {
  const rig = new Rig();
  const channel = new HostChannel({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: rig.env },
    autoStart: false,
  });
  try {
    await rig.create();
    await rig.set('Alpha', 'alpha-1', 'token');
    await rig.set('Beta', 'beta-1', 'token');
    const token = await rig.addAgent(
      'filler',
      ['Alpha', 'Beta'],
      ['--per-minute', '1000', '--per-hour', '1000'],
    );
    const pid = await hostPid(rig);
    const resolve = async (entry: string, host = 'localhost'): Promise<string> => {
      const r = await channel.call('resolve', { token, refs: [{ entry, field: 'token' }], host });
      return Buffer.from(r.values[0] ?? '', 'base64').toString('utf8');
    };
    const refused = async (entry: string, host = 'localhost'): Promise<string> => {
      try {
        await resolve(entry, host);
      } catch (err) {
        if (err instanceof VaultError) return err.code;
        throw err;
      }
      return 'released';
    };

    // Twice, so the second is served from whatever the first left kept.
    assert.equal(await resolve('Alpha'), 'alpha-1');
    assert.equal(await resolve('Alpha'), 'alpha-1');

    await rig.set('Alpha', 'alpha-2', 'token');
    assert.equal(await resolve('Alpha'), 'alpha-2', 'a new value');

    ok(await rig.owner(['entry', 'hosts', 'Alpha', 'localhost']));
    assert.equal(await resolve('Alpha'), 'alpha-2', 'bound to the host it goes to');
    ok(await rig.owner(['entry', 'hosts', 'Alpha', 'api.example.com']));
    assert.equal(await refused('Alpha'), 'VLT-2045', 'bound elsewhere now');
    ok(await rig.owner(['entry', 'hosts', 'Alpha', '--clear']));
    assert.equal(await resolve('Alpha'), 'alpha-2', 'the binding cleared');

    ok(await rig.owner(['agent', 'scope', 'filler', '--rm', 'Alpha']));
    assert.equal(await refused('Alpha'), 'VLT-2041', 'out of scope');

    assert.equal(await resolve('Beta'), 'beta-1');
    ok(await rig.owner(['agent', 'lock', 'filler']));
    assert.equal(await refused('Beta'), 'VLT-2043', 'locked');

    ok(await rig.owner(['agent', 'revoke', 'filler']));
    assert.equal(await refused('Beta'), 'VLT-2040', 'revoked');

    assert.equal(await hostPid(rig), pid, 'one host served all of it, with its caches');
  } finally {
    channel.close();
    await rig.dispose();
  }
});
