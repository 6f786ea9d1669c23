// A kept-alive upstream connection that the upstream closes as the proxy
// sends on it (its idle timeout fired while the request was on its way).
// The attacks an injected agent that runs the upstream would try next: make
// the proxy replay a request that is not safe to send twice, make it retry
// for ever, or make it send the filled value somewhere else; each is a test
// beside the retry that answers the stale connection.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  absoluteExchange,
  proxyBench,
  Upstream,
  type ProxyBench,
} from '../support/proxy.js';
import { Rig } from '../support/rig.js';

/** One request head as it reached the upstream, and what became of it. */
interface Arrival {
  readonly method: string;
  readonly path: string;
  readonly connection: number;
  /** The connection's earlier requests answered. */
  readonly earlier: number;
  readonly authorization: string;
  readonly dropped: boolean;
}

/**
 * An upstream (TLS, or plain with `ca` null) that answers each request with
 * 200 and keep-alive, unless `drop` says to close the connection as the
 * request arrives: no byte of a response, the request unanswered, as a
 * server whose idle timer fires just as the request comes in; or, when it
 * returns bytes, those bytes (the start of a reply), then the close.
 */
class ClosingUpstream {
  readonly arrivals: Arrival[] = [];
  port = 0;
  #connections = 0;
  readonly #server;
  readonly #open = new Set<Socket>();

  constructor(
    ca: { key: string; cert: string } | null,
    private readonly drop: (a: Omit<Arrival, 'dropped'>, idleMs: number) => boolean | string,
  ) {
    const serve = (socket: Socket) => this.#serve(socket);
    this.#server =
      ca === null ? createNetServer(serve) : createTlsServer({ key: ca.key, cert: ca.cert }, serve);
  }

