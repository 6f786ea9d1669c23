// How the proxy reuses upstream connections: a tunnel's keep-alive requests
// share one, a later tunnel to the same host picks up an idle one, and a
// connection the upstream closed is never used again. Each request still has
// its references resolved by the host, charged and audited on its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import {
  connect as tlsConnect,
  createServer as createTlsServer,
  type Server as TlsServer,
  type TLSSocket,
} from 'node:tls';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  connectTunnel,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

interface Reply {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** A client connection through a CONNECT tunnel, reading responses one by one (Content-Length framed). */
class Tunnel {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  closed = false;

  private constructor(private readonly t: TLSSocket) {
    t.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.waiting?.();
    });
    t.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static async open(proxyPort: number, target: string, ca: string): Promise<Tunnel> {
    const { socket } = await connectTunnel(proxyPort, target);
    const t = tlsConnect({ socket, servername: 'localhost', ca });
    await new Promise((r, j) => {
      t.once('secureConnect', r);
      t.once('error', j);
    });
    return new Tunnel(t);
  }

  send(raw: string): void {
    this.t.write(raw);
  }

  /** The next whole response; `bodiless` for one to HEAD, or a 204 or 304. */
  async reply(bodiless = false): Promise<Reply> {
    for (;;) {
      const r = this.parse(bodiless);
      if (r !== null) return r;
      if (this.closed) throw new Error(`closed with ${JSON.stringify(this.buf.toString())}`);
      await new Promise<void>((r) => (this.waiting = r));
      this.waiting = null;
    }
  }

  /** A whole response at the front of the buffer, taken off it; null while incomplete. */
  private parse(bodiless: boolean): Reply | null {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const head = this.buf.subarray(0, end).toString('latin1');
    let at = end + 4;
    let body = '';
    const length = /\r\ncontent-length: *([0-9]+)/i.exec(head);
    if (bodiless) {
      // Nothing follows the head, whatever its Content-Length says.
    } else if (length !== null) {
      const n = Number(length[1]);
      if (this.buf.length < at + n) return null;
      body = this.buf.subarray(at, at + n).toString();
      at += n;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = this.buf.indexOf('\r\n', at);
        if (line < 0) return null;
        const n = parseInt(this.buf.subarray(at, line).toString(), 16);
        if (this.buf.length < line + 2 + n + 2) return null;
        body += this.buf.subarray(line + 2, line + 2 + n).toString();
        at = line + 2 + n + 2;
        if (n === 0) break;
      }
    }
    this.buf = this.buf.subarray(at);
    return { status: Number(head.split(' ')[1]), head, body };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = new Promise((r) => this.t.once('close', r));
    this.t.end();
    await done;
  }
}

/**
 * A new vault with entry `API` (field `token` = `value`), an agent with
 * room to read it often, and that agent's proxy: its process and CA.
 */
async function proxyFor(
  rig: Rig,
  ca: TestCa,
  value: string,
): Promise<{ proxy: ProxyProcess; ourCa: string }> {
  await rig.create();
  await rig.set('API', value, 'token');
  const token = await rig.addAgent('web', ['API'], ['--per-minute', '1000', '--per-hour', '1000']);
  const proxy = await startProxy(rig, token, ca);
  const ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], token)).trim(), 'utf8');
  return { proxy, ourCa };
}

