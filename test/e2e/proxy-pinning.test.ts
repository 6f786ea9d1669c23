// A value goes only where the request is addressed. Inside a CONNECT tunnel
// (and in absolute form) the Host header must name the same host: a value
// bound to one host never goes out as `Host: other.example` (domain fronting).
// Plain HTTP carries a value only to this machine, judged by what the name
// resolves to (the proxy runs under bwrap with an /etc/hosts of the test's).
// `Upgrade: h2c` is not relayed as a WebSocket upgrade. Each refused Host
// counts as a violation of its agent's limits (test/attack/exfiltration.test.ts),
// so each is sent by an agent of its own: the second would lock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { proxyUrl } from '../../src/proxy/caller.js';
import { hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

function curl(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-D', '-', '--noproxy', '', ...args], {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('latin1')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Raw bytes to the proxy's port (absolute-form requests); everything it sends until it closes. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (c: Buffer) => {
      out += c.toString('latin1');
      // One response, bodies framed by Content-Length in these tests.
      const end = out.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: *([0-9]+)/i.exec(out);
      if (end >= 0 && len !== null && out.length >= end + 4 + Number(len[1])) s.end();
    });
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('proxy: a value goes only where the request is addressed', () => {
  const rig = new Rig();
  const secret = `pinned-${hex(12)}`;
  let ca: TestCa;
  let up: Upstream;
  let plain: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  let ourCaFile: string;
  let agent: string;
  // `localhost` is not this machine for the proxy (see before); tunnels go to the address.
  const target = () => `127.0.0.1:${up.port}`;
  const REF = 'Authorization: Bearer vault://API/token';
  let strangers = 0;
  /** A new agent of the same scope, for one refused attempt. */
  const stranger = () => rig.addAgent(`fronting-${++strangers}`, ['API'], roomy);
  const auth = (token: string) =>
    `Proxy-Authorization: Basic ${Buffer.from(`vault:${token}`).toString('base64')}`;

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    plain = await Upstream.start(null);
    await rig.create();
    await rig.set('API', secret, 'token');
    agent = await rig.addAgent('web', ['API'], roomy);
    // `localhost` leads elsewhere (TEST-NET-1, never this machine); another name leads here.
    const hosts = join(rig.root, 'hosts');
    writeFileSync(hosts, '192.0.2.1 localhost\n127.0.0.1 loop.vault-test\n');
    const wrap = ['bwrap', '--dev-bind', '/', '/', '--ro-bind', hosts, '/etc/hosts'];
    proxy = await startProxy(rig, agent, ca, {}, [...wrap, '--die-with-parent', '--']);
    ourCaFile = ok(await rig.agent(['proxy', 'ca'], agent)).trim();
    ourCa = readFileSync(ourCaFile, 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    await up?.close();
    await plain?.close();
    await rig.dispose();
  });

  const viaCurl = (extra: string[], path: string, as = agent) =>
    curl([
      '--proxy',
      proxyUrl(proxy.port, as),
      '--cacert',
      ourCaFile,
      ...extra,
      `https://${target()}${path}`,
    ]);

  test('curl: a reference with a Host other than the CONNECT target is 400 VLT-2048, nothing upstream', async () => {
    const n = up.seen.length;
    const r = await viaCurl(['-H', 'Host: other.example', '-H', REF], '/fronted', await stranger());
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\r\nHTTP\/1\.1 400 /);
    assert.match(r.stdout, /\r\nx-vault-error: VLT-2048\r\n/i);
    assert.match(r.stdout, /not the destination 127\.0\.0\.1:/);
    assert.equal(up.seen.length, n, 'nothing went upstream');
    // The Host curl sends itself names the target: filled.
    const own = await viaCurl(['-H', REF], '/own');
    assert.match(own.stdout, /you sent: Bearer vault:\/\/API\/token\n/);
    assert.equal(up.seen.at(-1)?.url, '/own');
    assert.ok(up.seen.at(-1)?.rawHeaders.includes(`Bearer ${secret}`));
  });

  test('Node: another host, another port, two Hosts are refused with a reference; the same host in any spelling goes', async () => {
    const n = up.seen.length;
    const bad = [
      'Host: other.example',
      `Host: other.example:${up.port}`,
      'Host: 127.0.0.1:1',
      `Host: localhost:${up.port}`,
      `Host: 127.0.0.1:${up.port}\r\nHost: other.example`,
    ];
    for (const host of bad) {
      const t = await Tunnel.open(proxy.port, target(), ourCa, await stranger());
      t.send(`GET /bad HTTP/1.1\r\n${host}\r\n${REF}\r\n\r\n`);
      const r = await t.reply();
      assert.equal(r.status, 400, host);
      assert.match(r.head, /\r\nx-vault-error: VLT-2048/i, host);
      await t.close();
    }
    assert.equal(up.seen.length, n, 'nothing went upstream');
    const t = await Tunnel.open(proxy.port, target(), ourCa, null);
    for (const host of ['127.0.0.1', `127.0.0.1:${up.port}`, ` 127.0.0.1:${up.port} `]) {
      t.send(`GET /good HTTP/1.1\r\nHost: ${host}\r\n${REF}\r\n\r\n`);
      const r = await t.reply();
      assert.equal(r.status, 200, host);
      assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    }
    // Without a reference nothing is at stake: the request goes as written.
    t.send(`GET /unfilled HTTP/1.1\r\nHost: other.example\r\n\r\n`);
    assert.equal((await t.reply()).status, 200);
    await t.close();
    assert.equal(up.seen.at(-1)?.url, '/unfilled');
  });

  test('plain HTTP: judged by what the name resolves to, sent to that address', async () => {
    const n = plain.seen.length;
    // `localhost` resolves (for the proxy) to an address that is not this machine.
    const away = await raw(
      proxy.port,
      `GET http://localhost:${plain.port}/away HTTP/1.1\r\nHost: localhost:${plain.port}\r\n${REF}\r\n\r\n`,
    );
    assert.match(away, /^HTTP\/1\.1 403 /);
    assert.match(away, /\r\nX-Vault-Error: VLT-2045\r\n/);
    assert.equal(plain.seen.length, n, 'nothing went upstream');
    // A name that is not spelled like this machine but resolves to it: filled.
    const loop = `loop.vault-test:${plain.port}`;
    const here = await raw(
      proxy.port,
      `GET http://${loop}/here HTTP/1.1\r\nHost: ${loop}\r\n${REF}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(here, /^HTTP\/1\.1 200 /);
    assert.equal(plain.seen.at(-1)?.url, '/here');
    assert.ok(plain.seen.at(-1)?.rawHeaders.includes(`Bearer ${secret}`));
    // Absolute form is pinned too: the URL's host is the destination.
    const fronted = await raw(
      proxy.port,
      `GET http://127.0.0.1:${plain.port}/fronted HTTP/1.1\r\nHost: other.example\r\n${auth(await stranger())}\r\n${REF}\r\n\r\n`,
    );
    assert.match(fronted, /^HTTP\/1\.1 400 /);
    assert.match(fronted, /\r\nX-Vault-Error: VLT-2048\r\n/);
    assert.notEqual(plain.seen.at(-1)?.url, '/fronted');
  });

  test('Upgrade: h2c is not relayed as an upgrade: the upstream gets an ordinary request', async () => {
    const h2c =
      'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
    const upgrades = () => up.seen.concat(plain.seen).filter((s) => s.url.startsWith('/h2c'));
    const loop = `127.0.0.1:${plain.port}`;
    const r = await raw(
      proxy.port,
      `GET http://${loop}/h2c/plain HTTP/1.1\r\nHost: ${loop}\r\n${h2c}${REF}\r\n\r\n`,
    );
    assert.match(r, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(r, /^HTTP\/1\.1 101/m);
    const t = await Tunnel.open(proxy.port, target(), ourCa, null);
    t.send(`GET /h2c/tunnel HTTP/1.1\r\nHost: ${target()}\r\n${h2c}${REF}\r\n\r\n`);
    const inTunnel = await t.reply();
    await t.close();
    assert.equal(inTunnel.status, 200);
    assert.equal(inTunnel.body, 'you sent: Bearer vault://API/token\n');
    const seen = upgrades();
    assert.deepEqual(seen.map((s) => s.url).sort(), ['/h2c/plain', '/h2c/tunnel']);
    for (const s of seen) {
      const names = s.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase());
      assert.ok(!names.includes('upgrade'), 'Upgrade went upstream');
      assert.ok(!names.includes('http2-settings'), 'HTTP2-Settings went upstream');
    }
  });
});
