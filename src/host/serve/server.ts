/**
 * The vault host's socket server: HTTP+JSON on a Unix socket (mode 0600) in
 * the vault directory. It parses and checks requests, calls the operations and
 * turns their errors into `{ ok: false, code, message }`. It never logs a
 * request body, and a reply never carries a secret except the one asked for.
 */
import { chmodSync, closeSync, constants, mkdirSync, openSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { bad } from '../../core/decode.js';
import { ERRORS, VaultError, isErrorCode } from '../../core/errors.js';
import { CHANNEL_PATH, CHANNEL_UPGRADE } from '../../core/frames.js';
import { LOCK_NAME, PROTOCOL_VERSION, SOCKET_NAME, type Op } from '../../core/protocol.js';
import { REQUESTS } from '../../core/requests.js';
import { peerCred, tryLock, type PeerCred } from '../../kernel/unix.js';
import { parseToken } from '../../crypto/token.js';

export { isFailedCommitEcho } from '../../store/open.js';
import { HostContext } from '../context.js';
import { liftOwnerSecrets, OwnerSecrets } from '../owner/secrets.js';
import {
  bindingOf,
  OwnerSessions,
  processOf,
  type Binding,
  type ProcessBinding,
  type SessionTerms,
} from '../owner/unlock.js';
import { endOrphanedSessions, revokeSession } from '../agent/sessions.js';
import { SessionSockets } from './session-sockets.js';
import { Crowd } from './crowd.js';
import { FD_RESERVE, openFileLimit } from './descriptors.js';
import { ACCESS_REFUSALS, storeDamage } from '../vault/damage-probe.js';
import { Held, Intake, MAX_BODY, MAX_PER_PEER } from './intake.js';
import { serveChannel } from './channel.js';
import { CALLER_OPS, OPS, SANDBOX_OPS } from '../ops/index.js';
import type { Server as HttpsServer } from 'node:https';
import { listenRemote, remoteGuard, remoteSource, type RemoteListen } from './remote.js';
import { anchoredBy, type Handler, type HostEnv, type Request, type Streamed } from '../ops/op.js';

/** How much of a too-large body is read (and discarded) to answer it before its connection is cut. */
const MAX_DRAIN = 64 * 1024 * 1024;

type Body = Record<string, unknown>;

/**
 * What the host log says of an unexpected error: its class, errno-style code
 * and top stack frame. Never its message: a dependency's message could quote
 * the input that failed, and the input may be a secret.
 */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const code = (err as { code?: unknown }).code;
  const frame =
    err.stack
      ?.split('\n')
      .find((l) => l.trim().startsWith('at '))
      ?.trim() ?? '';
  return [
    err.name,
    typeof code === 'string' || typeof code === 'number' ? `code ${code}` : '',
    frame,
  ]
    .filter(Boolean)
    .join(' ');
}

export interface HostOptions {
  readonly dir: string;
  /**
   * Where the socket goes, when not in `dir`: the hardened host's socket
   * directory, which its group may reach. The socket is then 0660 (the group
   * connects) and the directory the host's alone to write.
   */
  readonly socketDir?: string;
  /** Stop after this long without a request; 0 for never. */
  readonly idleMs: number;
  /** How long an owner session lasts when `unlock` does not say (owner-unlock.ts sessionTerms). */
  readonly ownerSessions?: SessionTerms;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  /** A PostgreSQL store to serve (VAULT_STORE_URL), over the vault directory's own choice. */
  readonly storeUrl?: string | null;
  /** Also take remote agents over TCP with TLS (VAULT_LISTEN_TLS; remote.ts). */
  readonly remote?: RemoteListen | null;
}

export interface RunningHost {
  readonly socketPath: string;
  /** Resolves once the host has stopped and closed its store. */
  readonly stopped: Promise<void>;
  stop(): void;
}

/**
 * A request's body, parsed, and the owner's secrets taken out of its bytes
 * before they became a string (owner-secrets.ts).
 */