describe('proxy: upstream connections', () => {
  const rig = new Rig();
  const secret = `upstream-secret-${hex(8)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  const target = () => `localhost:${up.port}`;
  const get = (path: string, auth = 'Bearer vault://API/token') =>
    `GET ${path} HTTP/1.1\r\nHost: ${target()}\r\nAuthorization: ${auth}\r\n\r\n`;

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    ({ proxy, ourCa } = await proxyFor(rig, ca, secret));
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('a tunnel sends its requests over one upstream connection, each filled and audited', async () => {
    const seen = up.seen.length;
    const fills = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    for (let i = 0; i < 5; i++) {
      t.send(get(`/one/${i}`));
      const r = await t.reply();
      assert.equal(r.status, 200);
      assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    }
    await t.close();
    const mine = up.seen.slice(seen);
    assert.deepEqual(
      mine.map((s) => s.url),
      [0, 1, 2, 3, 4].map((i) => `/one/${i}`),
    );
    assert.equal(new Set(mine.map((s) => s.connection)).size, 1, 'one upstream connection');
    for (const s of mine) assert.ok(s.rawHeaders.includes(`Bearer ${secret}`));
    const after = (await auditRecords(rig)).filter((r) => r.action === 'fill').length;
    assert.equal(after - fills, 5, 'each request resolved through the host');
  });

  test('a later tunnel to the same host picks up the idle connection of an ended one', async () => {
    const first = await Tunnel.open(proxy.port, target(), ourCa);
    first.send(get('/first'));
    assert.equal((await first.reply()).status, 200);
    await first.close();
    const second = await Tunnel.open(proxy.port, target(), ourCa);
    second.send(get('/second'));
    assert.equal((await second.reply()).status, 200);
    await second.close();
    const [a, b] = [up.seen.at(-2), up.seen.at(-1)];
    assert.equal(a?.url, '/first');
    assert.equal(b?.url, '/second');
    assert.equal(a?.connection, b?.connection);
  });

  test('two tunnels at once each get their own connection', async () => {
    const a = await Tunnel.open(proxy.port, target(), ourCa);
    const b = await Tunnel.open(proxy.port, target(), ourCa);
    a.send(get('/a/1'));
    b.send(get('/b/1'));
    await Promise.all([a.reply(), b.reply()]);
    a.send(get('/a/2'));
    b.send(get('/b/2'));
    await Promise.all([a.reply(), b.reply()]);
    await Promise.all([a.close(), b.close()]);
    const conn = (url: string) => up.seen.find((s) => s.url === url)?.connection;
    assert.equal(conn('/a/1'), conn('/a/2'));
    assert.equal(conn('/b/1'), conn('/b/2'));
    assert.notEqual(conn('/a/1'), conn('/b/1'));
  });

  test('replies keep their framing in one tunnel: HEAD, 204, 304, chunked, streamed and a 300 KiB body', async () => {
    const big = 'b'.repeat(300 * 1024);
    up.routes.set('/f/head', (_req, res) => {
      res.writeHead(200, { 'content-length': '1234', 'content-type': 'text/plain' });
      res.end();
    });
    up.routes.set('/f/204', (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    up.routes.set('/f/304', (_req, res) => {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    });
    up.routes.set('/f/chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part one, ');
      res.end('part two');
    });
    up.routes.set('/f/later', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('now, ');
      setTimeout(() => res.end('later'), 50);
    });
    up.routes.set('/f/big', (_req, res) => {
      res.writeHead(200, { 'content-length': String(big.length) });
      res.end(big);
    });
    const plain = (method: string, path: string) =>
      `${method} ${path} HTTP/1.1\r\nHost: ${target()}\r\n\r\n`;
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(plain('HEAD', '/f/head'));
    const head = await t.reply(true);
    assert.equal(head.status, 200);
    assert.match(head.head, /\r\ncontent-length: 1234(\r\n|$)/i);
    t.send(plain('GET', '/f/204'));
    assert.equal((await t.reply(true)).status, 204);
    t.send(plain('GET', '/f/304'));
    const notModified = await t.reply(true);
    assert.equal(notModified.status, 304);
    assert.match(notModified.head, /\r\netag: "v1"/i);
    t.send(plain('GET', '/f/chunked'));
    assert.equal((await t.reply()).body, 'part one, part two');
    t.send(plain('GET', '/f/later'));
    assert.equal((await t.reply()).body, 'now, later');
    t.send(plain('GET', '/f/big'));
    const b = await t.reply();
    assert.match(b.head, new RegExp(`\r\ncontent-length: ${big.length}(\r\n|$)`, 'i'));
    assert.equal(b.body, big);
    // Nothing was left over in between: the tunnel still answers the next request.
    t.send(plain('GET', '/f/chunked'));
    assert.equal((await t.reply()).body, 'part one, part two');
    await t.close();
  });

  test('request bodies go up whole, with a length or chunk-encoded, and the connection stays in use', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    const post = (path: string, framing: string, body: string) =>
      `POST ${path} HTTP/1.1\r\nHost: ${target()}\r\n${framing}\r\n\r\n${body}`;
    t.send(post('/body/length', 'Content-Length: 11', 'hello world'));
    assert.equal((await t.reply()).status, 200);
    t.send(
      post('/body/chunked', 'Transfer-Encoding: chunked', '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'),
    );
    assert.equal((await t.reply()).status, 200);
    await t.close();
    const seen = (url: string) => up.seen.find((s) => s.url === url);
    assert.equal(seen('/body/length')?.body.toString(), 'hello world');
    assert.equal(seen('/body/chunked')?.body.toString(), 'hello world');
    assert.equal(seen('/body/chunked')?.connection, seen('/body/length')?.connection);
  });

  test('pipelined requests in one tunnel are all answered, in order', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/pipe/1') + get('/pipe/2') + get('/pipe/3'));
    const replies = [await t.reply(), await t.reply(), await t.reply()];
    await t.close();
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 200, 200],
    );
    const urls = up.seen.map((s) => s.url).filter((u) => u.startsWith('/pipe/'));
    assert.deepEqual(urls.sort(), ['/pipe/1', '/pipe/2', '/pipe/3']);
  });

  test('a connection the upstream closed is not used again: the next request gets a new one', async () => {
    const conn = (url: string) => up.seen.find((s) => s.url === url)?.connection;
    up.routes.set('/bye', (_req, res) => {
      res.writeHead(200, { connection: 'close', 'content-type': 'text/plain' });
      res.end('bye\n');
    });
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/bye'));
    assert.equal((await t.reply()).body, 'bye\n');
    // Idle connections the upstream times out: the tunnel's next request still goes through.
    up.keepAliveTimeout = 100;
    t.send(get('/after-bye'));
    assert.equal((await t.reply()).status, 200);
    const idle = conn('/after-bye') ?? 0;
    while (!up.closed.has(idle)) await new Promise((r) => setTimeout(r, 50));
    t.send(get('/after-timeout'));
    assert.equal((await t.reply()).status, 200);
    await t.close();
    up.keepAliveTimeout = 5000;
    assert.notEqual(conn('/bye'), conn('/after-bye'));
    assert.notEqual(conn('/after-bye'), conn('/after-timeout'));
  });
});

/**
 * An upstream that answers with exactly the bytes a test scripts for each
 * request path, so the proxy meets responses node:http would never send.
 */
class RawUpstream {
  /** Connection number of each request, by path, in arrival order. */
  readonly seen: { path: string; connection: number }[] = [];
  private connections = 0;
  private readonly server: TlsServer;
  port = 0;

  constructor(
    ca: TestCa,
    private readonly script: (path: string, socket: TLSSocket) => void,
  ) {
    this.server = createTlsServer({ key: ca.key, cert: ca.cert }, (socket) => {
      const connection = ++this.connections;
      let buf = '';
      socket.on('error', () => socket.destroy());
      socket.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
          const path = buf.split(' ')[1] ?? '';
          buf = buf.slice(end + 4);
          this.seen.push({ path, connection });
          this.script(path, socket);
        }
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  connectionOf(path: string): number | undefined {
    return this.seen.find((s) => s.path === path)?.connection;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('proxy: responses node:http would not send', () => {
  const rig = new Rig();
  let raw: RawUpstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  const target = () => `localhost:${raw.port}`;
  const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${target()}\r\n\r\n`;
  const ok2 = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

  /** Responses served at /fuzz/<index>, each followed by the connection's end. */
  const fuzzed: Buffer[] = [];

  before(async () => {
    const ca = makeTestCa(rig.root);
    raw = new RawUpstream(ca, (path, socket) => {
      const f = /^\/fuzz\/([0-9]+)$/.exec(path);
      if (f !== null) {
        socket.write(fuzzed[Number(f[1])] ?? Buffer.alloc(0));
        setTimeout(() => socket.end(), 30);
      } else if (path === '/interim') socket.write(`HTTP/1.1 100 Continue\r\n\r\n${ok2}`);
      else if (path === '/extra') {
        socket.write(`${ok2}HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged`);
      } else if (path === '/until-close') {
        socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end');
      } else if (path === '/cut') {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..');
        setTimeout(() => socket.destroy(), 20);
      } else if (path === '/garbage') socket.write('HTPT/1.1 200 OK\r\n\r\n');
      else if (path === '/switch') {
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n',
        );
      } else socket.write(ok2);
    });
    await raw.listen();
    ({ proxy, ourCa } = await proxyFor(rig, ca, 'unused-value'));
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    await raw?.close();
    await rig.dispose();
  });

  test('an interim 100 Continue is not passed on; the final response is', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/interim'));
    const r = await t.reply();
    assert.equal(r.status, 200);
    assert.equal(r.body, 'ok');
    t.send(get('/after-interim'));
    assert.equal((await t.reply()).body, 'ok');
    await t.close();
    assert.equal(raw.connectionOf('/after-interim'), raw.connectionOf('/interim'));
  });

  test('bytes past the end of a response: the connection is dropped, never read as the next reply', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/extra'));
    assert.equal((await t.reply()).body, 'ok');
    t.send(get('/after-extra'));
    const next = await t.reply();
    await t.close();
    assert.equal(next.body, 'ok');
    assert.notEqual(raw.connectionOf('/after-extra'), raw.connectionOf('/extra'));
  });

  test('a body that ends with the connection is whole; the next request gets a new connection', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/until-close'));
    assert.equal((await t.reply()).body, 'until the end');
    t.send(get('/after-close'));
    assert.equal((await t.reply()).body, 'ok');
    await t.close();
    assert.notEqual(raw.connectionOf('/after-close'), raw.connectionOf('/until-close'));
  });

  test('an upstream that dies mid-body: the client is cut off, never handed a short body as whole', async () => {
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/cut'));
    await assert.rejects(t.reply(), /closed with/);
  });

  test('a malformed response or an unasked 101: 502 VLT-3008', async () => {
    for (const path of ['/garbage', '/switch']) {
      const t = await Tunnel.open(proxy.port, target(), ourCa);
      t.send(get(path));
      const r = await t.reply();
      await t.close();
      assert.equal(r.status, 502, path);
      assert.match(r.head, /\r\nx-vault-error: VLT-3008/i, path);
    }
  });
  test('fuzz: mangled responses get a reply, a 502 or a cut connection, and the proxy stays up', async () => {
    const base = [
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
      'HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end',
    ].map((t) => Buffer.from(t, 'latin1'));
    const mangled = fc
      .tuple(
        fc.constantFrom(...base),
        fc.array(fc.tuple(fc.nat(200), fc.nat(4), fc.uint8Array({ minLength: 0, maxLength: 8 })), {
          maxLength: 4,
        }),
      )
      .map(([b, edits]) => {
        let out = b;
        // Each edit replaces `cut` bytes at `at` with random bytes (insertion, deletion, change).
        for (const [at, cut, bytes] of edits) {
          const i = at % (out.length + 1);
          out = Buffer.concat([out.subarray(0, i), Buffer.from(bytes), out.subarray(i + cut)]);
        }
        return out;
      });
    const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 60);
    const cases = fc.sample(mangled, { numRuns: runs, seed: Number(process.env.FC_SEED ?? 1983) });
    for (const c of cases) fuzzed.push(c);
    for (let i = 0; i < cases.length; i++) {
      const t = await Tunnel.open(proxy.port, target(), ourCa);
      t.send(get(`/fuzz/${i}`));
      const r = await t.reply().catch((err: Error) => err);
      await t.close();
      const shown = JSON.stringify(cases[i]?.toString('latin1'));
      if (r instanceof Error) {
        assert.match(r.message, /^closed with/, shown);
        continue;
      }
      assert.ok(r.status >= 100 && r.status <= 999, shown);
      if (r.status === 502 && /x-vault-error/i.test(r.head)) {
        assert.match(r.head, /\r\nx-vault-error: VLT-3008/i, shown);
      }
    }
    assert.equal(proxy.proc.exitCode, null);
    const t = await Tunnel.open(proxy.port, target(), ourCa);
    t.send(get('/after-fuzz'));
    assert.equal((await t.reply()).body, 'ok');
    await t.close();
  });
});
