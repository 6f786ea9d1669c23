// A request the proxy sends again, after a kept-alive upstream connection
// closed under it (proxy-keepalive.test.ts), goes to the address that
// connection reached, never to another address of the same name: the value
// was filled for the first attempt's destination, and an upstream that
// controls the name could otherwise steer the copy to a machine of its choice.
//
// The proxy runs under bwrap with an /etc/hosts of the test's, in which one
// name has two loopback addresses, each an upstream of its own on the same
// port. The one the first request reaches closes the kept connection under
// the next; the other records everything it receives, to look for the value
// in. Then the same with the first address refusing new connections, and
// with the name moved to the other address between the two attempts.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  absoluteExchange,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const NAME = 'twin.vault-test';
const FIRST = '127.0.0.2';
const SECOND = '127.0.0.3';

/** One request head as it reached an address, and what became of it. */
interface Arrival {
  readonly path: string;
  readonly connection: number;
  readonly authorization: string;
  /** The connection was closed under it, unanswered. */
  readonly dropped: boolean;
}

/**
 * One address of the name (TLS, or plain with `ca` null). Answers each
 * request 200 with keep-alive, except one for a `/stale` path on a
 * connection that has carried a request before: that connection is closed
 * as the request arrives, no byte of a reply, as a server whose idle timer
 * fires just then. Keeps every byte it received (decrypted).
 */
class Address {
  readonly arrivals: Arrival[] = [];
  received = '';
  connections = 0;
  port = 0;
  readonly #server;
  readonly #open = new Set<Socket>();

  constructor(
    readonly address: string,
    ca: TestCa | null,
  ) {
    const serve = (socket: Socket) => this.#serve(socket);
    this.#server =
      ca === null ? createNetServer(serve) : createTlsServer({ key: ca.key, cert: ca.cert }, serve);
  }