function readBody(
  req: IncomingMessage,
  intake: Intake,
  held: Held,
): Promise<{ body: Body; secrets: OwnerSecrets }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let busy = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (busy) return;
      if (size <= MAX_BODY) {
        if (intake.keep(held, size)) {
          chunks.push(c);
          return;
        }
        // More than the pool holds: refused now, and the connection closed
        // once the refusal is out. Read on and discarded, the rest would
        // pass through the host's memory as garbage, as fast as a client
        // can send it.
        busy = true;
        c.fill(0);
        for (const kept of chunks.splice(0)) kept.fill(0);
        intake.release(held);
        req.pause();
        reject(
          new VaultError(
            'VLT-3012',
            'The vault host holds as many request bytes as it accepts; try again once some are answered.',
          ),
        );
        return;
      }
      // Too large: what came is dropped and the rest read and discarded, so
      // the client, still writing, gets its refusal instead of a cut
      // connection (VLT-3005, "the host stopped"). Past MAX_DRAIN it is cut.
      c.fill(0);
      for (const kept of chunks.splice(0)) kept.fill(0);
      intake.release(held);
      if (size > MAX_DRAIN) req.destroy();
    });
    req.on('end', () => {
      if (size > MAX_BODY) {
        reject(
          new VaultError(
            'VLT-1002',
            `The request is larger than the host accepts (${MAX_BODY / 1024 / 1024} MiB); a value that large cannot be stored.`,
          ),
        );
        return;
      }
      if (busy) return;
      const raw = Buffer.concat(chunks);
      try {
        // The owner's secrets leave as Buffers before the bytes become a string.
        const secrets = new OwnerSecrets(liftOwnerSecrets(raw));
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw.toString('utf8') || '{}');
        } catch (err) {
          secrets.wipe();
          throw err;
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          secrets.wipe();
          throw bad('body');
        }
        resolve({ body: parsed as Body, secrets });
      } catch (err) {
        reject(err instanceof VaultError ? err : bad('body is not JSON'));
      } finally {
        raw.fill(0);
        for (const c of chunks) c.fill(0);
      }
    });
    req.on('error', reject);
  });
}

const peers = new WeakMap<Socket, PeerCred | null>();

/** The connecting process as the kernel recorded it (SO_PEERCRED), or null off Linux. */
function peerOf(req: IncomingMessage): PeerCred | null {
  const socket = req.socket;
  let peer = peers.get(socket);
  if (peer === undefined) {
    try {
      peer = peerCred(socket);
    } catch {
      peer = null;
    }
    peers.set(socket, peer);
  }
  return peer;
}

/**
 * The audit source of a request: `pid:<n> uid:<n>` of the connecting process,
 * as the kernel recorded it (SO_PEERCRED). Nothing the client writes on the
 * socket can change it; a pid the client states about itself is not read.
 */
function sourceOf(req: IncomingMessage): string {
  const peer = peerOf(req);
  return peer === null ? 'local' : `pid:${peer.pid} uid:${peer.uid}`;
}

/** The caller's terminal and session, for an owner session (owner-unlock.ts); read per request. */
function bindingFor(req: IncomingMessage): Binding | null {
  const peer = peerOf(req);
  return peer === null ? null : bindingOf(peer);
}

/** The calling process, for a process hold (owner-unlock.ts); read per request. */
function processFor(req: IncomingMessage): ProcessBinding | null {
  const peer = peerOf(req);
  return peer === null ? null : processOf(peer);
}

async function listenOnce(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(path);
  });
}

/**
 * One host per vault: an exclusive flock on `<dir>/host.lock`, taken before
 * the socket is bound and held until the host has closed its socket and its
 * store. Whoever holds it owns `host.sock`: only the holder removes a socket
 * file (a stale one, before it binds) and its close unlinks only its own, so an
 * orphan host can no longer take the live host's socket path with it.
 * @returns the lock's file descriptor, or null when another host holds it.
 */
function takeHostLock(dir: string): number | null {
  const fd = openSync(
    join(dir, LOCK_NAME),
    constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    if (tryLock(fd)) return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  closeSync(fd);
  return null;
}

export class HostAlreadyRunning extends Error {}

/** What a streamed operation's handling resolves to: its reply is already on its way. */
const streaming: unique symbol = Symbol('streaming');

/** A check of a request before its operation runs (a session socket's gate). */
type Guard = (op: Op, body: Body) => void;

/**
 * A session socket's gate: agent operations only, with that session's token
 * only; anything else is refused before it reaches a handler.
 */
function sandboxGuard(id: string): Guard {
  return (op, b) => {
    if (!SANDBOX_OPS.has(op)) throw new VaultError('VLT-2051');
    const token = typeof b.token === 'string' ? parseToken(b.token) : null;
    if (token?.agentId !== id)
      throw new VaultError('VLT-2051', 'Only this session’s token works inside its sandbox.');
  };
}

/** Connections of a process that held MAX_PER_PEER others when it connected: its requests are refused. */
const crowded = new WeakSet<Socket>();

/** Writes a whole JSON reply, with its length; never cached. */
function reply(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': bytes.length,
    'cache-control': 'no-store',
  });
  res.end(bytes);
}

