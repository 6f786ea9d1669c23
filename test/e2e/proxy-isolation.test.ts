// No value crosses between callers of one proxy. Two agents (two tokens) use
// one `vault-cli proxy`; the upstream echoes whatever Authorization it got
// into a response trailer and keeps its connections alive, so a connection
// one caller's filled request went over could be handed to the other. The
// other caller never sees the value, and gets no audit record for it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type Reply,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

describe('proxy: no value crosses between callers', () => {
  const rig = new Rig();
  const alphaSecret = `alpha-${hex(12)}`;
  const betaSecret = `beta-${hex(12)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  let alpha: string;
  let beta: string;
  const target = () => `localhost:${up.port}`;
  const get = (path: string, auth: string | null) =>
    `GET ${path} HTTP/1.1\r\nHost: ${target()}\r\n` +
    (auth === null ? '' : `Authorization: ${auth}\r\n`) +
    '\r\n';
  /** One request in a tunnel of its own, the tunnel closed after it. */
  const once = async (token: string, path: string, auth: string | null) => {
    const t = await Tunnel.open(proxy.port, target(), ourCa, token);
    t.send(get(path, auth));
    const r = await t.reply();
    await t.close();
    return r;
  };
  const everything = (r: Reply) => r.head + r.body + r.trailers;

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    // Echoes what it got, chunked, in a trailer only; the connection stays open.
    up.routes.set('/trailer', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-trailer-echo' });
      res.write('body\n');
      res.addTrailers({ 'x-trailer-echo': req.headers.authorization ?? '' });
      res.end();
    });
    await rig.create();
    await rig.set('Alpha', alphaSecret, 'token');
    await rig.set('Beta', betaSecret, 'token');
    await rig.set('Other', `other-${hex(8)}`, 'token');
    const init = await rig.addAgent('init', ['Other'], roomy);
    alpha = await rig.addAgent('alpha', ['Alpha'], roomy);
    beta = await rig.addAgent('beta', ['Beta'], roomy);
    proxy = await startProxy(rig, init, ca);
    ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], init)).trim(), 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('trailers are dropped and never reach the next response on the same connection', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa, alpha);
    t.send(get('/trailer/1', 'Bearer vault://Alpha/token'));
    const first = await t.reply();
    assert.equal(first.status, 200);
    assert.equal(first.body, 'body\n');
    assert.equal(first.trailers, '', 'trailers are not relayed');
    t.send(get('/plain/2', null));
    const second = await t.reply();
    await t.close();
    assert.equal(second.status, 200);
    const [a, b] = [up.seen.at(-2), up.seen.at(-1)];
    assert.equal(a?.url, '/trailer/1');
    assert.equal(b?.url, '/plain/2');
    assert.equal(a?.connection, b?.connection, 'the second request reused the connection');
    assert.ok(a?.rawHeaders.includes(`Bearer ${alphaSecret}`), 'the first was filled');
    for (const r of [first, second]) {
      assert.ok(!everything(r).includes(alphaSecret), 'the value came back');
      assert.doesNotMatch(r.head, /^x-trailer-echo:/im, 'a trailer became a header');
    }
  });

  test('caller B, after caller A on the same upstream: never sees A’s value, gets no record of it', async () => {
    const before = (await auditRecords(rig)).length;
    const a = await once(alpha, '/trailer/a', 'Bearer vault://Alpha/token');
    assert.equal(a.status, 200);
    const b = await once(beta, '/plain/b', null);
    const b2 = await once(beta, '/trailer/b', 'Bearer vault://Beta/token');
    assert.equal(b.status, 200);
    assert.equal(b2.status, 200);
    for (const r of [b, b2]) {
      assert.ok(!everything(r).includes(alphaSecret), 'B got A’s value');
      assert.doesNotMatch(r.head, /^x-trailer-echo:/im, 'a trailer became a header');
    }
    const conn = (url: string) => up.seen.find((s) => s.url === url)?.connection;
    assert.notEqual(conn('/plain/b'), conn('/trailer/a'), 'A’s connection was lent to B');
    // A's connection is still A's: A's next tunnel picks it up.
    await once(alpha, '/plain/a2', null);
    assert.equal(conn('/plain/a2'), conn('/trailer/a'));
    const records = (await auditRecords(rig)).slice(before) as unknown as {
      actor: string;
      action: string;
      entry?: string;
    }[];
    const fills = records.filter((r) => r.action === 'fill');
    assert.deepEqual(
      fills.map((r) => `${r.actor} ${r.entry}`),
      ['cli:alpha Alpha', 'cli:beta Beta'],
    );
  });

  test('a pooled connection reused by many tunnels adds no listener each time: no warning', async () => {
    for (let i = 0; i < 16; i++) {
      const r = await once(alpha, `/reuse/${i}`, null);
      assert.equal(r.status, 200);
    }
    const conns = new Set(
      up.seen.filter((s) => s.url.startsWith('/reuse/')).map((s) => s.connection),
    );
    assert.equal(conns.size, 1, 'one pooled connection served every tunnel');
    assert.doesNotMatch(proxy.stderr(), /MaxListenersExceededWarning|Warning/);
  });
});
