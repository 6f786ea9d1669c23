/**
 * The reference-resolving proxy: HTTPS by CONNECT (TLS terminated with a leaf
 * from the local CA, re-originated to the real host with its certificate
 * verified), plain HTTP by absolute-form requests, WebSocket upgrades.
 *
 * Invariants this file guards:
 * - Nothing goes upstream before every reference in the request's headers has
 *   been resolved by the host (one `resolve` per request, so a rotation is
 *   seen on the next request) and every check has passed; a refusal is an
 *   HTTP error whose body names the VLT code.
 * - Injected headers always win (headers.ts); bodies stream both ways with
 *   back-pressure; a response echoing an injected value gets the reference
 *   back (scrub.ts).
 * - It serves no API and no page: a request addressed to the proxy itself is
 *   refused.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type Socket } from 'node:net';
import { pipeline, type Duplex, type Transform } from 'node:stream';
import { TLSSocket, createSecureContext } from 'node:tls';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { VaultError, oneLine, type ErrorCode } from '../core/errors.js';
import type { Authority } from './ca.js';
import {
  contentEncoding,
  fill,
  forwardable,
  framingProblem,
  relayableHead,
  template,
  unsafeInHeader,
  without,
  type HeaderRef,
} from './headers.js';
import { credentials } from './caller.js';
import { confinedLookup, isLocalHost } from './local.js';
import { Exchange, parserProblem } from './exchange.js';
import { Relay, type BodySource } from './relay.js';
import { Scrubber, scrubStream, type Replacement } from './scrub.js';
import { Scavenger } from './scavenge.js';
import { Upstreams, type TunnelUpstream } from './upstream.js';
import { ServerFrameScrubber } from './websocket.js';

export { proxyUrl } from './caller.js';

/**
 * Resolves references for one request through the vault host; throws its
 * VaultError. `caller` is the token from the request's (or its tunnel's)
 * Proxy-Authorization, null when none was given.
 */
export type Resolver = (
  refs: readonly { entry: string; field: string }[],
  host: string,
  caller: string | null,
) => Promise<Buffer[]>;

export interface ProxyOptions {
  readonly port: number;
  readonly authority: Authority;
  readonly resolve: Resolver;
  /** PEM certificates upstream servers are verified against (system roots, plus any extra). */
  readonly upstreamCa: readonly string[];
  /**
   * Refuse (407, VLT-2040) a CONNECT or absolute-form request that carries no
   * caller token, before anything goes upstream. A malformed
   * Proxy-Authorization is refused either way.
   */
  readonly requireCaller?: boolean;
  /**
   * Checks a caller token with the host before its tunnel opens or its
   * request goes on, references or not; throws the host's VaultError
   * (VLT-2040 unknown or revoked, VLT-2043 locked). A token admitted is not
   * asked about again for ADMIT_FOR_MS: each fill is checked by the host anyway.
   */
  readonly admit?: (caller: string) => Promise<void>;
  /**
   * For a sandboxed `run` session: destinations on this machine (local.ts:
   * loopback, unspecified, link-local, its interface addresses, judged by
   * what the name resolves to) are refused (403, VLT-2053) unless their
   * `host:port` is in this set (the owner's `--allow-net`).
   */
  readonly confine?: ReadonlySet<string>;
}

export interface RunningProxy {
  readonly port: number;
  /**
   * Serves a connection that arrived some other way than the TCP port: `run`
   * hands over those of its sandbox's relay (a Unix socket).
   */
  accept(socket: Socket): void;
  close(): Promise<void>;
}

interface Destination {
  readonly tls: boolean;
  /** Host name or IP address, without brackets, lower case. */
  readonly host: string;
  readonly port: number;
}

/** A CONNECT tunnel: where it goes and who opened it, for every request inside it. */
interface Tunnel extends Destination {
  readonly caller: string | null;
}

/** Where a request goes, and for whom. */
interface Routed {
  readonly dest: Destination;
  readonly path: string;
  readonly caller: string | null;
}

/** No usable caller token: answered 407 with a challenge, so clients know to send one. */
class Unauthenticated extends VaultError {
  constructor() {
    super(
      'VLT-2040',
      "The proxy needs a token as the proxy URL's user-info (http://vault:<token>@127.0.0.1:<port>); nothing was sent.",
    );
  }
}

