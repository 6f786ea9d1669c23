// The proxy under attack and under policy: every refusal happens before a
// byte goes upstream and names its VLT code; echoes are scrubbed; framing that
// two parsers could read two ways is refused; a 1 GB upload streams; server-
// sent events are not held back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  connectTunnel,
  makeTestCa,
  peakRss,
  rss,
  startProxy,
  tunnelExchange,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

function curl(
  args: string[],
  proxyUrl: string,
  caFile: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn('curl', [
      '-sS',
      '-D',
      '-',
      '--proxy',
      proxyUrl,
      '--cacert',
      caFile,
      '--noproxy',
      '',
      ...args,
    ]);
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString('latin1')));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, out, err }));
  });
}

/** Status line, the X-Vault-Error header and the body of a refusal. */
function refusal(text: string): { status: number; code: string | null; body: string } {
  // curl -D - prints the tunnel's own reply first.
  text = text.replace(/^HTTP\/1\.1 200 Connection Established\r\n\r\n/, '');
  const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(text)?.[1]);
  const code = /\r\nX-Vault-Error: (VLT-[0-9]{4})\r\n/i.exec(text)?.[1] ?? null;
  return { status, code, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

describe('proxy: refusals, echoes, smuggling, streaming', () => {
  const rig = new Rig();
  const secret = `tok-${hex(16)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let token: string;
  let ourCa: string;
  let ourCaPem: string;
  const target = () => `localhost:${up.port}`;
  const url = (path: string) => `https://localhost:${up.port}${path}`;
  const get = (path: string, ...headers: string[]) =>
    curl([...headers.flatMap((h) => ['-H', h]), url(path)], proxy.url, ourCa);

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('API', secret, 'token');
    await rig.set('Bound', `bound-${hex(8)}`, 'token');
    await rig.set('Bad', 'abc\r\nX-Injected: yes', 'token');
    await rig.set('Rotating', 'first-value-1', 'token');
    await rig.set('Elsewhere', 'not-for-you', 'token');
    token = await rig.addAgent('web', ['API', 'Bound', 'Bad', 'Rotating'], roomy);
    proxy = await startProxy(rig, token, ca);
    ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    ourCaPem = readFileSync(ourCa, 'utf8');
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('a reference out of scope: 403 VLT-2041, nothing upstream', async () => {
    const n = up.seen.length;
    const r = await get('/x', 'Authorization: Bearer vault://Elsewhere/token');
    const f = refusal(r.out);
    assert.equal(f.status, 403);
    assert.equal(f.code, 'VLT-2041');
    assert.match(f.body, /^vault-cli: VLT-2041: Access denied\..*vault:\/\/Elsewhere\/token/);
    assert.equal(up.seen.length, n);
  });

  test('an entry bound to other hosts: 403 VLT-2045, audited exfil (a violation); bound to this host it goes', async () => {
    ok(await rig.owner(['entry', 'hosts', 'Bound', 'api.example.com', 'API.Other.org.']));
    const show = JSON.parse(ok(await rig.owner(['entry', 'show', 'Bound', '--json']))) as {
      hosts: string[];
    };
    assert.deepEqual(show.hosts, ['api.example.com', 'api.other.org']);
    const n = up.seen.length;
    const r = await get('/bound', 'Authorization: Bearer vault://Bound/token');
    const f = refusal(r.out);
    assert.equal(f.status, 403);
    assert.equal(f.code, 'VLT-2045');
    assert.equal(up.seen.length, n);
    const audit = jsonLines(ok(await rig.owner(['audit', '--json']))) as {
      action: string;
      outcome: string;
      entry: string | null;
      host: string | null;
    }[];
    assert.ok(
      audit.some(
        (a) =>
          a.action === 'exfil' &&
          a.outcome === 'VLT-2045' &&
          a.entry === 'Bound' &&
          a.host === 'localhost',
      ),
    );

    ok(await rig.owner(['entry', 'hosts', 'Bound', 'localhost']));
    const r2 = await get('/bound', 'Authorization: Bearer vault://Bound/token');
    assert.match(r2.out, /^HTTP\/1\.1 200 /);
    ok(await rig.owner(['entry', 'hosts', 'Bound', '--clear']));
    const cleared = JSON.parse(ok(await rig.owner(['entry', 'show', 'Bound', '--json']))) as {
      hosts: string[];
    };
    assert.deepEqual(cleared.hosts, []);
  });

  test('a value with CR/LF: 422 VLT-2047, nothing upstream, no header injected', async () => {
    const n = up.seen.length;
    const r = await get('/crlf', 'X-Key: vault://Bad/token');
    const f = refusal(r.out);
    assert.equal(f.status, 422);
    assert.equal(f.code, 'VLT-2047');
    assert.equal(up.seen.length, n);
    assert.ok(!r.out.includes('abc'));
  });

  test('echo exfiltration: the value split across chunks, in a header, gzipped: all scrubbed', async () => {
    up.routes.set('/split', (_req, res) => {
      res.writeHead(200, { 'x-leak': `value=${secret}` });
      res.write(`start ${secret.slice(0, 7)}`);
      setTimeout(() => res.end(`${secret.slice(7)} end ${secret}${secret}`), 30);
    });
    up.routes.set('/gzip', (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
      res.end(gzipSync(`zipped ${secret} zipped`));
    });
    const ref = 'vault://API/token';
    const r = await get('/split', `Authorization: Bearer ${ref}`);
    assert.equal(r.code, 0, r.err);
    assert.ok(!r.out.includes(secret), r.out);
    assert.match(r.out, new RegExp(`x-leak: value=${ref}\r\n`, 'i'));
    assert.ok(r.out.endsWith(`start ${ref} end ${ref}${ref}`), r.out);
    assert.ok(up.header('authorization').includes(`Bearer ${secret}`));

    const g = await get('/gzip', `Authorization: Bearer ${ref}`);
    assert.ok(!g.out.includes(secret));
    assert.ok(g.out.endsWith(`zipped ${ref} zipped`), g.out);
    assert.doesNotMatch(g.out, /content-encoding/i);
  });

  test('echoes in a reply that ends at once go back with their new length; a long reply streams, scrubbed', async () => {
    const ref = 'vault://API/token';
    up.routes.set('/short', (_req, res) => {
      const body = JSON.stringify({ saw: secret, twice: `${secret}:${secret}` });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
    const pad = 'x'.repeat(70 * 1024);
    up.routes.set('/long', (_req, res) => {
      const body = `${secret}${pad}${secret}${pad}${secret}`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
      res.end(body);
    });
    const short = await get('/short', `Authorization: Bearer ${ref}`);
    assert.equal(short.code, 0, short.err);
    // curl prints the CONNECT reply's head first; the response's own head is the last.
    const parts = short.out.split('\r\n\r\n');
    const body = parts.at(-1) ?? '';
    const head = parts.at(-2) ?? '';
    assert.equal(body, JSON.stringify({ saw: ref, twice: `${ref}:${ref}` }));
    assert.match(head, new RegExp(`\r\ncontent-length: ${body.length}\r\n`, 'i'));
    assert.doesNotMatch(head, /transfer-encoding/i);

    const long = await get('/long', `Authorization: Bearer ${ref}`);
    assert.equal(long.code, 0, long.err);
    assert.ok(!long.out.includes(secret));
    assert.ok(long.out.endsWith(`\r\n\r\n${ref}${pad}${ref}${pad}${ref}`));
  });

  test('hop-by-hop and Connection-named headers dropped; order, case and duplicates kept', async () => {
    const n = up.seen.length;
    const text = await tunnelExchange(
      proxy.port,
      target(),
      ourCaPem,
      `GET /hdrs HTTP/1.1\r\nHost: ${target()}\r\nX-First: 1\r\nConnection: close, X-Drop\r\nX-Drop: gone\r\n` +
        `Proxy-Authorization: Basic Zm9vOmJhcg==\r\nkeep-alive: 5\r\nX-Dup: a\r\nAuthorization: Bearer vault://API/token\r\n` +
        `X-Dup: b\r\nx-MiXeD: Case\r\n\r\n`,
    );
    assert.match(text, /^HTTP\/1\.1 200 /);
    const seen = up.seen.slice(n);
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]?.rawHeaders, [
      'Host',
      target(),
      'X-First',
      '1',
      'X-Dup',
      'a',
      'Authorization',
      `Bearer ${secret}`,
      'X-Dup',
      'b',
      'x-MiXeD',
      'Case',
      // The proxy's own hop to the upstream, kept alive.
      'Connection',
      'keep-alive',
    ]);
  });

  test('keep-alive: two requests on one tunnel, each filled', async () => {
    const n = up.seen.length;
    const req = (path: string, close: boolean) =>
      `GET ${path} HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: Bearer vault://API/token\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const text = await tunnelExchange(
      proxy.port,
      target(),
      ourCaPem,
      req('/ka1', false) + req('/ka2', true),
    );
    assert.equal(text.match(/HTTP\/1\.1 200 /g)?.length, 2, text);
    // Sent pipelined, the second goes up on a second connection while the first
    // is busy (clients pipeline only idempotent requests), so either may arrive first.
    assert.deepEqual(
      up.seen
        .slice(n)
        .map((s) => s.url)
        .sort(),
      ['/ka1', '/ka2'],
    );
    assert.ok(!text.includes(secret));
  });

  test('a rotated value is used on the next request', async () => {
    await get('/rot', 'X-Key: vault://Rotating/token');
    assert.equal(up.header('x-key').at(-1), 'first-value-1');
    await rig.set('Rotating', 'second-value-2', 'token');
    await get('/rot', 'X-Key: vault://Rotating/token');
    assert.equal(up.header('x-key').at(-1), 'second-value-2');
  });

  test('each fill is audited as fill with the destination host', async () => {
    const audit = jsonLines(ok(await rig.owner(['audit', '--json']))) as {
      action: string;
      entry: string | null;
      host: string | null;
      actor: string;
    }[];
    const fills = audit.filter((a) => a.action === 'fill' && a.entry === 'API');
    assert.ok(fills.length >= 3);
    assert.ok(fills.every((a) => a.host === 'localhost' && a.actor === 'cli:web'));
  });

  test('smuggling: CL+TE, duplicate lengths, bad TE: 400 VLT-2048, nothing upstream', async () => {
    const variants = [
      'Content-Length: 5\r\nTransfer-Encoding: chunked',
      'Transfer-Encoding: chunked\r\nContent-Length: 5',
      'Content-Length: 5\r\nContent-Length: 5',
      'Content-Length: 5\r\nContent-Length: 6',
      'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity',
      'Transfer-Encoding: gzip, chunked',
      'Content-Length: +5',
    ];
    for (const v of variants) {
      const n = up.seen.length;
      const text = await tunnelExchange(
        proxy.port,
        target(),
        ourCaPem,
        `POST /smuggle HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: Bearer vault://API/token\r\n${v}\r\n\r\n` +
          `0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: ${target()}\r\n\r\n`,
      );
      const f = refusal(text);
      assert.equal(f.status, 400, `${v}: ${text}`);
      assert.equal(f.code, 'VLT-2048', v);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(up.seen.length, n, `${v}: nothing upstream`);
    }
    // The same over plain HTTP in absolute form.
    const plain = await new Promise<string>((resolve, reject) => {
      const s = netConnect(proxy.port, '127.0.0.1', () =>
        s.write(
          `POST http://127.0.0.1:${up.port}/p HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        ),
      );
      let out = '';
      s.on('data', (c: Buffer) => (out += c.toString()));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    });
    assert.equal(refusal(plain).code, 'VLT-2048');
  });

  test('a request addressed to the proxy itself: VLT-2049; bad CONNECT targets refused', async () => {
    const direct = await new Promise<string>((resolve, reject) => {
      const s = netConnect(proxy.port, '127.0.0.1', () =>
        s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${proxy.port}\r\nConnection: close\r\n\r\n`),
      );
      let out = '';
      s.on('data', (c: Buffer) => (out += c.toString()));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    });
    assert.equal(refusal(direct).status, 400);
    assert.equal(refusal(direct).code, 'VLT-2049');
    for (const t of [
      `127.0.0.1:${proxy.port}`,
      'localhost:0',
      'a..b:443',
      'evil.com:443@x',
      'bad host:443',
      '[::1',
      'x:99999',
    ]) {
      const { reply } = await connectTunnel(proxy.port, t);
      assert.match(reply, /^HTTP\/1\.1 400 /, t);
    }
  });

  test('over the limit: 429 VLT-2042; locked: 423 VLT-2043; nothing upstream', async () => {
    await rig.set('L1', 'one-1111', 'token');
    await rig.set('L2', 'two-2222', 'token');
    const tight = await rig.addAgent('tight', ['L1', 'L2'], ['--per-minute', '1']);
    // Its own config directory: one CA per agent.
    const configDir = join(rig.root, 'tight-config');
    const p = await startProxy(rig, tight, ca, { VAULT_CONFIG_DIR: configDir });
    const tightCa = join(configDir, 'proxy-ca.pem');
    try {
      const n = up.seen.length;
      const r = await curl(
        ['-H', 'X-A: vault://L1/token', '-H', 'X-B: vault://L2/token', url('/limit')],
        p.url,
        tightCa,
      );
      const f = refusal(r.out);
      assert.equal(f.status, 429, r.out);
      assert.equal(f.code, 'VLT-2042');
      ok(await rig.owner(['agent', 'lock', 'tight']));
      const l = refusal(
        (await curl(['-H', 'X-A: vault://L1/token', url('/limit')], p.url, tightCa)).out,
      );
      assert.equal(l.status, 423);
      assert.equal(l.code, 'VLT-2043');
      assert.equal(up.seen.length, n);
    } finally {
      await p.stop();
    }
  });

  test('server-sent events: the first event arrives within 50 ms of being sent', async (ctx) => {
    let sentAt = 0;
    up.routes.set('/sse', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      setTimeout(() => {
        sentAt = performance.now();
        res.write('data: first\n\n');
        setTimeout(() => res.end('data: second\n\n'), 200);
      }, 300);
    });
    const { socket } = await connectTunnel(proxy.port, target());
    const t = tlsConnect({ socket, servername: 'localhost', ca: ourCaPem });
    await new Promise((r) => t.once('secureConnect', r));
    t.write(
      `GET /sse HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: Bearer vault://API/token\r\nAccept: text/event-stream\r\n\r\n`,
    );
    let text = '';
    let headAt = 0;
    const arrivedAt = await new Promise<number>((resolve) => {
      t.on('data', (c: Buffer) => {
        text += c.toString();
        if (headAt === 0 && text.includes('\r\n\r\n')) headAt = performance.now();
        if (text.includes('data: first')) resolve(performance.now());
      });
    });
    t.destroy();
    assert.ok(headAt > 0 && headAt < sentAt, 'the response head came before the first event');
    const delay = arrivedAt - sentAt;
    ctx.diagnostic(`first event arrived ${delay.toFixed(2)} ms after it was sent`);
    assert.ok(delay < 50, `first event took ${delay.toFixed(1)} ms`);
  });

  test('an upstream whose certificate the system roots do not vouch for: 502 VLT-3008, no request sent', async () => {
    // The same upstream, but this proxy is not told about the test CA.
    const strict = await startProxy(rig, token, null);
    try {
      const n = up.seen.length;
      const r = await curl(
        ['-H', 'Authorization: Bearer vault://API/token', url('/untrusted')],
        strict.url,
        ourCa,
      );
      const f = refusal(r.out);
      assert.equal(f.status, 502, r.out);
      assert.equal(f.code, 'VLT-3008');
      assert.equal(up.seen.length, n);
      assert.ok(!r.out.includes(secret));
    } finally {
      await strict.stop();
    }
  });

  test('plain HTTP in absolute form: filled to this machine, refused to any other', async () => {
    const plain = await Upstream.start(null);
    try {
      const r = await curl(
        ['-H', 'Authorization: Bearer vault://API/token', `http://127.0.0.1:${plain.port}/plain`],
        proxy.url,
        ourCa,
      );
      assert.match(r.out, /^HTTP\/1\.1 200 /);
      assert.deepEqual(plain.header('authorization'), [`Bearer ${secret}`]);
      assert.ok(r.out.endsWith('you sent: Bearer vault://API/token\n'), r.out);
      // Bodies go on whole, with a length or chunked.
      const body = 'x'.repeat(200_000);
      const bodyFile = join(rig.root, 'post-body');
      writeFileSync(bodyFile, body);
      for (const framing of [[], ['-H', 'Transfer-Encoding: chunked']]) {
        const n = plain.seen.length;
        const posted = await curl(
          [...framing, '--data-binary', `@${bodyFile}`, `http://127.0.0.1:${plain.port}/post`],
          proxy.url,
          ourCa,
        );
        assert.match(posted.out, /^HTTP\/1\.1 200 /, posted.err);
        assert.equal(plain.seen[n]?.bodyBytes, body.length);
        assert.equal(plain.seen[n]?.body.toString(), body);
      }
      const away = await curl(
        ['-H', 'Authorization: Bearer vault://API/token', 'http://example.invalid/'],
        proxy.url,
        ourCa,
      );
      const f = refusal(away.out);
      assert.equal(f.status, 403);
      assert.equal(f.code, 'VLT-2045');
      assert.match(f.body, /only over HTTPS/);
    } finally {
      await plain.close();
    }
  });

  test('the value is in no audit record, host log, proxy output or config file', async () => {
    const audit = ok(await rig.owner(['audit', '--json']));
    assert.ok(audit.includes('"fill"'));
    assert.ok(!audit.includes(secret));
    assert.ok(!readFileSync(join(rig.vaultDir, 'host.log'), 'utf8').includes(secret));
    assert.ok(!proxy.stderr().includes(secret));
    for (const f of ['proxy.sealed', 'proxy-ca.pem', 'proxy-ca-bundle.pem']) {
      const bytes = readFileSync(join(rig.configDir, f));
      assert.ok(!bytes.includes(secret), f);
      assert.ok(!bytes.includes('PRIVATE KEY'), `${f} holds no key in clear`);
    }
  });

  test(
    'a 1 GB upload streams through with the proxy under 150 MB peak RSS',
    { timeout: 180_000 },
    async (ctx) => {
      const GB = 1024 ** 3;
      up.routes.set('/upload', (req, res, body) => {
        void body;
        res.writeHead(200);
        res.end('ok');
      });
      const { socket } = await connectTunnel(proxy.port, target());
      const t = tlsConnect({ socket, servername: 'localhost', ca: ourCaPem });
      await new Promise((r) => t.once('secureConnect', r));
      const before = rss(proxy.proc.pid as number);
      t.write(
        `POST /upload HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: Bearer vault://API/token\r\n` +
          `Content-Length: ${GB}\r\nConnection: close\r\n\r\n`,
      );
      let reply = '';
      t.on('data', (c: Buffer) => (reply += c.toString()));
      const done = new Promise((r) => t.on('close', r));
      function* chunks() {
        const c = Buffer.alloc(256 * 1024, 0x61);
        for (let sent = 0; sent < GB; sent += c.length) yield c;
      }
      for (const c of chunks()) {
        if (!t.write(c)) await new Promise((r) => t.once('drain', r));
      }
      await done;
      assert.match(reply, /^HTTP\/1\.1 200 /);
      assert.equal(up.seen.at(-1)?.bodyBytes, GB);
      const peak = peakRss(proxy.proc.pid as number);
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
      ctx.diagnostic(`proxy RSS ${mb(before)} before the upload, peak ${mb(peak)}`);
      assert.ok(peak < 150 * 1024 * 1024, `proxy peak RSS ${mb(peak)}`);
      // Left to V8, relayed buffers pile up by about 64 MB before it collects
      // (src/proxy/scavenge.ts); the proxy collects every 8 MB of body.
      assert.ok(peak - before < 40 * 1024 * 1024, `proxy grew ${mb(peak - before)}`);
    },
  );
});

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}
