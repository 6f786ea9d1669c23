/**
 * The proxy beside its floors, in one run (issue 28): a direct HTTPS
 * connection, mitmproxy's pass-through (when `mitmdump` is installed), vault-cli
 * proxy without a reference (pass-through) and with one `vault://` reference
 * per request (fill), the same proxy filling through the durability floor (a
 * stand-in host on the same kind of socket that only appends a chained record
 * and group-fdatasyncs before it answers), and each host's `resolve` alone.
 * Keep-alive requests/s, p50/p99 latency and CPU per request (utime + stime of
 * the client, proxy, host and upstream processes, from /proc) at concurrency
 * 1, 8 and 32, and the latency of a request on a new connection. Prints
 * tables and the issue's ratios; asserts nothing.
 *
 *   npm run bench   (or: node --import tsx bench/proxy.ts [seconds per cell] [--models] [--baseline <checkout>])
 *
 * Cells last 2 s; a number argument or BENCH_SECONDS sets another length.
 * `--baseline <checkout>` runs the same cells again in the same run against
 * another checkout's built dist/ (its host and proxy; this tree's bench and
 * stand-in host).
 *
 * `--models` adds floors that are not the product: a plain CONNECT tunnel, a
 * TLS pipe with no HTTP, and two stripped-down proxies that show what the
 * proxy's checks and relay cost: both parse with Node's own llhttp (the
 * internal `_http_common` parser node:http uses), write heads as strings, and
 * check nothing but the presence of `vault://`; one keeps node:http's server
 * for the client side, the shape of the product's tunnel path
 * (src/proxy/exchange.ts). They handle only what this benchmark sends.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request, type Agent } from 'node:https';
import { connect as netConnect } from 'node:net';
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostChannel } from '../src/client/channel.js';
import { mintSurrogate } from '../src/crypto/aws-surrogate.js';
import { TunnelAgent } from './tunnel.js';
import { freePort, makeTestCa, startProxy, type ProxyProcess } from '../test/support/proxy.js';
import { cpuMs } from '../test/support/procs.js';
import { CLI, ROOT, Rig, ok } from '../test/support/rig.js';

const args = process.argv.slice(2);
const seconds = Number(args.find((a) => /^[0-9.]+$/.test(a)) ?? process.env.BENCH_SECONDS ?? 2);
const models = args.includes('--models');
const baselineAt = args.indexOf('--baseline');
const baseline = baselineAt < 0 ? null : (args[baselineAt + 1] ?? null);
if (baselineAt >= 0 && baseline === null) throw new Error('--baseline needs a checkout');
/** Printed before the figures: which build this run measures. */
const label = process.env.BENCH_LABEL ?? 'this tree';

/** The processes a cell's CPU is summed over, by role. */
type Pids = Record<string, number>;

const cpuOf = (pids: Pids): Record<string, number> =>
  Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));