const CHALLENGE = 'Basic realm="vault-cli"';

/** How long a caller token the host accepted opens tunnels without asking again. */
export const ADMIT_FOR_MS = 30_000;
const ADMITTED_MAX = 1024;

/** HTTP status of each refusal. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  'VLT-2040': 403,
  'VLT-2041': 403,
  'VLT-2042': 429,
  'VLT-2043': 423,
  'VLT-2044': 400,
  'VLT-2045': 403,
  'VLT-2046': 400,
  'VLT-2047': 422,
  'VLT-2048': 400,
  'VLT-2049': 400,
  'VLT-2052': 403,
  'VLT-2053': 403,
  'VLT-3008': 502,
};

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);
const isLoopback = (host: string) => LOOPBACK.has(host) || /^127\./.test(host);

const HOST_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * A CONNECT target or absolute-form authority, checked: a DNS name of valid
 * labels or an IP address, and a port 1-65535. Anything else is refused, so
 * nothing odd reaches DNS, SNI or a certificate.
 */
export function parseAuthority(
  authority: string,
  defaultPort: number | null,
): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/@]+))(?::([0-9]{1,5}))?$/.exec(authority);
  if (m === null) return null;
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  if (port === null || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  if (m[1] !== undefined) return isIP(m[1]) === 6 ? { host: m[1].toLowerCase(), port } : null;
  const host = (m[2] as string).toLowerCase().replace(/\.$/, '');
  if (isIP(host) === 4) return { host, port };
  if (host.length > 253 || /^[0-9.]+$/.test(host)) return null;
  return host.split('.').every((l) => HOST_LABEL.test(l)) ? { host, port } : null;
}

function errorBody(err: VaultError, extra: string[] = []): string {
  return [err.line(), ...extra.map(oneLine)].join('\n') + '\n';
}

function statusOf(err: VaultError): number {
  if (err instanceof Unauthenticated) return 407;
  return STATUS[err.code] ?? (err.code.startsWith('VLT-3') ? 502 : 403);
}

/** An error reply on a socket that is not (or no longer) an HTTP response object. */
function rawError(socket: Duplex, err: VaultError, extra: string[] = []): void {
  const body = Buffer.from(errorBody(err, extra));
  const challenge = err instanceof Unauthenticated ? `Proxy-Authenticate: ${CHALLENGE}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${statusOf(err)} Refused\r\nContent-Type: text/plain; charset=utf-8\r\n${challenge}` +
      `X-Vault-Error: ${err.code}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` +
      body.toString('latin1'),
  );
}

function reply(res: ServerResponse, err: VaultError, extra: string[] = []): void {
  const body = Buffer.from(errorBody(err, extra));
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // Closed after a refusal: whatever the client pipelined behind it is never read as a request.
  res.writeHead(statusOf(err), {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': body.length,
    'X-Vault-Error': err.code,
    Connection: 'close',
    ...(err instanceof Unauthenticated ? { 'Proxy-Authenticate': CHALLENGE } : {}),
  });
  res.end(body);
}

/** Where a request's body goes: an exchange in a tunnel, or node:http's client. */
interface UpstreamBody {
  /** False when the upstream wants a pause; `onceDrain` says when to go on. */
  write(chunk: Buffer): boolean;
  onceDrain(resume: () => void): void;
  /** The body is complete. */
  end(): void;
  destroy(): void;
}

