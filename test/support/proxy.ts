/**
 * What the proxy tests share: a test CA and a local HTTPS upstream that
 * records exactly what reached it, and the real `vault-cli proxy` process.
 * The upstream's certificate comes from openssl, not from the proxy's own
 * certificate code, so a bug there cannot cancel itself out.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer, type Server } from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { fate, ok, type Result, type Rig } from './rig.js';

export interface TestCa {
  readonly caFile: string;
  readonly key: string;
  readonly cert: string;
}

/**
 * A CA and a server certificate for localhost and 127.0.0.1 (and the DNS
 * `names` given), made by openssl in `dir`.
 */
export function makeTestCa(dir: string, names: readonly string[] = []): TestCa {
  const f = (n: string) => join(dir, n);
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(
    ['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2']
      .concat(['-subj', '/CN=vault-cli test upstream CA'])
      .concat([
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign',
      ]),
  );
  run(['req', ...ec, '-keyout', f('srv.key'), '-out', f('srv.csr'), '-subj', '/CN=localhost']);
  writeFileSync(
    f('ext'),
    `subjectAltName=${['DNS:localhost', 'IP:127.0.0.1', ...names.map((n) => `DNS:${n}`)].join(',')}\n` +
      'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  run(
    ['x509', '-req', '-in', f('srv.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key')].concat([
      '-CAcreateserial',
      '-out',
      f('srv.pem'),
      '-days',
      '2',
      '-extfile',
      f('ext'),
    ]),
  );
  return {
    caFile: f('ca.pem'),
    key: readFileSync(f('srv.key'), 'utf8'),
    cert: readFileSync(f('srv.pem'), 'utf8'),
  };
}

/** One request as the upstream saw it. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[];
  readonly bodyBytes: number;
  readonly body: Buffer;
  /** Which connection it came on: 1 for the upstream's first, and so on. */
  readonly connection: number;
}

export type Route = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/**
 * A local upstream (HTTPS, or plain HTTP with `tls: false`). Default route:
 * 200 with the request's Authorization echoed in the body and a header, as
 * a reflecting server would. Bodies beyond 1 MiB are counted, not kept.
 */
