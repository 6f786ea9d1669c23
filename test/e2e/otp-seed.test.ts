// Codes, not seeds: a one-time-password seed never leaves the host. `get
// --field totp`, a `render` template and a proxy fill naming the totp field
// are refused with VLT-2052 and audited; only `totp` uses the seed, for a code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused, auditRecords } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa, startProxy, type ProxyProcess } from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';
import { spawn } from 'node:child_process';

const SEED = 'JBSWY3DPEHPK3PXP';
const rig = new Rig();
let token = '';

before(async () => {
  await rig.create();
  await rig.set('GitHub', SEED, 'totp');
  await rig.set('GitHub', 'gh-password');
  token = await rig.addAgent('bot', ['GitHub'], ['--per-minute', '100', '--per-hour', '100']);
});
after(() => rig.dispose());

test('get --field totp is refused with VLT-2052 and audited; totp gives a code', async () => {
  assertRefused(await rig.agent(['get', 'GitHub', '--field', 'totp'], token), 'VLT-2052');
  assert.match(ok(await rig.agent(['totp', 'GitHub'], token)), /^[0-9]{6}\n$/);
  assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh-password\n');
  const denied = (await auditRecords(rig)).filter((r) => r.outcome === 'VLT-2052');
  assert.equal(denied.length, 1);
  assert.equal(denied[0]?.action, 'denied');
  assert.equal(denied[0]?.field, 'totp');
});

test('render refuses a template naming the seed, releasing nothing', async () => {
  const r = await rig.agent(['render', '-'], token, {
    input: 'p=vault://GitHub/password\nseed=vault://GitHub/totp\n',
  });
  assertRefused(r, 'VLT-2052');
  assert.doesNotMatch(r.stderr, new RegExp(SEED));
});

test('a proxy fill naming the seed: 403 VLT-2052, nothing upstream', async () => {
  const ca = makeTestCa(rig.root);
  const up = await Upstream.start(ca);
  let proxy: ProxyProcess | undefined;
  try {
    proxy = await startProxy(rig, token, ca);
    const ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn('curl', [
        '-sS',
        '-D',
        '-',
        '--proxy',
        (proxy as ProxyProcess).url,
        '--cacert',
        ourCa,
        '--noproxy',
        '',
        '-H',
        'Authorization: Bearer vault://GitHub/totp',
        `https://localhost:${up.port}/x`,
      ]);
      let text = '';
      c.stdout.on('data', (d: Buffer) => (text += d.toString('latin1')));
      c.on('error', reject);
      c.on('close', () => resolve(text));
    });
    assert.match(out, /\r\nHTTP\/1\.1 403 /);
    assert.match(out, /\r\nX-Vault-Error: VLT-2052\r\n/i);
    assert.doesNotMatch(out, new RegExp(SEED));
    assert.equal(up.seen.length, 0);
  } finally {
    await proxy?.stop();
    await up.close();
  }
});