/**
 * What a failed request is told: a VaultError as it is; damage the store can
 * explain by its code; anything else as an internal error, logged by kind only
 * (a message of a dependency could quote input).
 */
function refusal(env: HostEnv, log: (line: string) => void, op: Op, err: unknown): object {
  if (err instanceof VaultError && ACCESS_REFUSALS.has(err.code)) {
    const damage = storeDamage(env.ctx);
    if (damage !== null) {
      return {
        ok: false,
        code: damage,
        message: `${ERRORS[damage].message} The vault's store is damaged (\`vault-cli vault check\` names the records).`,
      };
    }
  }
  if (err instanceof VaultError && isErrorCode(err.code)) {
    const problems = err.problems.length > 0 ? { problems: err.problems } : {};
    return { ok: false, code: err.code, message: err.message, ...problems };
  }
  log(`internal error in ${op}: ${describe(err)}`);
  const damage = env.ctx.explain(err);
  if (damage !== null) return { ok: false, code: damage, message: ERRORS[damage].message };
  return { ok: false, code: 'VLT-3007', message: 'Internal error in the vault host.' };
}

/**
 * One socket's request listener: `POST /v1/<op>` with a JSON body, read
 * whole (at most MAX_BODY), decoded by the operation's entry in REQUESTS,
 * handed to its handler with the caller's source and the owner's secrets, and
 * answered `{ ok: true, result }` or `{ ok: false, code, message }`. The
 * secrets are wiped once the handler is done, whatever it did.
 */
function serve(
  env: HostEnv,
  how: {
    readonly guard: Guard | null;
    readonly source: (req: IncomingMessage) => string;
    /** Null for every caller on a session socket: no owner session inside a sandbox. */
    readonly binding: (req: IncomingMessage) => Binding | null;
    /** Absent on a session socket: no process hold inside a sandbox either. */
    readonly process?: (req: IncomingMessage) => ProcessBinding | null;
    readonly touch: () => void;
    readonly log: (line: string) => void;
    readonly intake: Intake;
  },
): (req: IncomingMessage, res: ServerResponse) => void {
  const { ctx } = env;
  return (req, res) => {
    how.touch();
    if (crowded.has(req.socket)) {
      req.resume();
      reply(res, 200, {
        ok: false,
        code: 'VLT-3012',
        message: `This process holds ${MAX_PER_PEER} connections to the vault host; try again once some are answered.`,
      });
      return;
    }
    const prefix = `/${PROTOCOL_VERSION}/`;
    const url = req.url ?? '';
    const op = (url.startsWith(prefix) ? url.slice(prefix.length) : '') as Op;
    const def =
      req.method === 'POST' && Object.hasOwn(OPS, op)
        ? (OPS[op] as Handler<Op> | Streamed<Op>)
        : undefined;
    if (def === undefined) {
      reply(res, 404, { ok: false, code: 'VLT-1001', message: 'No such operation.' });
      return;
    }
    // A stream answers by itself, and clears the caller cache when it ends if it must.
    const changes = typeof def === 'function' && !CALLER_OPS.has(op);
    let request: Request<Op> | null = null;
    // The body's bytes count against the pool until the reply is out: a
    // handler may wait (an owner unlock's guess delay) with them parsed.
    const held = new Held();
    res.once('close', () => how.intake.release(held));
    readBody(req, how.intake, held)
      .then(async ({ body, secrets }) => {
        try {
          how.guard?.(op, body);
          request = {
            op,
            body: REQUESTS[op](body, 'body') as Request<Op>['body'],
            source: how.source(req),
            secrets,
            binding: () => how.binding(req),
            process: () => how.process?.(req) ?? null,
          };
          if (typeof def !== 'function') {
            await def.stream(env, request, res);
            return streaming;
          }
          if (changes) ctx.callers.clear();
          return await def(env, request);
        } finally {
          secrets.wipe();
        }
      })
      .finally(() => {
        if (changes) ctx.callers.clear();
      })
      .then(
        (result) => {
          if (result === streaming) return;
          // An owner command's anchor, for its client to remember (ops/op.ts).
          const anchor = request === null ? undefined : anchoredBy(request);
          reply(res, 200, { ok: true, result, ...(anchor === undefined ? {} : { anchor }) });
        },
        (err: unknown) => {
          const answer = refusal(env, how.log, op, err);
          // A stream that failed after its head went out can only be cut.
          if (res.headersSent) res.destroy();
          else {
            // A body refused half-read (the pool was full) is not read on: the connection ends with the reply.
            if (!req.complete) res.setHeader('connection', 'close');
            reply(res, 200, answer);
          }
        },
      );
  };
}