  #serve(socket: Socket): void {
    const connection = ++this.connections;
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    socket.on('error', () => socket.destroy());
    let earlier = 0;
    let buf = '';
    socket.on('data', (d: Buffer) => {
      this.received += d.toString('latin1');
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        const path = head.split(' ')[1] ?? '';
        const authorization = /\r\nauthorization: *([^\r]*)/i.exec(head)?.[1] ?? '';
        const dropped = earlier > 0 && path.startsWith('/stale');
        this.arrivals.push({ path, connection, authorization, dropped });
        if (dropped) return void socket.destroy();
        earlier++;
        const body = `${this.address} got: ${authorization}\n`;
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      }
    });
  }

  /** Listens on this address, on `port` (0: any). */
  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, this.address, () => resolve());
    });
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** Takes no more connections; those open stay open. */
  refuse(): void {
    this.#server.close();
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

/** What the test does to the name's first address between the two attempts. */
type Twist = 'nothing' | 'refuses new connections' | 'name moved to the other address';

describe('proxy: a request sent again goes to the address its first attempt reached', () => {
  const rig = new Rig();
  const secret = `twin-secret-${hex(12)}`;
  const hosts = join(rig.root, 'hosts');
  const bothAddresses = `${FIRST} ${NAME}\n${SECOND} ${NAME}\n`;
  let ca: TestCa;
  let proxy: ProxyProcess;
  let ourCa: string;
  let token: string;
  const started: Address[] = [];

  before(async () => {
    ca = makeTestCa(rig.root, [NAME]);
    await rig.create();
    await rig.set('API', secret, 'token');
    ok(await rig.owner(['entry', 'hosts', 'API', NAME]));
    token = await rig.addAgent('web', ['API'], ['--per-minute', '1000', '--per-hour', '1000']);
    writeFileSync(hosts, bothAddresses);
    const wrap = ['bwrap', '--dev-bind', '/', '/', '--ro-bind', hosts, '/etc/hosts'];
    proxy = await startProxy(rig, token, ca, {}, [...wrap, '--die-with-parent', '--']);
    ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], token)).trim(), 'utf8');
  });
  after(async () => {
    if (process.env.DEBUG_PROXY) console.error(proxy?.stderr());
    await proxy?.stop();
    for (const a of started) await a.close();
    await rig.dispose();
  });

  /** The name's two addresses, listening on one port (TLS, or plain with `tls` false). */
  async function twins(tls: boolean): Promise<[Address, Address]> {
    for (let tries = 0; ; tries++) {
      const first = new Address(FIRST, tls ? ca : null);
      const second = new Address(SECOND, tls ? ca : null);
      await first.listen(0);
      started.push(first);
      try {
        await second.listen(first.port);
        started.push(second);
        return [first, second];
      } catch (err) {
        // The port was taken on the second address: another pair.
        if (tries >= 5) throw err;
      }
    }
  }

  const fills = async () =>
    (await auditRecords(rig)).filter((r) => r.action === 'fill' && r.outcome === 'ok').length;

  const auth = () =>
    `Proxy-Authorization: Basic ${Buffer.from(`vault:${token}`).toString('base64')}\r\n`;

  const get = (host: string, target: string) =>
    `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer vault://API/token\r\n\r\n`;

  /**
   * The first request answered on one address (`near`: whichever the proxy
   * reached), `twist`, then `/stale`, which `near` closes the kept connection
   * under. `send` sends one request (a path) and resolves with the reply.
   */
  async function staleAfter(
    twist: Twist,
    [one, two]: [Address, Address],
    send: (path: string) => Promise<{ status: number; body: string }>,
  ): Promise<void> {
    const first = await send('/first');
    assert.equal(first.status, 200, first.body);
    const near = one.of('/first').length > 0 ? one : two;
    const far = near === one ? two : one;
    // Node's connect may have opened (and dropped, request unsent) a connection
    // to the other address too, when the first was slow to answer (happy eyeballs).
    const farBefore = far.connections;
    assert.equal(far.arrivals.length, 0, 'the first request went to one address');
    if (twist === 'refuses new connections') near.refuse();
    if (twist === 'name moved to the other address')
      writeFileSync(hosts, `${far.address} ${NAME}\n`);
    const before = await fills();
    try {
      const r = await send('/stale');
      if (twist === 'refuses new connections') {
        assert.equal(r.status, 502, r.body);
        assert.match(r.body, /VLT-3008/);
        assert.deepEqual(
          near.of('/stale').map((a) => a.dropped),
          [true],
          twist,
        );
      } else {
        assert.equal(r.status, 200, r.body);
        assert.equal(r.body, `${near.address} got: Bearer vault://API/token\n`, twist);
        const copies = near.of('/stale');
        assert.deepEqual(
          copies.map((a) => a.dropped),
          [true, false],
          twist,
        );
        assert.notEqual(
          copies[0]?.connection,
          copies[1]?.connection,
          'the retry on a new connection',
        );
      }
      for (const a of near.arrivals) assert.equal(a.authorization, `Bearer ${secret}`);
      assert.equal(far.connections, farBefore, `${twist}: no connection to the other address`);
      assert.deepEqual(far.arrivals, [], `${twist}: no request reached the other address`);
      assert.ok(!far.received.includes(secret), `${twist}: the value reached the other address`);
      assert.equal((await fills()) - before, 1, `${twist}: one fill record for one request`);
    } finally {
      writeFileSync(hosts, bothAddresses);
    }
  }

  const TWISTS: readonly Twist[] = [
    'nothing',
    'refuses new connections',
    'name moved to the other address',
  ];

  test('in a tunnel: the retry goes to the address the kept connection reached, or is 502; never to the name’s other address', async () => {
    for (const twist of TWISTS) {
      const pair = await twins(true);
      const target = `${NAME}:${pair[0].port}`;
      const t = await Tunnel.open(proxy.port, target, ourCa, token);
      await staleAfter(twist, pair, async (path) => {
        t.send(get(target, path));
        return t.reply();
      });
      await t.close();
    }
  });

  test('absolute-form https:// without a tunnel: the retry goes to the address the pooled connection reached, or is 502; never to the name’s other address', async () => {
    for (const twist of TWISTS) {
      const pair = await twins(true);
      const host = `${NAME}:${pair[0].port}`;
      await staleAfter(twist, pair, (path) =>
        absoluteExchange(
          proxy.port,
          get(host, `https://${host}${path}`).replace('\r\n', `\r\n${auth()}`),
        ),
      );
    }
  });

  test('absolute-form plain HTTP: the retry goes to the address the name was judged by, or is 502; never to the name’s other address', async () => {
    // A moved name is judged again for the next request: a new connection, no retry.
    for (const twist of TWISTS.filter((w) => w !== 'name moved to the other address')) {
      const pair = await twins(false);
      const host = `${NAME}:${pair[0].port}`;
      await staleAfter(twist, pair, (path) =>
        absoluteExchange(
          proxy.port,
          get(host, `http://${host}${path}`).replace('\r\n', `\r\n${auth()}`),
        ),
      );
    }
  });
});
