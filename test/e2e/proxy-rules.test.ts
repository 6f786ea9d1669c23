// Fast fills keep things between requests: the proxy's connections to the
// host, the host's unsealed keys of a caller, the client's tunnel. None of it
// carries a decision: a token revoked, an agent locked or narrowed, a session
// ended in the middle of a tunnel is refused on the very next request on that
// same tunnel, and nothing more goes upstream.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

describe('proxy: every rule judged per request on kept connections', () => {
  const rig = new Rig();
  const secret = `rules-${hex(12)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  const target = () => `localhost:${up.port}`;
  const get = (path: string) =>
    `GET ${path} HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: Bearer vault://API/token\r\n\r\n`;
  const client = () => ({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: rig.env },
    autoStart: false,
  });

  /** A tunnel as `token` whose first fills go through (the caller is kept warm). */
  async function warm(token: string, tag: string): Promise<Tunnel> {
    const t = await Tunnel.open(proxy.port, target(), ourCa, token);
    for (let i = 0; i < 3; i++) {
      t.send(get(`/${tag}/warm/${i}`));
      const r = await t.reply();
      assert.equal(r.status, 200, r.head);
      assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    }
    return t;
  }

  /** The next request on `t` is refused with `code`, and nothing reaches the upstream. */
  async function refusedNext(t: Tunnel, tag: string, status: number, code: string) {
    const n = up.seen.length;
    t.send(get(`/${tag}/after`));
    const r = await t.reply();
    assert.equal(r.status, status, r.head + r.body);
    assert.match(r.head, new RegExp(`\\r\\nx-vault-error: ${code}`, 'i'));
    assert.equal(up.seen.length, n, 'nothing went upstream');
    assert.ok(!up.seen.some((s) => s.url === `/${tag}/after`));
  }

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('API', secret, 'token');
    await rig.set('Other', `other-${hex(8)}`, 'token');
    const init = await rig.addAgent('init', ['Other'], roomy);
    proxy = await startProxy(rig, init, ca);
    ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], init)).trim(), 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('an agent revoked mid-tunnel: the next request is 403 VLT-2040', async () => {
    const token = await rig.addAgent('revoked', ['API'], roomy);
    const t = await warm(token, 'revoke');
    ok(await rig.owner(['agent', 'revoke', 'revoked']));
    await refusedNext(t, 'revoke', 403, 'VLT-2040');
    await t.close();
  });

  test('an agent locked mid-tunnel: the next request is 423 VLT-2043', async () => {
    const token = await rig.addAgent('locked', ['API'], roomy);
    const t = await warm(token, 'lock');
    ok(await rig.owner(['agent', 'lock', 'locked']));
    await refusedNext(t, 'lock', 423, 'VLT-2043');
    await t.close();
  });

  test('an entry taken out of scope mid-tunnel: the next request is 403 VLT-2041', async () => {
    const token = await rig.addAgent('narrowed', ['API', 'Other'], roomy);
    const t = await warm(token, 'scope');
    ok(await rig.owner(['agent', 'scope', 'narrowed', '--rm', 'API']));
    await refusedNext(t, 'scope', 403, 'VLT-2041');
    await t.close();
  });

  test('a session ended mid-tunnel: the next request is 403 VLT-2040', async () => {
    await rig.addAgent('sessions', ['API'], roomy);
    const { token } = await call(client(), 'session.start', {
      passphrase: PASSPHRASE,
      agent: 'sessions',
      scope: [],
    });
    const t = await warm(token, 'session');
    await call(client(), 'session.end', { token });
    await refusedNext(t, 'session', 403, 'VLT-2040');
    await t.close();
  });

  test('many fills at once: each is answered, filled and audited once', async () => {
    const token = await rig.addAgent('burst', ['API'], roomy);
    const before = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    const tunnels = await Promise.all(
      Array.from({ length: 12 }, () => Tunnel.open(proxy.port, target(), ourCa, token)),
    );
    for (let round = 0; round < 3; round++) {
      for (const [i, t] of tunnels.entries()) t.send(get(`/burst/${round}/${i}`));
      const replies = await Promise.all(tunnels.map((t) => t.reply()));
      for (const r of replies) assert.equal(r.status, 200, r.head);
    }
    await Promise.all(tunnels.map((t) => t.close()));
    const burst = up.seen.filter((s) => s.url.startsWith('/burst/'));
    assert.equal(burst.length, 36);
    for (const s of burst) assert.ok(s.rawHeaders.includes(`Bearer ${secret}`));
    const after = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    assert.equal(after - before, 36, 'one fill record per request');
  });
});