/**
 * A channel request's reply (channel.ts): an agent operation from the
 * connection's peer, decoded and answered as its HTTP request would be. It
 * holds no owner secret and no owner session (binding null): the channel
 * serves none of the owner's commands.
 */
function answerFrame(
  env: HostEnv,
  log: (line: string) => void,
  source: string,
): (op: Op, body: Body) => Promise<object> {
  return async (op, body) => {
    try {
      const request: Request<Op> = {
        op,
        body: REQUESTS[op](body, 'body') as Request<Op>['body'],
        source,
        secrets: new OwnerSecrets(),
        binding: () => null,
        process: () => null,
      };
      return { ok: true, result: await (OPS[op] as Handler<Op>)(env, request) };
    } catch (err) {
      return refusal(env, log, op, err);
    }
  };
}

/** A refusal on a connection that asked to upgrade: plain HTTP, then the connection ends. */
function refuseUpgrade(socket: Socket, status: string, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, code, message });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

/**
 * No `run` holds a session of an earlier host: their sessions end before the
 * first request. A store that cannot be read or written for it (a header that
 * does not decode, a read-only disk) does not stop the start: the host serves,
 * and every request that needs the store is refused with the damage or write
 * failure it meets (`vault check` names it, `vault restore` replaces the store).
 * @throws what is neither (a bug), for the start to fail before the socket listens.
 */
function endSessionsOfEarlierHost(ctx: HostContext, log: (line: string) => void): void {
  try {
    if (!ctx.hasVault()) return;
    const ended = endOrphanedSessions(ctx);
    if (ended > 0) log(`ended ${ended} session(s) left by an earlier host`);
  } catch (err) {
    const code = err instanceof VaultError ? err.code : ctx.explain(err);
    if (code === null) throw err;
    if (code === 'VLT-3040') {
      // A team vault's database that does not answer yet: the host serves
      // refusals until it does, and ends those sessions at its next start.
      log('the vault’s database does not answer; refusing until it does');
      return;
    }
    const found = err instanceof VaultError ? err.message : ERRORS[code].message;
    log(`the store cannot be used as it is (${code}: ${found}); serving refusals`);
  }
}

/**
 * Starts the host on `<dir>/host.sock`.
 * @throws HostAlreadyRunning when another host holds the vault's host lock.
 */