export class Upstream {
  readonly seen: Seen[] = [];
  readonly routes = new Map<string, Route>();
  onUpgrade: ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) | null = null;
  private server!: Server | ReturnType<typeof createHttpServer>;
  port = 0;
  /** Connections accepted so far; the numbers of those closed. */
  connections = 0;
  readonly closed = new Set<number>();
  private readonly ids = new WeakMap<object, number>();
  /** Open connections, upgraded ones included (the server forgets those). */
  private readonly open = new Set<Duplex>();

  static async start(ca: TestCa | null): Promise<Upstream> {
    const u = new Upstream();
    const handler = (req: IncomingMessage, res: ServerResponse) => u.handle(req, res);
    u.server =
      ca === null
        ? createHttpServer(handler)
        : createServer({ key: ca.key, cert: ca.cert }, handler);
    u.server.on(ca === null ? 'connection' : 'secureConnection', (socket: Duplex) => {
      const id = ++u.connections;
      u.ids.set(socket, id);
      u.open.add(socket);
      socket.once('close', () => {
        u.closed.add(id);
        u.open.delete(socket);
      });
    });
    u.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      u.seen.push({
        connection: u.ids.get(req.socket) ?? 0,
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        bodyBytes: 0,
        body: Buffer.alloc(0),
      });
      if (u.onUpgrade) u.onUpgrade(req, socket, head);
      else socket.destroy();
    });
    await new Promise<void>((r) => u.server.listen(0, '127.0.0.1', r));
    u.port = (u.server.address() as AddressInfo).port;
    return u;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      this.seen.push({
        connection: this.ids.get(req.socket) ?? 0,
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        bodyBytes: n,
        body,
      });
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const route = [...this.routes].find(([p]) => path === p || path.startsWith(`${p}/`))?.[1];
      if (route) return route(req, res, body);
      const auth = req.headers.authorization ?? '';
      res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': auth });
      res.end(`you sent: ${auth}\n`);
    });
  }

  /** Idle connections close after `ms` (Node's default is 5 s). */
  set keepAliveTimeout(ms: number) {
    this.server.keepAliveTimeout = ms;
    // Node 24 otherwise waits 1 s more than it announces (keepAliveTimeoutBuffer).
    (this.server as { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer = 0;
  }

  /** Every value of header `name` (any case) the upstream received, in all requests. */
  header(name: string): string[] {
    const out: string[] = [];
    for (const s of this.seen) {
      for (let i = 0; i + 1 < s.rawHeaders.length; i += 2) {
        if (s.rawHeaders[i]?.toLowerCase() === name.toLowerCase())
          out.push(s.rawHeaders[i + 1] as string);
      }
    }
    return out;
  }

  /**
   * Stops listening and ends every connection. An upgraded connection is no
   * longer the server's: one a test left unread never sees its peer go, and
   * `server.close` would wait for it for ever.
   */
  close(): Promise<void> {
    this.server.closeAllConnections();
    for (const s of this.open) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** The `Sec-WebSocket-Accept` for a key (RFC 6455). */
export function wsAccept(key: string): string {
  return createHash('sha1')
    .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
    .digest('base64');
}

/** A running `vault-cli proxy`. */
export interface ProxyProcess {
  readonly port: number;
  readonly url: string;
  readonly proc: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const { createServer: net } = await import('node:net');
  const s = net();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Starts `vault-cli proxy` on a free port as the agent with `token`, trusting
 * the test CA upstream. `wrap`: a command it runs under (bwrap with its
 * arguments, ending in `--`), which must take the proxy down when it ends.
 */
export async function startProxy(
  rig: Rig,
  token: string,
  ca: TestCa | null,
  more: NodeJS.ProcessEnv = {},
  wrap: readonly string[] = [],
): Promise<ProxyProcess> {
  const env: NodeJS.ProcessEnv = { ...rig.env, VAULT_TOKEN: token, ...more };
  delete env.VAULT_PASSPHRASE_FILE;
  const port = await freePort();
  const args = [
    rig.cli,
    'proxy',
    '--port',
    String(port),
    ...(ca ? ['--upstream-ca', ca.caFile] : []),
  ];
  const [cmd, ...pre] = [...wrap, process.execPath];
  const proc = spawn(cmd as string, [...pre, ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /proxy on http:\/\/127\.0\.0\.1:([0-9]+)/.exec(err);
      if (m) {
        const port = Number(m[1]);
        resolve({
          port,
          url: `http://127.0.0.1:${port}`,
          proc,
          stderr: () => err,
          stop: () =>
            new Promise<void>((done) => {
              if (proc.exitCode !== null) return done();
              proc.once('exit', () => done());
              proc.kill('SIGTERM');
            }),
        });
      }
    });
    proc.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${err}`)));
  });
}

/** What most proxy tests stand on: an HTTPS upstream under a test CA, and an agent's proxy. */
export interface ProxyBench {
  readonly ca: TestCa;
  readonly up: Upstream;
  readonly proxy: ProxyProcess;
  /** The proxy's CA certificate file, as `vault-cli proxy ca` names it to the agent. */
  readonly ourCa: string;
  /** The agent's token the proxy runs with. */
  readonly token: string;
  /** Stops the proxy and the upstream; the rig stays the caller's to dispose. */
  close(): Promise<void>;
}

/**
 * A test CA and an upstream under it; then `fill` creates the rig's vault and
 * returns an agent's token; then `vault-cli proxy` as that agent. What was
 * started is stopped again if a later step fails.
 */
export async function proxyBench(rig: Rig, fill: () => Promise<string>): Promise<ProxyBench> {
  const ca = makeTestCa(rig.root);
  const up = await Upstream.start(ca);
  let proxy: ProxyProcess | undefined;
  const close = async () => {
    await proxy?.stop();
    await up.close();
  };
  try {
    const token = await fill();
    proxy = await startProxy(rig, token, ca);
    const ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    return { ca, up, proxy, ourCa, token, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Real curl with `args` in `env` alone (nothing of the test's environment); its fate as data. */
export function curl(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return fate(spawn('curl', [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Resident set of a process now (VmRSS), in bytes. */
export function rss(pid: number): number {
  const m = /VmRSS:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Peak resident set of a process (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const m = /VmHWM:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** A raw CONNECT through the proxy; resolves with the socket once the tunnel is up. */
export function connectTunnel(
  proxyPort: number,
  target: string,
): Promise<{ socket: Socket; reply: string }> {
  return new Promise((resolve, reject) => {
    void import('node:net').then(({ connect }) => {
      const s = connect(proxyPort, '127.0.0.1', () =>
        s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
      );
      let buf = '';
      const onData = (c: Buffer) => {
        buf += c.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        s.off('data', onData);
        resolve({ socket: s, reply: buf.slice(0, end + 4) });
      };
      s.on('data', onData);
      s.on('error', reject);
    });
  });
}

/**
 * Raw bytes through a CONNECT tunnel and TLS to `host:port` (trusting `caPem`,
 * the proxy's CA): everything the proxy sends back until it closes.
 */
export async function tunnelExchange(
  proxyPort: number,
  target: string,
  caPem: string,
  raw: string | Buffer,
): Promise<string> {
  const { socket } = await connectTunnel(proxyPort, target);
  const { connect } = await import('node:tls');
  const host = target.replace(/:[0-9]+$/, '');
  return new Promise((resolve, reject) => {
    const t = connect({ socket, servername: host, ca: caPem }, () => t.write(raw));
    let out = '';
    t.on('data', (c: Buffer) => (out += c.toString('latin1')));
    t.on('end', () => resolve(out));
    t.on('close', () => resolve(out));
    t.on('error', reject);
  });
}

/**
 * One request in absolute form (`raw`, whole) to the proxy, on a client
 * connection of its own: the status and body of the reply (framed by
 * Content-Length), or of what came before the proxy closed.
 */
export function absoluteExchange(
  proxyPort: number,
  raw: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    void import('node:net').then(({ connect }) => {
      const s = connect(proxyPort, '127.0.0.1', () => s.write(raw));
      let out = '';
      s.on('data', (c: Buffer) => {
        out += c.toString('latin1');
        const end = out.indexOf('\r\n\r\n');
        const length = /\r\ncontent-length: *([0-9]+)/i.exec(out);
        if (end >= 0 && length !== null && out.length >= end + 4 + Number(length[1])) s.end();
      });
      s.on('close', () => {
        const at = out.indexOf('\r\n\r\n');
        resolve({ status: Number(out.split(' ')[1]), body: at < 0 ? '' : out.slice(at + 4) });
      });
      s.on('error', reject);
    });
  });
}

/** A whole response read through a `Tunnel`. */
export interface Reply {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  readonly trailers: string;
}

/**
 * A client connection through a CONNECT tunnel opened as `token` (null: no
 * Proxy-Authorization), reading whole responses (Content-Length or chunked,
 * trailers kept apart).
 */
export class Tunnel {
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
    t.on('error', () => undefined);
  }

  /** The raw CONNECT reply when the proxy refused the tunnel, else the tunnel. */
  static async open(
    proxyPort: number,
    target: string,
    ca: string,
    token: string | null,
  ): Promise<Tunnel> {
    const { connect } = await import('node:net');
    const { connect: tlsConnect } = await import('node:tls');
    const auth =
      token === null
        ? ''
        : `Proxy-Authorization: Basic ${Buffer.from(`vault:${token}`).toString('base64')}\r\n`;
    const socket = connect(proxyPort, '127.0.0.1');
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    const reply = await new Promise<string>((resolve, reject) => {
      let buf = '';
      const onData = (c: Buffer) => {
        buf += c.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        resolve(buf.slice(0, end + 4));
      };
      socket.on('data', onData);
      socket.on('error', reject);
    });
    if (!reply.startsWith('HTTP/1.1 200 ')) throw new Error(`tunnel refused: ${reply}`);
    const host = target.replace(/:[0-9]+$/, '');
    const t = tlsConnect({ socket, host, servername: isIP(host) === 0 ? host : undefined, ca });
    await new Promise((r, j) => {
      t.once('secureConnect', r);
      t.once('error', j);
    });
    return new Tunnel(t);
  }

  send(raw: string): void {
    this.t.write(raw);
  }

  async reply(): Promise<Reply> {
    for (;;) {
      const r = this.parse();
      if (r !== null) return r;
      if (this.closed) throw new Error(`closed with ${JSON.stringify(this.buf.toString())}`);
      await new Promise<void>((r) => (this.waiting = r));
      this.waiting = null;
    }
  }

  private parse(): Reply | null {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const head = this.buf.subarray(0, end).toString('latin1');
    let at = end + 4;
    let body = '';
    let trailers = '';
    const length = /\r\ncontent-length: *([0-9]+)/i.exec(head);
    if (length !== null) {
      const n = Number(length[1]);
      if (this.buf.length < at + n) return null;
      body = this.buf.subarray(at, at + n).toString();
      at += n;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = this.buf.indexOf('\r\n', at);
        if (line < 0) return null;
        const n = parseInt(this.buf.subarray(at, line).toString(), 16);
        if (n === 0) {
          const stop = this.buf.indexOf('\r\n\r\n', line);
          if (stop < 0) return null;
          trailers = this.buf.subarray(line + 2, stop + 2).toString('latin1');
          at = stop + 4;
          break;
        }
        if (this.buf.length < line + 2 + n + 2) return null;
        body += this.buf.subarray(line + 2, line + 2 + n).toString();
        at = line + 2 + n + 2;
      }
    }
    this.buf = this.buf.subarray(at);
    return { status: Number(head.split(' ')[1]), head, body, trailers };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = new Promise((r) => this.t.once('close', r));
    this.t.end();
    await done;
  }
}