  #serve(socket: Socket): void {
    const connection = ++this.#connections;
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    socket.on('error', () => socket.destroy());
    let earlier = 0;
    let idleSince = Date.now();
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.slice(0, end);
      const [method = '', path = ''] = head.split(' ');
      const authorization = /\r\nauthorization: *([^\r]*)/i.exec(head)?.[1] ?? '';
      const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1] ?? 0);
      const seen = { method, path, connection, earlier, authorization };
      const drop = this.drop(seen, Date.now() - idleSince);
      if (drop !== false) {
        this.arrivals.push({ ...seen, dropped: true });
        if (drop === true) socket.destroy();
        else socket.end(drop, 'latin1');
        return;
      }
      // Wait for the whole body before answering, as a server reading it would.
      if (buf.length < end + 4 + length) return;
      buf = buf.slice(end + 4 + length);
      this.arrivals.push({ ...seen, dropped: false });
      earlier++;
      const body = `you sent: ${authorization}\n`;
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      idleSince = Date.now();
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** Arrivals of `path`. */
  of(path: string): Arrival[] {
    return this.arrivals.filter((a) => a.path === path);
  }

  close(): Promise<void> {
    for (const s of this.#open) s.destroy();
    return new Promise((r) => this.#server.close(() => r()));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('proxy: a kept-alive upstream connection closed as a request goes out', () => {
  const rig = new Rig();
  const secret = `keepalive-secret-${hex(8)}`;
  let bench: ProxyBench;
  let ourCa: string;
  const closing: ClosingUpstream[] = [];

  before(async () => {
    bench = await proxyBench(rig, async () => {
      await rig.create();
      await rig.set('API', secret, 'token');
      return rig.addAgent('web', ['API'], ['--per-minute', '1000', '--per-hour', '1000']);
    });
    ourCa = readFileSync(bench.ourCa, 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(bench?.proxy.stderr());
    for (const u of closing) await u.close();
    await bench?.close();
    await rig.dispose();
  });

  /** A closing upstream under the test CA (or plain with `tls` false), listening. */
  async function upstream(
    drop: ConstructorParameters<typeof ClosingUpstream>[1],
    tls = true,
  ): Promise<ClosingUpstream> {
    const u = new ClosingUpstream(tls ? bench.ca : null, drop);
    await u.listen();
    closing.push(u);
    return u;
  }

  const fills = async () =>
    (await auditRecords(rig)).filter((r) => r.action === 'fill' && r.outcome === 'ok').length;

  const request = (method: string, target: string, path: string, body = '') =>
    `${method} ${path} HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer vault://API/token\r\n` +
    (body === '' ? '' : `Content-Length: ${body.length}\r\n`) +
    `\r\n${body}`;

  test('a request after the upstream keep-alive timeout (1 s) is answered, sent once more on a new connection, filled and audited once', async () => {
    // The upstream's 1 s idle timer fires as the request arrives after 1.2 s idle.
    const up = await upstream((a, idleMs) => a.earlier > 0 && idleMs >= 1000);
    const target = `localhost:${up.port}`;
    const t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
    t.send(request('GET', target, '/first'));
    assert.equal((await t.reply()).status, 200);
    const before = await fills();
    await sleep(1200);
    t.send(request('GET', target, '/after-idle'));
    const r = await t.reply();
    await t.close();
    assert.equal(r.status, 200, r.body);
    assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    const copies = up.of('/after-idle');
    assert.deepEqual(
      copies.map((a) => a.dropped),
      [true, false],
      'the upstream answered exactly one request (the copy it closed on was never read)',
    );
    const [stale, fresh] = copies as [Arrival, Arrival];
    assert.equal(stale.connection, up.of('/first')[0]?.connection, 'first try on the kept one');
    assert.notEqual(fresh.connection, stale.connection, 'the retry on a new connection');
    assert.equal(fresh.earlier, 0);
    for (const a of copies) assert.equal(a.authorization, `Bearer ${secret}`);
    assert.equal((await fills()) - before, 1, 'one fill record for one client request');
  });

  test('a connection the upstream really timed out (Node, 1 s) is not used again', async () => {
    const up = await Upstream.start(bench.ca);
    try {
      up.keepAliveTimeout = 1000;
      const target = `localhost:${up.port}`;
      const t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
      t.send(request('GET', target, '/node/first'));
      assert.equal((await t.reply()).status, 200);
      await sleep(1200);
      t.send(request('GET', target, '/node/after-idle'));
      const r = await t.reply();
      await t.close();
      assert.equal(r.status, 200, r.body);
      const mine = up.seen.filter((s) => s.url.startsWith('/node/'));
      assert.deepEqual(
        mine.map((s) => s.url),
        ['/node/first', '/node/after-idle'],
      );
      assert.notEqual(mine[0]?.connection, mine[1]?.connection);
    } finally {
      await up.close();
    }
  });

  test('a POST with a body on a connection the upstream closes mid-request is not sent again: 502 VLT-3008', async () => {
    const up = await upstream((a, idleMs) => a.earlier > 0 && idleMs >= 1000);
    const target = `localhost:${up.port}`;
    const t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
    t.send(request('GET', target, '/before-post'));
    assert.equal((await t.reply()).status, 200);
    await sleep(1200);
    t.send(request('POST', target, '/pay', 'amount=100'));
    const r = await t.reply();
    assert.equal(r.status, 502);
    assert.match(r.body, /VLT-3008/);
    await t.close();
    assert.equal(up.of('/pay').length, 1, 'the upstream saw the POST once, and only once');
  });

  test('an upstream that closes every connection it reuses, and the retry too: one retry at most, then 502, one fill', async () => {
    // Answers the very first request only: every later one, on a kept
    // connection or on a new one, has its connection closed under it.
    let answered = 0;
    const up = await upstream(() => answered++ > 0);
    const target = `localhost:${up.port}`;
    const first = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
    first.send(request('GET', target, '/only'));
    assert.equal((await first.reply()).status, 200);
    const before = await fills();
    // A 502 ends its tunnel (the proxy closes after a refusal): a new tunnel each time.
    let t = first;
    for (let i = 0; i < 3; i++) {
      if (i > 0) t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
      t.send(request('GET', target, `/loop/${i}`));
      const r = await t.reply();
      assert.equal(r.status, 502, r.body);
      assert.match(r.body, /VLT-3008/);
      await t.close();
    }
    // The first goes on the kept connection, then once on a new one; the
    // later ones find no kept connection (each failed one is gone), so they
    // go on a new one and are not sent again.
    assert.deepEqual(
      [0, 1, 2].map((i) => up.of(`/loop/${i}`).length),
      [2, 1, 1],
    );
    const loop0 = up.of('/loop/0');
    assert.notEqual(loop0[0]?.connection, loop0[1]?.connection);
    for (const a of up.arrivals) assert.equal(a.authorization, `Bearer ${secret}`);
    assert.equal((await fills()) - before, 3, 'one fill record per client request, retries none');
  });

  test('absolute-form plain HTTP to this machine: a pooled connection closed under a GET is retried once, a DELETE with a body is not', async () => {
    const up = await upstream((a, idleMs) => a.earlier > 0 && idleMs >= 1000, false);
    const origin = `http://127.0.0.1:${up.port}`;
    const { connect } = await import('node:net');
    const client = connect(bench.proxy.port, '127.0.0.1');
    let buf = '';
    client.on('data', (c: Buffer) => (buf += c.toString('latin1')));
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`vault:${bench.token}`).toString('base64')}\r\n`;
    const send = async (method: string, path: string, body = '') => {
      buf = '';
      client.write(
        request(method, `127.0.0.1:${up.port}`, `${origin}${path}`, body).replace(
          '\r\n',
          `\r\n${auth}`,
        ),
      );
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *([0-9]+)/i.exec(buf)?.[1];
        if (end >= 0 && length !== undefined && buf.length >= end + 4 + Number(length)) break;
        await sleep(10);
      }
      return { status: Number(buf.split(' ')[1]), body: buf.slice(buf.indexOf('\r\n\r\n') + 4) };
    };
    assert.equal((await send('GET', '/plain/first')).status, 200);
    const before = await fills();
    await sleep(1200);
    const r = await send('GET', '/plain/after-idle');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(
      up.of('/plain/after-idle').map((a) => a.dropped),
      [true, false],
    );
    assert.equal((await fills()) - before, 1);
    // The retry's connection was its own, not pooled: a pooled one again first.
    assert.equal((await send('GET', '/plain/warm')).status, 200);
    await sleep(1200);
    const d = await send('DELETE', '/plain/thing', 'why=because');
    assert.equal(d.status, 502, d.body);
    assert.equal(up.of('/plain/thing').length, 1);
    client.destroy();
  });
  test('absolute-form https:// without a tunnel: a GET on a pooled connection closed under it goes once more, filled once; a PUT with a body never twice; a retry closed too is 502', async () => {
    // Closes a kept connection under /stale/get, and every connection under
    // /always and /stale/put (a second copy of the PUT would be closed too, and counted).
    const up = await upstream((a) =>
      a.path === '/stale/get' ? a.earlier > 0 : ['/always', '/stale/put'].includes(a.path),
    );
    const host = `127.0.0.1:${up.port}`;
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`vault:${bench.token}`).toString('base64')}\r\n`;
    const send = (method: string, path: string, body = '') =>
      absoluteExchange(
        bench.proxy.port,
        request(method, host, `https://${host}${path}`, body).replace('\r\n', `\r\n${auth}`),
      );
    // Each step after a warm request: the retry's connection is its own, never pooled.
    assert.equal((await send('GET', '/warm')).status, 200);
    let before = await fills();
    const r = await send('GET', '/stale/get');
    assert.equal(r.status, 200, r.body);
    assert.equal(r.body, 'you sent: Bearer vault://API/token\n');
    const copies = up.of('/stale/get');
    assert.deepEqual(
      copies.map((a) => a.dropped),
      [true, false],
    );
    assert.notEqual(copies[0]?.connection, copies[1]?.connection);
    assert.equal((await fills()) - before, 1, 'one fill record for one client request');
    assert.equal((await send('GET', '/warm')).status, 200);
    const put = await send('PUT', '/stale/put', 'state=final');
    assert.equal(put.status, 502, put.body);
    assert.match(put.body, /VLT-3008/);
    assert.equal(up.of('/stale/put').length, 1, 'a request with a body is never sent twice');
    assert.equal((await send('GET', '/warm')).status, 200);
    before = await fills();
    const always = await send('GET', '/always');
    assert.equal(always.status, 502, always.body);
    assert.equal(up.of('/always').length, 2, 'one retry at most');
    assert.equal((await fills()) - before, 1);
    for (const a of up.arrivals) assert.equal(a.authorization, `Bearer ${secret}`);
  });

  /**
   * What a hostile upstream does with the one retry: a reply begun (a 1xx,
   * part of a head) then the close, on the kept connection or on the new one.
   * A reply begun says the upstream read the request: it is not sent again.
   */
  const INTERIM = 'HTTP/1.1 100 Continue\r\n\r\n';
  const PART = 'HTTP/1.1 200 OK\r\nContent-Le';
  const BEGUN: readonly { what: string; kept: true | string; fresh: string; copies: number }[] = [
    { what: 'a 1xx then the close, on the kept connection', kept: INTERIM, fresh: '', copies: 1 },
    { what: 'part of a head then the close, on the kept one', kept: PART, fresh: '', copies: 1 },
    {
      what: 'the close, then the retry answered a 1xx and closed',
      kept: true,
      fresh: INTERIM,
      copies: 2,
    },
    {
      what: 'the close, then part of a head and the close on the retry',
      kept: true,
      fresh: PART,
      copies: 2,
    },
  ];

  /** An upstream that answers `/warm`, and `/begun` as `c` says. */
  const begun = (c: (typeof BEGUN)[number], tls = true) =>
    upstream((a) => a.path === '/begun' && (a.earlier > 0 ? c.kept : c.fresh || false), tls);

  test('in a tunnel: a reply begun (1xx, part of a head) then closed is never followed by another copy: 502, one fill', async () => {
    for (const c of BEGUN) {
      const up = await begun(c);
      const target = `localhost:${up.port}`;
      const t = await Tunnel.open(bench.proxy.port, target, ourCa, bench.token);
      t.send(request('GET', target, '/warm'));
      assert.equal((await t.reply()).status, 200, c.what);
      const before = await fills();
      t.send(request('GET', target, '/begun'));
      const r = await t.reply();
      await t.close();
      assert.equal(r.status, 502, `${c.what}: ${r.body}`);
      assert.match(r.body, /VLT-3008/, c.what);
      assert.equal(up.of('/begun').length, c.copies, c.what);
      assert.equal((await fills()) - before, 1, c.what);
    }
  });

  test('absolute-form https:// and http://: a reply begun (1xx, part of a head) then closed is never followed by another copy: 502, one fill', async () => {
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`vault:${bench.token}`).toString('base64')}\r\n`;
    for (const tls of [true, false]) {
      for (const c of BEGUN) {
        const up = await begun(c, tls);
        const host = `127.0.0.1:${up.port}`;
        const send = (path: string) =>
          absoluteExchange(
            bench.proxy.port,
            request('GET', host, `${tls ? 'https' : 'http'}://${host}${path}`).replace(
              '\r\n',
              `\r\n${auth}`,
            ),
          );
        const what = `${tls ? 'https' : 'http'}: ${c.what}`;
        assert.equal((await send('/warm')).status, 200, what);
        const before = await fills();
        const r = await send('/begun');
        assert.equal(r.status, 502, `${what}: ${r.body}`);
        assert.match(r.body, /VLT-3008/, what);
        assert.equal(up.of('/begun').length, c.copies, what);
        assert.equal((await fills()) - before, 1, what);
      }
    }
  });
});