function once(agent: Agent, upPort: number, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: 'localhost', port: upPort, path: '/', agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(performance.now() - t0)
          : reject(new Error(`status ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

interface Cell {
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms per request, summed over every process of the cell. */
  cpu: number;
  /** CPU ms per request of each process, by role. */
  parts: Record<string, number>;
}

/** Runs `one` from `conc` loops for `cellSeconds`, with CPU read from /proc before and after. */
async function measure(
  conc: number,
  pids: Pids,
  cellSeconds: number,
  one: () => Promise<number>,
): Promise<Cell> {
  const lat: number[] = [];
  const before = cpuOf(pids);
  const t0 = performance.now();
  const end = t0 + cellSeconds * 1000;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() < end) lat.push(await one());
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const after = cpuOf(pids);
  const n = Math.max(1, lat.length);
  const parts = Object.fromEntries(
    Object.keys(pids).map((k) => [k, ((after[k] ?? 0) - (before[k] ?? 0)) / n]),
  );
  const cpu = Object.values(parts).reduce((a, b) => a + b, 0);
  return { rps: lat.length / elapsed, p50: pct(lat, 50), p99: pct(lat, 99), cpu, parts };
}

async function keepAlive(
  proxyPort: number | null,
  upPort: number,
  ca: string,
  conc: number,
  headers: Record<string, string>,
  pids: Pids,
  cellSeconds = seconds,
): Promise<Cell> {
  const agent = new TunnelAgent(proxyPort, upPort, ca, conc);
  // Warm: open every connection and let the proxy mint its leaf.
  await Promise.all(Array.from({ length: conc }, () => once(agent, upPort, headers)));
  const cell = await measure(conc, pids, cellSeconds, () => once(agent, upPort, headers));
  agent.destroy();
  return cell;
}

async function newConnection(
  proxyPort: number | null,
  upPort: number,
  ca: string,
  headers: Record<string, string>,
  n = 100,
): Promise<{ p50: number; p99: number }> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const agent = new TunnelAgent(proxyPort, upPort, ca, 1);
    lat.push(await once(agent, upPort, headers));
    agent.destroy();
  }
  return { p50: pct(lat, 50), p99: pct(lat, 99) };
}

/** A channel to the host whose socket is in `vaultDir`, as the proxy opens it; never starts one. */
const channelTo = (vaultDir: string, env: NodeJS.ProcessEnv) =>
  new HostChannel({
    vaultDir,
    daemon: { node: process.execPath, script: CLI, env },
    autoStart: false,
  });

/**
 * A host alone: `resolve` calls on kept-alive connections (as the proxy
 * makes them), `conc` at a time, for one cell.
 */
async function hostResolves(
  vaultDir: string,
  env: NodeJS.ProcessEnv,
  token: string,
  conc: number,
  pids: Pids,
): Promise<Cell> {
  const channel = channelTo(vaultDir, env);
  const body = { token, refs: [{ entry: 'Bench', field: 'token' }], host: 'localhost' };
  const one = async () => {
    const t = performance.now();
    await channel.call('resolve', body);
    return performance.now() - t;
  };
  await Promise.all(Array.from({ length: conc }, one));
  const cell = await measure(conc, pids, seconds, one);
  channel.close();
  return cell;
}

/** One durable flush on this disk: a 4 KiB write and fdatasync, p50 of 200, in ms. */
function flushFloor(dir: string): number {
  const fd = openSync(join(dir, 'flush-probe'), 'w');
  const page = Buffer.alloc(4096, 1);
  const lat: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      writeSync(fd, page, 0, page.length, 0);
      fdatasyncSync(fd);
      lat.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
  }
  return pct(lat, 50);
}

/** A child Node process running `code`, ready when it prints a line. */
function child(
  code: string,
  env: NodeJS.ProcessEnv,
): Promise<{ proc: ChildProcess; line: string }> {
  const proc = spawn(process.execPath, ['-e', code], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    proc.stdout?.once('data', (c: Buffer) => resolve({ proc, line: c.toString().trim() }));
    proc.once('exit', (c) => reject(new Error(`child exited ${c}`)));
  });
}

/**
 * The durability floor: a stand-in host on a Unix socket at SOCK that speaks
 * the host channel as the proxy does (HTTP/1.1 POST /v1/<op>, JSON, kept
 * alive) and, per `resolve`, only appends a record chained to the previous
 * one by its SHA-256 to LOG, answering once a group fdatasync covers it:
 * records that arrive while a sync runs go down together in the next. It
 * checks no token, scope or limit and holds no key: what a fill costs when
 * the host does nothing but make its audit record durable. `whoami` (the
 * proxy's start-up check) and `status` answer at once.
 */
const FLOOR_HOST = `
  const net = require('node:net');
  const fs = require('node:fs');
  const { createHash } = require('node:crypto');
  const fd = fs.openSync(process.env.LOG, 'a', 0o600);
  const VALUE = Buffer.from('floor-value').toString('base64');
  let prev = Buffer.alloc(32);
  let seq = 0;
  let pending = [];
  let syncing = false;
  const flush = () => {
    if (syncing || pending.length === 0) return;
    syncing = true;
    const group = pending;
    pending = [];
    const buf = Buffer.concat(group.map((g) => g.rec));
    fs.write(fd, buf, 0, buf.length, null, (err) => {
      if (err) throw err;
      fs.fdatasync(fd, (err) => {
        if (err) throw err;
        syncing = false;
        for (const g of group) g.done();
        flush();
      });
    });
  };
  const append = (fields, done) => {
    const line = JSON.stringify({ seq: ++seq, at: Date.now(), prev: prev.toString('hex'), ...fields });
    prev = createHash('sha256').update(prev).update(line).digest();
    pending.push({ rec: Buffer.from(line + '\\n'), done });
    flush();
  };
  const reply = (c, close, obj) => {
    const body = Buffer.from(JSON.stringify(obj));
    c.write('HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length +
      (close ? '\\r\\nConnection: close' : '') + '\\r\\n\\r\\n');
    if (close) c.end(body); else c.write(body);
  };
  // The framed channel (src/core/frames.ts), as the host speaks it: replies of a group in one write.
  const frame = (c, id, obj) => {
    const body = Buffer.from(JSON.stringify(obj));
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.writeUInt32BE(id, 4);
    if (!c.corked) { c.corked = true; c.cork(); process.nextTick(() => { c.corked = false; c.uncork(); }); }
    c.write(Buffer.concat([head, body]));
  };
  const serve = (c, op, close, req, id) => {
    const answer = (obj) => (id === undefined ? reply(c, close, obj) : frame(c, id, obj));
    if (op === 'resolve') {
      const refs = req.refs ?? [];
      append({ agent: 'bench', refs: refs.map((r) => r.entry + '/' + r.field), host: req.host },
        () => answer({ ok: true, result: { values: refs.map(() => VALUE) } }));
    } else if (op === 'whoami') answer({ ok: true, result: { agent: 'bench' } });
    else if (op === 'status') answer({ ok: true, result: { pid: process.pid, vaultDir: '', startedAt: 0, vault: true, mode: 'same-user' } });
    else answer({ ok: false, code: 'VLT-3007', message: 'not in the stand-in host: ' + op });
  };
  const frames = (c, buf) => {
    while (buf.length >= 8) {
      const length = buf.readUInt32BE(0);
      if (buf.length < 8 + length) break;
      const id = buf.readUInt32BE(4);
      const n = buf[8];
      const op = buf.toString('latin1', 9, 9 + n);
      const body = buf.toString('utf8', 9 + n, 8 + length);
      buf = buf.subarray(8 + length);
      serve(c, op, false, JSON.parse(body || '{}'), id);
    }
    return buf;
  };
  const s = net.createServer((c) => {
    let buf = Buffer.alloc(0);
    let framed = false;
    c.on('error', () => c.destroy());
    c.on('data', (d) => {
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      if (framed) {
        buf = frames(c, buf);
        return;
      }
      for (;;) {
        const split = buf.indexOf('\\r\\n\\r\\n');
        if (split < 0) return;
        const head = buf.subarray(0, split).toString('latin1');
        const length = Number(/\\r\\ncontent-length: *([0-9]+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < split + 4 + length) return;
        const body = buf.subarray(split + 4, split + 4 + length).toString('utf8');
        buf = buf.subarray(split + 4 + length);
        if (/^GET \\/v1\\/channel /.test(head) && /\\r\\nupgrade: *vault-channel\\/1/i.test(head)) {
          framed = true;
          c.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: vault-channel/1\\r\\n\\r\\n');
          buf = frames(c, buf);
          return;
        }
        const op = /^POST \\/v1\\/([a-z.]+) /.exec(head)?.[1] ?? '';
        serve(c, op, /\\r\\nconnection: *close/i.test(head), JSON.parse(body || '{}'));
      }
    });
  });
  s.listen(process.env.SOCK, () => console.log(process.pid));
`;

const UPSTREAM = `
  const https = require('node:https');
  const s = https.createServer({ key: process.env.KEY, cert: process.env.CERT, keepAliveTimeout: 60000 },
    (req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); });
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
`;

/**
 * A CONNECT server for a child process: it reads the CONNECT head, then calls
 * `relay(client, address, host, port, bytesAfterHead)`, a function expression
 * in the child's source with `net` and whatever `prelude` defines in scope.
 */
const connectServer = (prelude: string, relay: string) => `
  const net = require('node:net');
  ${prelude}
  const relay = ${relay};
  const s = net.createServer((c) => {
    c.setNoDelay(true);
    let head = '';
    const onData = (d) => {
      head += d.toString('latin1');
      const end = head.indexOf('\\r\\n\\r\\n');
      if (end < 0) return;
      c.off('data', onData);
      const [host, port] = head.split(' ')[1].split(':');
      const address = host === 'localhost' ? '127.0.0.1' : host;
      relay(c, address, host, Number(port), Buffer.from(head.slice(end + 4), 'latin1'));
    };
    c.on('data', onData);
  });
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
`;

const ESTABLISHED = "'HTTP/1.1 200 Connection Established\\r\\n\\r\\n'";

/** The floor for any CONNECT proxy: parse CONNECT, reply 200, pipe bytes. */
const TUNNEL = connectServer(
  '',
  `(c, address, host, port, rest) => {
    const u = net.connect(port, address, () => {
      u.setNoDelay(true);
      c.write(${ESTABLISHED});
      if (rest.length) u.write(rest);
      c.pipe(u); u.pipe(c);
    });
    u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
  }`,
);

/**
 * The floor for any TLS-terminating proxy: the tunnel above, but TLS ended on
 * each side (the upstream's own certificate to the client, the CA checked
 * upstream) and the decrypted bytes piped across, with no HTTP at all.
 */
const TLS_PIPE = connectServer(
  `const tls = require('node:tls');
  const ctx = tls.createSecureContext({ key: process.env.KEY, cert: process.env.CERT });`,
  `(c, address, host, port, rest) => {
    const u = tls.connect({ port, host: address, servername: host, ca: process.env.CA,
      ALPNProtocols: ['http/1.1'] }, () => {
      u.setNoDelay(true);
      c.write(${ESTABLISHED});
      if (rest.length) c.unshift(rest);
      const t = new tls.TLSSocket(c, { isServer: true, secureContext: ctx, ALPNProtocols: ['http/1.1'] });
      t.pipe(u); u.pipe(t);
      t.on('error', () => u.destroy()); u.on('error', () => t.destroy());
    });
    u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
  }`,
);

/** Both models: the upstream leg, a response parser on it, and the client's TLS leg. */
const MODEL_PRELUDE = `const tls = require('node:tls');
  const http = require('node:http');
  const { HTTPParser, methods } = require('_http_common');
  const ctx = tls.createSecureContext({ key: process.env.KEY, cert: process.env.CERT });
  const CRLF = '\\r\\n';
  const headLines = (h) => {
    let s = '';
    for (let i = 0; i < h.length; i += 2) {
      if (h[i + 1].includes('vault://')) throw new Error('a reference: not modelled');
      s += h[i] + ': ' + h[i + 1] + CRLF;
    }
    return s + CRLF;
  };
  /** The upstream leg; onResponse(status, message, headers), onBody(b), onEnd() per response. */
  const upstream = (address, host, port, ready, on) => {
    const u = tls.connect({ port, host: address, servername: host, ca: process.env.CA,
      ALPNProtocols: ['http/1.1'] }, () => { u.setNoDelay(true); ready(u); });
    const p = new HTTPParser();
    p.initialize(HTTPParser.RESPONSE, {}, 0, 0);
    p[HTTPParser.kOnHeadersComplete] = (maj, min, h, method, url, status, msg) =>
      on.response(status, msg, h);
    p[HTTPParser.kOnBody] = (b) => on.body(b);
    p[HTTPParser.kOnMessageComplete] = () => on.end();
    u.on('data', (d) => p.execute(d));
    return u;
  };
  const serve = (c, u) => {
    c.write(${ESTABLISHED});
    const t = new tls.TLSSocket(c, { isServer: true, secureContext: ctx, ALPNProtocols: ['http/1.1'] });
    t.on('error', () => u.destroy()); u.on('error', () => t.destroy());
    return t;
  };`;

/** A model: llhttp on both legs, no node:http objects; bodies re-chunked when chunked. */
const LEAN_MODEL = connectServer(
  MODEL_PRELUDE,
  `(c, address, host, port) => {
    let t = null;
    let chunked = false;
    const on = {
      response: (status, msg, h) => {
        chunked = h.some((v, i) => i % 2 === 0 && v.toLowerCase() === 'transfer-encoding');
        t.cork();
        t.write('HTTP/1.1 ' + status + ' ' + msg + CRLF + headLines(h), 'latin1');
      },
      body: (b) => t.write(chunked ? Buffer.concat([Buffer.from(b.length.toString(16) + CRLF), b, Buffer.from(CRLF)]) : b),
      end: () => { if (chunked) t.write('0' + CRLF + CRLF); process.nextTick(() => t.uncork()); },
    };
    const u = upstream(address, host, port, (u) => {
      t = serve(c, u);
      const p = new HTTPParser();
      p.initialize(HTTPParser.REQUEST, {}, 0, 0);
      p[HTTPParser.kOnHeadersComplete] = (maj, min, h, method, url) =>
        u.write(methods[method] + ' ' + url + ' HTTP/1.1' + CRLF + headLines(h), 'latin1');
      p[HTTPParser.kOnBody] = (b) => u.write(b);
      p[HTTPParser.kOnMessageComplete] = () => {};
      t.on('data', (d) => p.execute(d));
    }, on);
    u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
  }`,
);

/** A model: node:http's server for the client leg, llhttp and string heads upstream. */
const HALF_MODEL = connectServer(
  `${MODEL_PRELUDE}
  const legs = new WeakMap();
  const inner = http.createServer((req, res) => {
    const leg = legs.get(req.socket);
    leg.res = res;
    leg.u.write(req.method + ' ' + req.url + ' HTTP/1.1' + CRLF + headLines(req.rawHeaders), 'latin1');
    req.resume();
  });`,
  `(c, address, host, port) => {
    const leg = { u: null, res: null };
    const u = upstream(address, host, port, (u) => {
      leg.u = u;
      const t = serve(c, u);
      legs.set(t, leg);
      inner.emit('connection', t);
    }, {
      response: (status, msg, h) => leg.res.writeHead(status, msg, h),
      body: (b) => leg.res.write(b),
      end: () => leg.res.end(),
    });
    u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
  }`,
);

/** A throwaway HOME and XDG directories under `root`: no child of the bench writes outside it. */
function sandboxEnv(root: string): NodeJS.ProcessEnv {
  const home = join(root, 'home');
  const dir = (name: string) => {
    const d = join(home, name);
    mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: home,
    XDG_CONFIG_HOME: dir('.config'),
    XDG_DATA_HOME: dir('.local/share'),
    XDG_CACHE_HOME: dir('.cache'),
    XDG_STATE_HOME: dir('.local/state'),
    XDG_RUNTIME_DIR: dir('run'),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
const accepts = (port: number) =>
  new Promise<boolean>((done) => {
    const s = netConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });

/**
 * mitmdump, ready: its CA file written and its port accepting. Under load its
 * start-up takes anything from 1 s to tens of seconds; a fixed sleep crashed
 * the bench when it ran long.
 */
async function startMitm(
  confdir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ proc: ChildProcess; port: number; ca: string }> {
  const port = await freePort();
  const proc = spawn(
    'mitmdump',
    ['-q', '--listen-host', '127.0.0.1', '--listen-port', String(port)].concat([
      '--set',
      `confdir=${confdir}`,
      '--ssl-insecure',
    ]),
    { env, stdio: 'ignore' },
  );
  const caFile = join(confdir, 'mitmproxy-ca-cert.pem');
  const deadline = Date.now() + 120_000;
  while (!(existsSync(caFile) && (await accepts(port)))) {
    if (proc.exitCode !== null) throw new Error(`mitmdump exited ${proc.exitCode}`);
    if (Date.now() > deadline) throw new Error('mitmdump not ready after 120 s');
    await sleep(100);
  }
  return { proc, port, ca: readFileSync(caFile, 'utf8') };
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface Row {
  readonly name: string;
  readonly port: number | null;
  readonly ca: string;
  readonly headers: Record<string, string>;
  readonly pids: Pids;
}

const CONCS = [1, 8, 32] as const;
const REF = { authorization: 'Bearer vault://Bench/token' };
/**
 * A request signed with a surrogate AWS key id (docs/proxy.md, AWS SigV4),
 * as the AWS CLI sends a GET: the proxy reads it, the host releases the key
 * pair and signs with it, the proxy puts the signature over the surrogate's.
 */
const sigv4 = (token: string, upPort: number) => ({
  authorization:
    `AWS4-HMAC-SHA256 Credential=${mintSurrogate(token, 'BenchAWS')}/20260101/us-east-1/s3/aws4_request, ` +
    `SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${'0'.repeat(64)}`,
  'x-amz-date': '20260101T000000Z',
  'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  host: `localhost:${upPort}`,
});

async function main(): Promise<void> {
  const rig = new Rig();
  const procs: ChildProcess[] = [];
  const proxies: ProxyProcess[] = [];
  try {
    const env = sandboxEnv(rig.root);
    const ca = makeTestCa(rig.root);
    const up = await child(UPSTREAM, { ...env, KEY: ca.key, CERT: ca.cert });
    procs.push(up.proc);
    const upPort = Number(up.line);
    const upCa = readFileSync(ca.caFile, 'utf8');
    const modelEnv = { ...env, KEY: ca.key, CERT: ca.cert, CA: upCa };
    const extras: { name: string; code: string }[] = models
      ? [
          { name: 'CONNECT tunnel', code: TUNNEL },
          { name: 'TLS pipe, no HTTP', code: TLS_PIPE },
          { name: 'model: llhttp both', code: LEAN_MODEL },
          { name: 'model: server+llhttp', code: HALF_MODEL },
        ]
      : [];
    const started = [];
    for (const m of extras) {
      const c = await child(m.code, modelEnv);
      procs.push(c.proc);
      started.push({ ...m, port: Number(c.line), pid: c.proc.pid ?? 0 });
    }

    await rig.create();
    await rig.set('Bench', 'bench-secret-value', 'token');
    await rig.set('BenchAWS', 'AKIABENCHBENCHBENCH0', 'access_key_id');
    await rig.set('BenchAWS', 'bench-secret-access-key', 'secret_access_key');
    const token = await rig.addAgent(
      'bench',
      ['Bench', 'BenchAWS'],
      ['--per-minute', '1000', '--per-hour', '1000'],
    );
    await rig.liftValuesLimit('bench');
    const proxy = await startProxy(rig, token, ca);
    proxies.push(proxy);
    const ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    const ours = readFileSync(ourCa, 'utf8');
    const status = channelTo(rig.vaultDir, rig.env);
    const hostPid = (await status.call('status', {})).pid;
    status.close();

    // The floor: the same proxy build, told (by VAULT_DIR) to use the stand-in's socket.
    const floorDir = join(rig.root, 'floor');
    mkdirSync(floorDir, { mode: 0o700 });
    const floor = await child(FLOOR_HOST, {
      ...env,
      SOCK: join(floorDir, 'host.sock'),
      LOG: join(floorDir, 'audit.log'),
    });
    procs.push(floor.proc);
    const floorPid = Number(floor.line);
    const floorProxy = await startProxy(rig, token, ca, { VAULT_DIR: floorDir });
    proxies.push(floorProxy);

    const client = process.pid;
    const upstream = up.proc.pid ?? 0;
    const viaUs = { client, proxy: proxy.proc.pid ?? 0, host: hostPid, upstream };
    const rows: Row[] = [
      { name: 'direct', port: null, ca: upCa, headers: {}, pids: { client, upstream } },
      ...started.map((m) => ({
        name: m.name,
        port: m.port,
        ca: upCa,
        headers: {},
        pids: { client, proxy: m.pid, upstream },
      })),
      { name: 'pass-through', port: proxy.port, ca: ours, headers: {}, pids: viaUs },
      { name: 'fill', port: proxy.port, ca: ours, headers: REF, pids: viaUs },
      {
        name: 're-sign (SigV4)',
        port: proxy.port,
        ca: ours,
        headers: sigv4(token, upPort),
        pids: viaUs,
      },
      {
        name: 'fill, floor host',
        port: floorProxy.port,
        ca: ours,
        headers: REF,
        pids: { client, proxy: floorProxy.proc.pid ?? 0, host: floorPid, upstream },
      },
    ];
    let mitmNote = 'mitmproxy: not installed (apt install mitmproxy)';
    if (spawnSync('sh', ['-c', 'command -v mitmdump']).status === 0) {
      try {
        const m = await startMitm(join(rig.root, 'mitm'), env);
        procs.push(m.proc);
        rows.push({
          name: 'mitmproxy pass-through',
          port: m.port,
          ca: m.ca,
          headers: {},
          pids: { client, proxy: m.proc.pid ?? 0, upstream },
        });
        mitmNote = '';
      } catch (err) {
        mitmNote = `mitmproxy: ${(err as Error).message}, skipped`;
      }
    }

    console.log(
      `== ${label}: node ${process.version}, ${seconds} s per keep-alive cell, 100 new connections per proxy row; load average ${load()}`,
    );
    const head = [''];
    for (const c of CONCS) head.push(`c=${c} req/s`, 'p50', 'p99', 'cpu/req');
    head.push('new conn p50', 'p99');
    const widths = [24, 11, 6, 6, 8, 11, 6, 6, 8, 11, 6, 6, 8, 13, 6];
    const line = (cells: string[]) =>
      console.log(
        cells
          .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 8) : c.padStart(widths[i] ?? 8)))
          .join(''),
      );
    const show = (c: Cell) => [
      c.rps.toFixed(0),
      c.p50.toFixed(2),
      c.p99.toFixed(2),
      c.cpu.toFixed(3),
    ];
    line(head);
    const measured = new Map<string, Cell[]>();
    for (const r of rows) {
      const cells = [r.name];
      const got: Cell[] = [];
      for (const conc of CONCS) {
        const c = await keepAlive(r.port, upPort, r.ca, conc, r.headers, r.pids);
        got.push(c);
        cells.push(...show(c));
      }
      measured.set(r.name, got);
      if (r.port !== null) {
        const n = await newConnection(r.port, upPort, r.ca, r.headers);
        cells.push(n.p50.toFixed(2), n.p99.toFixed(2));
      }
      line(cells);
    }
    const hosts = [
      { name: 'host resolve alone', dir: rig.vaultDir, pid: hostPid },
      { name: 'floor resolve alone', dir: floorDir, pid: floorPid },
    ];
    for (const h of hosts) {
      const cells = [h.name];
      const got: Cell[] = [];
      for (const conc of CONCS) {
        const c = await hostResolves(h.dir, rig.env, token, conc, { client, host: h.pid });
        got.push(c);
        cells.push(...show(c));
      }
      measured.set(h.name, got);
      line(cells);
    }
    if (mitmNote !== '') console.log(mitmNote);
    console.log(
      'latencies in ms; cpu/req: ms of CPU (utime + stime) per request, summed over the client, proxy, host and upstream processes;',
    );
    console.log(
      '"fill": one vault:// reference per request, resolved through the host; "floor host": a stand-in that only appends a chained record and group-fdatasyncs',
    );
    const flush = flushFloor(rig.root);
    console.log(
      `one durable flush (4 KiB write + fdatasync) on this disk: p50 ${flush.toFixed(2)} ms`,
    );

    const plain = measured.get('pass-through') ?? [];
    const filled = measured.get('fill') ?? [];
    const floored = measured.get('fill, floor host') ?? [];
    const mitm = measured.get('mitmproxy pass-through');
    const alone = measured.get('host resolve alone') ?? [];
    const pc = (x: number) => `${(x * 100).toFixed(0)}%`;
    const xs = (x: number) => `${x.toFixed(1)}x`;
    // req/s of fill over the other, and the same by CPU: the other's CPU per request over fill's.
    const ratio = (other: Cell[], fmt: (x: number) => string) =>
      CONCS.map((c, i) => {
        const f = filled[i];
        const o = other[i];
        if (f === undefined || o === undefined) return `c=${c} -`;
        return `c=${c} ${fmt(f.rps / o.rps)} (CPU ${fmt(o.cpu / f.cpu)})`;
      }).join(', ');
    console.log('targets (req/s ratio, then the CPU-based one):');
    console.log(`  fill / pass-through       ${ratio(plain, pc)}   target >= 40% at c=8, c=32`);
    console.log(`  fill / floor              ${ratio(floored, pc)}   target >= 80%`);
    console.log(
      mitm === undefined
        ? '  fill / mitmproxy          - (mitmproxy not measured)   target >= 3x'
        : `  fill / mitmproxy          ${ratio(mitm, xs)}   target >= 3x`,
    );
    const above = (filled[0]?.p50 ?? NaN) - (plain[0]?.p50 ?? NaN);
    console.log(
      `  c=1 p50, fill above pass-through: ${above.toFixed(2)} ms   target: within one flush (${flush.toFixed(2)} ms)`,
    );
    // A re-sign's cost over a plain fill's, side by side: issue 40's target is 1.5x at most.
    const resigned = measured.get('re-sign (SigV4)') ?? [];
    console.log(
      `  re-sign / fill cost        ${CONCS.map((c, i) => {
        const f = filled[i];
        const r = resigned[i];
        if (f === undefined || r === undefined) return `c=${c} -`;
        return `c=${c} ${xs(f.rps / r.rps)} (CPU ${xs(r.cpu / f.cpu)})`;
      }).join(', ')}   target <= 1.5x`,
    );
    const hostMs = (c: Cell | undefined) => (c?.parts.host ?? NaN).toFixed(3);
    console.log(
      `  host CPU per resolve at c=8: ${hostMs(filled[1])} ms in the fill cell, ${hostMs(alone[1])} ms alone (floor host: ${hostMs(floored[1])} ms)   target < 0.3 ms`,
    );

    // Load from elsewhere drifts over a run; a ratio from cells measured back
    // to back, alternating, is steadier than one from the table above. The TLS
    // pipe's share is the ceiling for any proxy that ends TLS on both sides.
    const direct = rows[0];
    const compared = rows.filter(
      (r) =>
        r.name === 'TLS pipe, no HTTP' || r.name.startsWith('model:') || r.name === 'pass-through',
    );
    if (models && direct !== undefined) {
      const share = compared.map(() => [] as string[]);
      for (const conc of CONCS) {
        const ratios = compared.map(() => [] as number[]);
        for (let round = 0; round < 5; round++) {
          const d = await keepAlive(null, upPort, direct.ca, conc, {}, direct.pids, 1);
          for (const [k, r] of compared.entries()) {
            const o = await keepAlive(r.port, upPort, r.ca, conc, r.headers, r.pids, 1);
            ratios[k]?.push(o.rps / d.rps);
          }
        }
        for (const [k, rs] of ratios.entries()) {
          share[k]?.push(`c=${conc} ${(pct(rs, 50) * 100).toFixed(0)}%`);
        }
      }
      console.log('share of direct, 5 alternating 1 s rounds, median:');
      for (const [k, r] of compared.entries()) {
        console.log(`  ${r.name.padEnd(22)}${share[k]?.join(', ')}`);
      }
    }
    console.log('CPU ms per request by process, c=1 / c=8 / c=32:');
    for (const name of ['pass-through', 'fill', 'fill, floor host', 'host resolve alone']) {
      const got = measured.get(name) ?? [];
      const roles = Object.keys(got[0]?.parts ?? {});
      const each = roles.map(
        (k) => `${k} ${got.map((c) => (c.parts[k] ?? NaN).toFixed(3)).join(' / ')}`,
      );
      console.log(`  ${name.padEnd(22)}${each.join(', ')}`);
    }
    // Every fill through the floor left its record: the stand-in did the work it stands for.
    const records = readFileSync(join(floorDir, 'audit.log'), 'utf8').split('\n').length - 1;
    console.log(`floor host: ${records} chained records appended and synced`);
    console.log(`load average at the end: ${load()}`);
  } finally {
    for (const p of proxies) await p.stop();
    for (const p of procs) p.kill();
    await rig.dispose();
  }
}

/**
 * The same cells against another checkout's built dist/, in this run: this
 * bench again as a child, its rig running that build (VAULT_TEST_DIST).
 */
async function againstBaseline(checkout: string): Promise<void> {
  const dir = resolvePath(checkout);
  const sha = spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'])
    .stdout?.toString()
    .trim();
  const rest = args.filter((_, i) => i !== baselineAt && i !== baselineAt + 1);
  const proc = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), ...rest],
    {
      env: {
        ...process.env,
        VAULT_TEST_DIST: relative(ROOT, join(dir, 'dist')),
        BENCH_LABEL: `baseline ${dir} (${sha ?? '?'})`,
      },
      stdio: 'inherit',
    },
  );
  await new Promise((r) => proc.once('exit', r));
}

await main();
if (baseline !== null) await againstBaseline(baseline);