export async function startHost(opts: HostOptions): Promise<RunningHost> {
  const log = opts.log ?? (() => {});
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const socketDir = opts.socketDir ?? opts.dir;
  const shared = socketDir !== opts.dir;
  if (shared) mkdirSync(socketDir, { recursive: true, mode: 0o750 });
  const socketPath = join(socketDir, SOCKET_NAME);
  const lock = takeHostLock(opts.dir);
  if (lock === null) throw new HostAlreadyRunning('a vault host is already running');
  const ctx = new HostContext(opts.dir, opts.now, opts.storeUrl ?? null);
  const startedAt = Date.now();
  let idle: NodeJS.Timeout | undefined;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let stopping = false;

  let remote: HttpsServer | null = null;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    clearTimeout(idle);
    remote?.close();
    remote?.closeAllConnections();
    // The lock goes last: until then no other host may bind or unlink host.sock.
    server.close(() => {
      void ctx.close().finally(() => {
        closeSync(lock);
        resolveStopped();
      });
    });
    server.closeAllConnections();
    // Upgraded connections are no longer the HTTP server's to close.
    for (const c of channels) c.destroy();
    sockets.closeAll();
    owners.endAll();
  };
  const owners = new OwnerSessions(ctx.now, opts.ownerSessions);
  const followers = { count: 0 };
  const sockets = new SessionSockets(
    socketDir,
    shared,
    (id) =>
      route(
        sandboxGuard(id),
        (req) => `sandbox ${sourceOf(req)}`,
        () => null,
      ),
    (id) => {
      ctx.callers.clear();
      revokeSession(ctx, id, 'host');
    },
  );
  // Connections open on the main socket: an idle stop waits for none, so a
  // client that has just connected (an owner's client checking the host, say)
  // is answered instead of cut off mid-check.
  const open = new Set<Socket>();
  // What the main socket may hold: the host's descriptors less the reserve and
  // what the session sockets hold (crowd.ts). Read once: the limit is the process's.
  const fdLimit = openFileLimit();
  const crowd = new Crowd(() => Math.max(MAX_PER_PEER, fdLimit - FD_RESERVE - sockets.connections));
  const touch = () => {
    // A connection closing as the host stops must not arm a timer that keeps it alive.
    if (opts.idleMs <= 0 || stopping) {
      clearTimeout(idle);
      return;
    }
    // Pushed back rather than made anew: every request and frame touches it.
    // (A timer that has fired is armed again by refresh.)
    if (idle !== undefined) {
      idle.refresh();
      return;
    }
    idle = setTimeout(() => {
      // A follower, an open connection, or an owner session the owner means to use for a while longer.
      if (followers.count > 0 || open.size > 0 || owners.anyLive()) return touch();
      log('idle: stopping');
      stop();
    }, opts.idleMs);
  };
  const env: HostEnv = {
    ctx,
    sockets,
    stop,
    startedAt,
    mode: shared ? 'hardened' : 'same-user',
    followers,
    owners,
    log,
  };

  const route = (
    guard: Guard | null,
    source: (req: IncomingMessage) => string,
    binding: (req: IncomingMessage) => Binding | null,
    process?: (req: IncomingMessage) => ProcessBinding | null,
  ) => serve(env, { guard, source, binding, process, touch, log, intake });
  const intake = new Intake();
  const server = createServer(route(null, sourceOf, bindingFor, processFor));
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    touch();
    let peer: PeerCred | null = null;
    try {
      peer = peerCred(socket);
    } catch {
      // off Linux: no per-process count
    }
    peers.set(socket, peer);
    const key = peer === null ? null : `${peer.uid}:${peer.pid}`;
    crowd.add(key ?? 'unknown', socket);
    if (key !== null && !intake.connect(key)) {
      crowded.add(socket);
      // Its one refusal, then gone: a connection that sends nothing is not kept.
      socket.setTimeout(2000, () => socket.destroy());
    }
    socket.once('close', () => {
      if (key !== null) intake.disconnect(key);
      crowd.remove(key ?? 'unknown', socket);
      open.delete(socket);
      touch();
    });
  });
  // A proxy keeps its connections (client.ts HostChannel drops its idle ones sooner).
  server.keepAliveTimeout = 5000;
  // The framed channel (channel.ts): only on this socket, not a session's or the remote one.
  const channels = new Set<Socket>();
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    touch();
    if (crowded.has(socket)) {
      refuseUpgrade(
        socket,
        '200 OK',
        'VLT-3012',
        `This process holds ${MAX_PER_PEER} connections to the vault host; try again once some are answered.`,
      );
      return;
    }
    if (
      req.method !== 'GET' ||
      req.url !== CHANNEL_PATH ||
      req.headers.upgrade?.toLowerCase() !== CHANNEL_UPGRADE
    ) {
      refuseUpgrade(socket, '404 Not Found', 'VLT-1001', 'No such operation.');
      return;
    }
    channels.add(socket);
    socket.once('close', () => channels.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${CHANNEL_UPGRADE}\r\n\r\n`,
    );
    serveChannel(socket, head, { intake, touch, answer: answerFrame(env, log, sourceOf(req)) });
  });

  try {
    // A store LMDB cannot read whole (a damaged page) crashes whoever opens it,
    // and a page that reads survive can crash the first write into it (an
    // audit record, with nearly every request): read it, and write into a copy
    // of it, first in a child, before any request can open it here, and refuse
    // with VLT-3034 instead of dying at every request. After the host lock
    // (taken above), so a second host started meanwhile stops at the lock
    // instead of reading too; the child never takes host.lock. It costs the
    // start about 0.1 s on a 100 KB store, most of it the child's Node start,
    // and about 1.1 s on a 30 MB one (docs/how-it-works.md).
    ctx.damaged = (await ctx.place().scan?.()) ?? null;
    if (ctx.damaged !== null) log(`the store cannot be read whole: ${ctx.damaged}`);
    // Before the socket listens, so that a start that fails ends here, with
    // nothing served: a start that threw after listening left a host serving
    // half-started, with no idle stop and no signal handlers.
    if (ctx.damaged === null) endSessionsOfEarlierHost(ctx, log);
    // Under the lock, a socket file left here is a dead host's: no live host can own it.
    rmSync(socketPath, { force: true });
    await listenOnce(server, socketPath);
  } catch (err) {
    await ctx.close().catch(() => undefined);
    closeSync(lock);
    throw err;
  }
  try {
    chmodSync(socketPath, shared ? 0o660 : 0o600);
    if (opts.remote) {
      remote = await listenRemote(
        opts.remote,
        route(remoteGuard, remoteSource, () => null),
      );
      log(`listening for remote agents on ${opts.remote.listen} (TLS)`);
    }
  } catch (err) {
    stop();
    throw err;
  }
  touch();
  log(`listening on ${socketPath}`);
  return { socketPath, stopped, stop };
}