/** A request with no body to send on: no length, or length 0, and not chunked. */
function isBodyless(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

function decoderFor(encoding: string): Transform | null {
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return null;
}

/** What a request becomes once checked and filled: ready to go upstream. */
interface Prepared {
  readonly headers: string[];
  readonly replacements: Replacement[];
  /**
   * Plain HTTP carrying a value: the loopback address its host name was
   * judged by, which is where it is sent (no second lookup that could answer
   * otherwise). Null otherwise.
   */
  readonly address: string | null;
}

/** This machine's loopback addresses (IPv4-mapped IPv6 ones included). */
const LOOPBACK_NET = new BlockList();
LOOPBACK_NET.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_NET.addAddress('::1', 'ipv6');

/**
 * The loopback address `host` resolves to, or null when it does not resolve
 * or any address it resolves to is not this machine's loopback: plain HTTP
 * carries a value only to this machine, judged by where the name leads, not
 * by how it is spelled.
 */
async function loopbackAddress(host: string): Promise<string | null> {
  let found: { address: string; family: number }[];
  try {
    found = await lookup(host, { all: true, verbatim: true });
  } catch {
    return null;
  }
  const local = (a: { address: string; family: number }) =>
    LOOPBACK_NET.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4');
  return found.length > 0 && found.every(local) ? (found[0]?.address ?? null) : null;
}

/**
 * Why a request's Host does not name where it goes, or null: exactly one
 * Host, naming the CONNECT target (or the absolute-form URL's host), with the
 * same port when it gives one. A value bound to one host must not go out
 * addressed to another (domain fronting on a shared CDN or load balancer).
 */
export function hostMismatch(raw: readonly string[], dest: Destination): string | null {
  let host: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (host !== null) return 'more than one Host header';
    host = raw[i + 1] as string;
  }
  if (host === null) return 'no Host header';
  const a = parseAuthority(host.trim(), dest.port);
  if (a === null) return 'an invalid Host header';
  if (a.host !== dest.host || a.port !== dest.port) {
    return `Host ${JSON.stringify(host.slice(0, 100))} is not the destination ${dest.host}:${dest.port}`;
  }
  return null;
}

export function startProxy(opts: ProxyOptions): Promise<RunningProxy> {
  // Pinned to the parser it was built against (exchange.ts): never started on another.
  const parser = parserProblem();
  if (parser !== null) {
    return Promise.reject(
      new VaultError('VLT-3007', `The proxy cannot run on this Node: ${parser}.`),
    );
  }
  // The upstream CAs as one context, not as a `ca` option: Node's agent puts a
  // `ca` option into every request's pool key (a 200 kB string built per request,
  // most of the proxy's CPU when measured); a secure context is not part of it.
  const upstreamTrust = createSecureContext({ ca: [...opts.upstreamCa] });
  const agents = {
    https: new CallerHttpsAgent({
      keepAlive: true,
      secureContext: upstreamTrust,
      maxFreeSockets: 64,
    }),
    http: new CallerHttpAgent({ keepAlive: true, maxFreeSockets: 64 }),
  };
  const tunnels = new WeakMap<Socket, Tunnel>();
  const scavenger = new Scavenger();
  /** Where a connection to `host:port` must not lead to this machine, the lookup that sees to it. */
  const lookupFor = (host: string, port: number) =>
    opts.confine === undefined || opts.confine.has(`${host}:${port}`) ? undefined : confinedLookup;
  const upstreams = new Upstreams(upstreamTrust, lookupFor);
  const held = new WeakMap<Socket, TunnelUpstream>();

  /** The tunnel's hold on upstream connections (upstream.ts); null outside a tunnel. */
  function tunnelUpstream(client: Socket, dest: Destination): TunnelUpstream | null {
    if (!tunnels.has(client)) return null;
    let u = held.get(client);
    if (u === undefined) {
      const made = upstreams.forTunnel(dest.host, dest.port, tunnels.get(client)?.caller ?? null);
      client.once('close', () => made.end());
      held.set(client, made);
      u = made;
    }
    return u;
  }
  let ownPort = opts.port;

  const refuse = (code: ErrorCode, message?: string) => new VaultError(code, message);

  /** A sandboxed session's refusal of a destination on this machine, or null. */
  async function confined(dest: { host: string; port: number }): Promise<VaultError | null> {
    if (lookupFor(dest.host, dest.port) === undefined) return null;
    if (!(await isLocalHost(dest.host))) return null;
    return refuse(
      'VLT-2053',
      `${dest.host}:${dest.port} is on this machine; from a sandbox the proxy goes there only when \`vault-cli run --allow-net ${dest.host}:${dest.port}\` allows it.`,
    );
  }

  /** Caller tokens the host accepted, until when. */
  const admitted = new Map<string, number>();
  async function admit(caller: string | null): Promise<void> {
    if (caller === null || opts.admit === undefined) return;
    const now = Date.now();
    if ((admitted.get(caller) ?? 0) > now) return;
    await opts.admit(caller);
    if (admitted.size >= ADMITTED_MAX) admitted.clear();
    admitted.set(caller, now + ADMIT_FOR_MS);
  }

  /** Is this absolute-form authority or CONNECT target the proxy itself? */
  const isSelf = (d: { host: string; port: number }) => isLoopback(d.host) && d.port === ownPort;

  /**
   * Checks a request and fills its references: framing, references well-formed,
   * all resolved in one call with the destination host, values fit for a header.
   * @throws VaultError the refusal to send back.
   */
  async function prepare(
    req: IncomingMessage,
    { dest, caller }: Routed,
    upgrade: boolean,
  ): Promise<Prepared> {
    // A tunnel's caller was admitted, and its target judged, when the tunnel opened.
    if (!tunnels.has(req.socket)) {
      await admit(caller);
      const local = await confined(dest);
      if (local !== null) throw local;
    }
    const forward = forwardable(req.rawHeaders, upgrade);
    // Most requests hold no reference: their headers go on as they are, unsplit.
    if (!forward.some((v, i) => i % 2 === 1 && v.includes('vault://'))) {
      return { headers: forward, replacements: [], address: null };
    }
    const t = template(forward);
    if (t.malformed.length > 0) {
      const m = t.malformed[0];
      throw refuse(
        'VLT-2046',
        `Malformed reference in header ${m?.header}: ${JSON.stringify(m?.written)}.`,
      );
    }
    if (t.refs.length === 0) return { headers: fill(t, []), replacements: [], address: null };
    const pin = hostMismatch(req.rawHeaders, dest);
    if (pin !== null) {
      throw refuse(
        'VLT-2048',
        `${pin}: a value goes only to the host the request is addressed to; nothing was sent.`,
      );
    }
    const address = dest.tls ? null : await loopbackAddress(dest.host);
    if (!dest.tls && address === null) {
      throw refuse(
        'VLT-2045',
        'Credentials go only over HTTPS (or plain HTTP to this machine, judged by what the name resolves to); nothing was sent.',
      );
    }
    if (!dest.tls && dest.port === ownPort) throw refuse('VLT-2049');
    let values: Buffer[];
    try {
      values = await opts.resolve(
        t.refs.map((r) => ({ entry: r.entry, field: r.field })),
        dest.host,
        caller,
      );
    } catch (err) {
      if (err instanceof VaultError) throw withRefs(err, t.refs);
      throw err;
    }
    const bad = values.findIndex((v) => unsafeInHeader(v));
    if (bad !== -1) {
      for (const v of values) v.fill(0);
      throw refuse(
        'VLT-2047',
        `The value of ${t.refs[bad]?.written} holds CR, LF or NUL and cannot go in a header; nothing was sent.`,
      );
    }
    const headers = fill(t, values);
    const replacements = t.refs.map((r, i) => ({
      value: values[i] as Buffer,
      reference: Buffer.from(r.written, 'latin1'),
    }));
    return { headers, replacements, address };
  }

  function upstreamRequest(
    req: IncomingMessage,
    { dest, path, caller }: Routed,
    p: Prepared,
    upgrade: boolean,
  ) {
    const headers = [...p.headers];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (chunked) headers.push('Transfer-Encoding', 'chunked');
    const common = {
      host: dest.host,
      port: dest.port,
      lookup: lookupFor(dest.host, dest.port),
      method: req.method,
      path,
      headers,
      setHost: false,
      [CALLER]: caller,
    };
    if (dest.tls) {
      return httpsRequest({
        ...common,
        ...(upgrade ? { agent: false, secureContext: upstreamTrust } : { agent: agents.https }),
        servername: isIP(dest.host) === 0 ? dest.host : undefined,
      });
    }
    // Plain HTTP with a value: to the loopback address the name was judged by.
    const plain = { ...common, host: p.address ?? dest.host };
    return httpRequest({ ...plain, agent: upgrade ? false : agents.http });
  }

  function responseHeaders(raw: readonly string[], p: Prepared, bodyChanges: boolean): string[] {
    let h = forwardable(raw);
    if (bodyChanges) h = without(h, ['content-length', 'content-encoding']);
    if (p.replacements.length === 0) return h;
    return h.flatMap((v, i) => (i % 2 === 1 ? [Scrubber.text(p.replacements, v)] : [v]));
  }

  /**
   * The relay for a response's body once its head is known, or null when the
   * response is refused (a head node:http will not write, or an encoding the
   * scrubber cannot read: the client gets VLT-3008 and `source` is dropped).
   */
  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    p: Prepared,
    status: number,
    message: string,
    raw: string[],
    source: BodySource & { destroy(): void },
  ): Relay | null {
    if (!relayableHead(message, raw)) {
      source.destroy();
      reply(res, refuse('VLT-3008', 'The upstream sent a response head that cannot be relayed.'));
      return null;
    }
    const scrub = new Scrubber(p.replacements).active;
    const noBody = req.method === 'HEAD' || status === 204 || status === 304;
    const encoding = contentEncoding(raw);
    const decoder = scrub && !noBody && encoding !== null ? decoderFor(encoding) : null;
    if (scrub && !noBody && encoding !== null && decoder === null) {
      source.destroy();
      reply(
        res,
        refuse(
          'VLT-3008',
          `Response in an encoding the proxy cannot check for echoed values (${encoding}).`,
        ),
      );
      return null;
    }
    const headers = responseHeaders(raw, p, scrub && !noBody);
    const replacements = scrub && !noBody ? p.replacements : null;
    return new Relay(res, status, message, headers, replacements, decoder, source);
  }

  /** The request line and headers of a request going upstream, as written. */
  function requestHead(req: IncomingMessage, path: string, p: Prepared, chunked: boolean): string {
    let head = `${req.method} ${path} HTTP/1.1\r\n`;
    const h = p.headers;
    for (let i = 0; i + 1 < h.length; i += 2) head += `${h[i]}: ${h[i + 1]}\r\n`;
    if (chunked) head += 'Transfer-Encoding: chunked\r\n';
    // Our own hop to the upstream, kept alive (as node:http's client says it).
    return head + 'Connection: keep-alive\r\n\r\n';
  }

  const upstreamFailure = (dest: Destination, reason: string) =>
    refuse('VLT-3008', `Upstream ${dest.host}:${dest.port}: ${reason}.`);

  /** A request inside a tunnel: one exchange on the tunnel's upstream connection (exchange.ts). */
  function exchangeInTunnel(
    req: IncomingMessage,
    res: ServerResponse,
    dest: Destination,
    path: string,
    p: Prepared,
    own: TunnelUpstream,
  ): void {
    const chunked = req.headers['transfer-encoding'] !== undefined;
    let relay: Relay | null = null;
    const x: Exchange = new Exchange(
      own.take(),
      requestHead(req, path, p, chunked),
      { chunked, headOnly: req.method === 'HEAD' },
      {
        head: (status, message, raw) => (relay = respond(req, res, p, status, message, raw, x)),
        body: (chunk) => {
          scavenger.count(chunk);
          relay?.body(chunk);
        },
        end: () => relay?.end(),
        fail: (reason, headSeen) => {
          if (headSeen) relay?.fail();
          else reply(res, upstreamFailure(dest, reason));
        },
      },
      (socket) => own.give(socket),
    );
    sendBody(req, res, x);
  }

  /**
   * The request's body on to the upstream as it comes, with back-pressure
   * (nothing for a bodyless request); the client giving up, or its request
   * ending early, ends the upstream side too.
   */
  function sendBody(req: IncomingMessage, res: ServerResponse, up: UpstreamBody): void {
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    if (isBodyless(req)) {
      req.resume();
      up.end();
      return;
    }
    req.on('data', (chunk: Buffer) => {
      scavenger.count(chunk);
      if (!up.write(chunk)) {
        req.pause();
        up.onceDrain(() => req.resume());
      }
    });
    req.on('end', () => up.end());
    req.on('error', () => up.destroy());
    req.on('close', () => {
      if (!req.complete) up.destroy();
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, r: Routed): Promise<void> {
    const { dest, path } = r;
    let p: Prepared;
    try {
      p = await prepare(req, r, false);
    } catch (err) {
      req.resume();
      return reply(
        res,
        err instanceof VaultError ? err : new VaultError('VLT-3007', undefined, { cause: err }),
      );
    }
    // The values stay for scrubbing until the exchange ends; then they are zeroed
    // (best effort: the header strings built from them are JavaScript strings).
    if (p.replacements.length > 0) res.once('close', () => wipeValues(p));
    const own = dest.tls ? tunnelUpstream(req.socket, dest) : null;
    if (own !== null) return exchangeInTunnel(req, res, dest, path, p, own);

    // Absolute-form requests (plain HTTP, or https:// without a tunnel): node:http's client.
    const up = upstreamRequest(req, r, p, false);
    let relay: Relay | null = null;
    up.on('response', (upRes) => {
      const r = respond(
        req,
        res,
        p,
        upRes.statusCode ?? 502,
        upRes.statusMessage ?? '',
        upRes.rawHeaders,
        upRes,
      );
      if (r === null) return;
      relay = r;
      upRes.on('data', (chunk: Buffer) => {
        scavenger.count(chunk);
        r.body(chunk);
      });
      upRes.on('end', () => r.end());
      upRes.on('error', () => r.fail());
    });
    up.on('error', (err: NodeJS.ErrnoException) => {
      // Mid-response: the client is cut off, as for a failed body.
      if (relay !== null || res.headersSent) {
        relay?.fail();
        res.destroy();
        return;
      }
      reply(res, upstreamFailure(dest, err.code ?? 'connection failed'));
    });
    sendBody(req, res, {
      write: (chunk) => up.write(chunk),
      onceDrain: (resume) => up.once('drain', resume),
      end: () => up.end(),
      destroy: () => up.destroy(),
    });
  }

  async function handleUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    r: Routed,
  ): Promise<void> {
    const { dest } = r;
    let p: Prepared;
    try {
      p = await prepare(req, r, true);
    } catch (err) {
      return rawError(socket, err instanceof VaultError ? err : new VaultError('VLT-3007'));
    }
    // With a value injected, the server's frames are read and scrubbed
    // (websocket.ts): no extension is offered, so none can compress them.
    const scrub = new Scrubber(p.replacements).active;
    const sent = scrub ? { ...p, headers: without(p.headers, ['sec-websocket-extensions']) } : p;
    const up = upstreamRequest(req, r, sent, true);
    socket.once('close', () => wipeValues(p));
    up.on('upgrade', (upRes, upSocket, upHead) => {
      if (!isWebSocket(upRes.headers.upgrade)) {
        upSocket.destroy();
        return rawError(
          socket,
          refuse('VLT-3008', `Upstream ${dest.host}:${dest.port} switched to another protocol.`),
        );
      }
      const headers = forwardable(upRes.rawHeaders, true);
      let text = `HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}\r\n`;
      for (let i = 0; i + 1 < headers.length; i += 2) {
        text += `${headers[i]}: ${Scrubber.text(p.replacements, headers[i + 1] as string)}\r\n`;
      }
      socket.write(text + '\r\n', 'latin1');
      if (head.length > 0) upSocket.write(head);
      upSocket.on('error', () => socket.destroy());
      socket.on('error', () => upSocket.destroy());
      socket.pipe(upSocket);
      // The server closed: what the client still sends (its close frame) has
      // nowhere to go. Writing it to the ended connection would fail and tear
      // down the client's side before it reads the server's last frames.
      upSocket.once('end', () => socket.unpipe(upSocket));
      if (!scrub) {
        if (upHead.length > 0) socket.write(upHead);
        upSocket.pipe(socket);
        return;
      }
      const frames = new ServerFrameScrubber(p.replacements);
      // A frame it cannot read or hold: the client got a close frame; the server is dropped.
      frames.once('refused', () => upSocket.destroy());
      frames.on('error', () => socket.destroy());
      if (upHead.length > 0) frames.write(upHead);
      upSocket.pipe(frames).pipe(socket);
    });
    up.on('response', (upRes) => {
      // The server declined the upgrade: an ordinary response, then close.
      const headers = forwardable(upRes.rawHeaders);
      let text = `HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage}\r\n`;
      for (let i = 0; i + 1 < headers.length; i += 2) {
        if ((headers[i] as string).toLowerCase() === 'content-length') continue;
        text += `${headers[i]}: ${Scrubber.text(p.replacements, headers[i + 1] as string)}\r\n`;
      }
      socket.write(text + 'Connection: close\r\n\r\n', 'latin1');
      pipeline(upRes, scrubStream(p.replacements), socket, () => socket.destroy());
    });
    up.on('error', (err: NodeJS.ErrnoException) =>
      rawError(
        socket,
        refuse(
          'VLT-3008',
          `Upstream ${dest.host}:${dest.port}: ${err.code ?? 'connection failed'}.`,
        ),
      ),
    );
    up.end();
  }

  /**
   * The caller a CONNECT or absolute-form request names, or the refusal:
   * credentials that cannot be read are never taken for "none", so a caller
   * who meant to be someone is not quietly served as the default identity.
   */
  function callerOf(req: IncomingMessage): string | null | VaultError {
    const c = credentials(req.rawHeaders);
    if (c.kind === 'token') return c.token;
    if (c.kind === 'malformed' || opts.requireCaller === true) return new Unauthenticated();
    return null;
  }

  /**
   * Where a request goes and for whom: its CONNECT tunnel's target and caller,
   * or its absolute-form URL and its own Proxy-Authorization.
   */
  function route(req: IncomingMessage): Routed | VaultError {
    const tunnel = tunnels.get(req.socket);
    const url = req.url ?? '';
    if (tunnel !== undefined) {
      if (url.startsWith('/') || url === '*') {
        return { dest: tunnel, path: url, caller: tunnel.caller };
      }
      return refuse('VLT-2048', 'Inside a tunnel, requests are in origin form.');
    }
    const m = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
    if (m === null) return refuse('VLT-2049');
    const tls = (m[1] as string).toLowerCase() === 'https';
    const a = parseAuthority(m[2] as string, tls ? 443 : 80);
    if (a === null) return refuse('VLT-2048', 'Invalid host in the request URL.');
    if (isSelf(a)) return refuse('VLT-2049');
    const caller = callerOf(req);
    if (caller instanceof VaultError) return caller;
    const rest = m[3] as string;
    return {
      dest: { tls, ...a },
      path: rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`,
      caller,
    };
  }

  /**
   * Connections whose framing was refused. Node parses requests pipelined
   * behind the refused one and emits them at once; they are never forwarded
   * (the connection closes after the refusal), since where they begin is
   * exactly what the two readings disagree on.
   */
  const poisoned = new WeakSet<Socket>();

  /** The checks that must run before any other request on the connection is looked at. */
  const precheck = (req: IncomingMessage): Routed | VaultError => {
    if (poisoned.has(req.socket)) return refuse('VLT-2048');
    const framing = framingProblem(req.rawHeaders);
    if (framing !== null) {
      poisoned.add(req.socket);
      return refuse('VLT-2048', `Ambiguous request framing (${framing}); nothing was sent.`);
    }
    return route(req);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const seenBad = poisoned.has(req.socket);
    const r = precheck(req);
    if (r instanceof VaultError) {
      req.resume();
      // Behind a refused request: no reply; the connection ends after the refusal.
      if (!seenBad) reply(res, r);
      return;
    }
    void handle(req, res, r);
  };
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Only a Node without shouldUpgradeCallback gets here with another protocol.
    if (!isWebSocket(req.headers.upgrade)) {
      return rawError(socket, refuse('VLT-2048', 'Only WebSocket upgrades are relayed.'));
    }
    const r = precheck(req);
    if (r instanceof VaultError) return rawError(socket, r);
    void handleUpgrade(req, socket, head, r);
  };
  const onClientError = (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    rawError(
      socket,
      refuse('VLT-2048', `Malformed request (${err.code ?? 'parse error'}); nothing was sent.`),
    );
  };

  const serverOptions = {
    requestTimeout: 0,
    headersTimeout: 60_000,
    keepAliveTimeout: 30_000,
    // Only a WebSocket handshake is an upgrade. Any other (h2c, TLS upgrade)
    // is an ordinary request whose Upgrade is dropped as hop-by-hop: the
    // upstream answers it in HTTP/1.1, and no protocol the proxy cannot read
    // (and so cannot scrub) runs over a connection it relays.
    shouldUpgradeCallback: (req: IncomingMessage) => isWebSocket(req.headers.upgrade),
  };
  // The tunnels' decrypted connections: never listens, gets sockets handed over.
  const inner: Server = createServer(serverOptions);
  inner.on('request', onRequest);
  inner.on('upgrade', onUpgrade);
  inner.on('clientError', onClientError);

  const outer: Server = createServer(serverOptions);
  outer.on('request', onRequest);
  outer.on('upgrade', onUpgrade);
  outer.on('clientError', onClientError);
  outer.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const a = parseAuthority(req.url ?? '', null);
    if (a === null) return rawError(socket, refuse('VLT-2048', 'Invalid CONNECT target.'));
    if (isSelf(a)) return rawError(socket, refuse('VLT-2049'));
    const caller = callerOf(req);
    if (caller instanceof VaultError) return rawError(socket, caller);
    void admit(caller)
      .then(() => confined(a))
      .then(
        (local) =>
          local === null ? openTunnel(socket as Socket, head, a, caller) : rawError(socket, local),
        (err: unknown) =>
          rawError(socket, err instanceof VaultError ? err : new VaultError('VLT-3007')),
      );
  });

  /** Answers a CONNECT and serves what comes through it, decrypted, as requests. */
  function openTunnel(
    socket: Socket,
    head: Buffer,
    a: { host: string; port: number },
    caller: string | null,
  ): void {
    if (socket.destroyed) return;
    if (head.length > 0) socket.unshift(head);
    socket.setNoDelay(true);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    const tls = new TLSSocket(socket, {
      isServer: true,
      secureContext: opts.authority.contextFor(a.host),
      ALPNProtocols: ['http/1.1'],
    });
    tls.on('error', () => tls.destroy());
    tunnels.set(tls, { tls: true, ...a, caller });
    inner.emit('connection', tls);
  }

  return new Promise((resolve, reject) => {
    outer.once('error', reject);
    outer.listen(opts.port, '127.0.0.1', () => {
      const addr = outer.address();
      ownPort = typeof addr === 'object' && addr !== null ? addr.port : opts.port;
      resolve({
        port: ownPort,
        accept: (socket) => outer.emit('connection', socket),
        close: () =>
          new Promise<void>((done) => {
            agents.https.destroy();
            upstreams.close();
            agents.http.destroy();
            outer.closeAllConnections();
            inner.closeAllConnections();
            outer.close(() => done());
          }),
      });
    });
  });
}

/** Where a request's caller rides in node:http's request options, for the agents' pool names. */
const CALLER = Symbol('caller');
type WithCaller = { [CALLER]?: string | null };
const callerPart = (o: unknown) => {
  const c = (o as WithCaller | undefined)?.[CALLER];
  return c === undefined || c === null ? ':-' : `:+${c}`;
};

/**
 * node:http's agents, pooling by caller as well as origin: a kept-alive
 * upstream connection one caller used is never handed to another
 * (upstream.ts does the same for tunnels).
 */
class CallerHttpsAgent extends HttpsAgent {
  override getName(o?: Parameters<HttpsAgent['getName']>[0]): string {
    return super.getName(o) + callerPart(o);
  }
}
class CallerHttpAgent extends HttpAgent {
  override getName(o?: Parameters<HttpAgent['getName']>[0]): string {
    return super.getName(o) + callerPart(o);
  }
}

/** Is this Upgrade header value a WebSocket handshake (`websocket`, any case)? */
function isWebSocket(upgrade: string | undefined): boolean {
  return upgrade !== undefined && upgrade.trim().toLowerCase() === 'websocket';
}

function wipeValues(p: Prepared): void {
  for (const r of p.replacements) r.value.fill(0);
}

/** A refusal of several references names each bad one by what the caller wrote, never a value. */
function withRefs(err: VaultError, refs: readonly HeaderRef[]): VaultError {
  if (err.problems.length === 0) return err;
  const named = err.problems.map((p) => `${refs[p.index]?.written}: ${p.code}`).join('; ');
  return new VaultError(err.code, `${err.message} ${named}`, {
    cause: err,
    problems: err.problems,
  });
}
