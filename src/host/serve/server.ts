/**
 * The vault host's socket server: HTTP+JSON on a Unix socket (mode 0600) in
 * the vault directory, the session sockets of `run`, the framed channel and
 * the remote listener; the host lock, the idle stop and the shutdown. What
 * one request does is requests.ts.
 */
import { chmodSync, closeSync, constants, mkdirSync, openSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { ERRORS, VaultError } from '../../core/errors.js';
import { CHANNEL_PATH, CHANNEL_UPGRADE } from '../../core/frames.js';
import { LOCK_NAME, SOCKET_NAME } from '../../core/protocol.js';
import { tryLock } from '../../kernel/unix.js';
import { holdYoungGenerationForGood } from '../../store/young.js';
import { callerAt } from './caller.js';

export { isFailedCommitEcho } from '../../store/open.js';
import { HostContext } from '../context.js';
import {
  OwnerSessions,
  type Binding,
  type ProcessBinding,
  type SessionTerms,
} from '../owner/unlock.js';
import { endOrphanedSessions, revokeSession } from '../agent/sessions.js';
import { SessionSockets } from './session-sockets.js';
import { Crowd } from './crowd.js';
import { FD_RESERVE, openFileLimit } from './descriptors.js';
import { Intake, MAX_PER_PEER } from './intake.js';
import { serveChannel } from './channel.js';
import type { Server as HttpsServer } from 'node:https';
import {
  listenRemote,
  remoteGuard,
  remoteSource,
  REMOTE_BUDGET,
  type RemoteListen,
} from './remote.js';
import type { HostEnv } from '../ops/op.js';
import {
  answerFrame,
  bindingFor,
  crowded,
  callers,
  processFor,
  refuseUpgrade,
  sandboxGuard,
  serve,
  sourceOf,
  type Guard,
} from './requests.js';

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
  /**
   * Resolves once the host has stopped and closed its store; or, when the
   * store got stuck (VaultStore.onStuck), once it has stopped serving and let
   * go of its lock, the store left open: then `stuck()` says why, and the
   * process must end without closing it.
   */
  readonly stopped: Promise<void>;
  stop(): void;
  stuck(): string | null;
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

/** The least time between two runs of the start-up scan while the disk fails to read the store. */
const RESCAN_MS = 1000;

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
  // Its memory must not grow with its load (issue 42; src/store/young.ts).
  holdYoungGenerationForGood();
  const host = new HostRun(opts, log, lock, socketDir);
  await host.openAndListen(socketPath);
  try {
    chmodSync(socketPath, shared ? 0o660 : 0o600);
    await host.listenRemote();
  } catch (err) {
    host.stop();
    throw err;
  }
  host.touch();
  log(`listening on ${socketPath}`);
  return { socketPath, stopped: host.stopped, stop: host.stop, stuck: () => host.stuckWhy };
}

/** A socket's request listener, as HostRun.route makes it. */
type Route = (
  guard: Guard | null,
  source: (req: IncomingMessage) => string,
  binding: (req: IncomingMessage) => Binding | null,
  process?: (req: IncomingMessage) => ProcessBinding | null,
) => ReturnType<typeof serve>;

/** One running host: its store's context, its sockets, its idle timer and its stop. */
class HostRun {
  readonly ctx: HostContext;
  readonly stopped: Promise<void>;
  #resolveStopped: () => void = () => {};
  #stopping = false;
  #idle: NodeJS.Timeout | undefined;
  #remote: HttpsServer | null = null;
  readonly #owners: OwnerSessions;
  readonly #followers = { count: 0 };
  readonly #sockets: SessionSockets;
  // Connections open on the main socket: an idle stop waits for none, so a
  // client that has just connected (an owner's client checking the host, say)
  // is answered instead of cut off mid-check.
  readonly #open = new Set<Socket>();
  // The framed channel (channel.ts): only on this socket, not a session's or the remote one.
  readonly #channels = new Set<Socket>();
  readonly #intake = new Intake();
  readonly #env: HostEnv;
  readonly #server: Server;

  constructor(
    private readonly opts: HostOptions,
    private readonly log: (line: string) => void,
    private readonly lock: number,
    socketDir: string,
  ) {
    const shared = socketDir !== opts.dir;
    this.ctx = new HostContext(opts.dir, opts.now, opts.storeUrl ?? null);
    this.stopped = new Promise<void>((r) => (this.#resolveStopped = r));
    this.#owners = new OwnerSessions(this.ctx.now, opts.ownerSessions);
    this.#sockets = new SessionSockets(
      socketDir,
      shared,
      (id) =>
        this.route(
          sandboxGuard(id),
          (req) => `sandbox ${sourceOf(req)}`,
          () => null,
        ),
      (id) => {
        this.ctx.callers.clear();
        revokeSession(this.ctx, id, 'host');
      },
    );
    this.#env = {
      ctx: this.ctx,
      sockets: this.#sockets,
      stop: this.stop,
      startedAt: this.ctx.now(),
      mode: shared ? 'hardened' : 'same-user',
      followers: this.#followers,
      owners: this.#owners,
      log,
    };
    this.#server = createServer(this.route(null, sourceOf, bindingFor, processFor));
    // A proxy keeps its connections (src/client/channel.ts HostChannel drops its idle ones sooner).
    this.#server.keepAliveTimeout = 5000;
    this.#acceptConnections();
    this.#acceptUpgrades();
    this.ctx.events.on('stuck', (why: string) => this.#abandon(why));
  }

  readonly route: Route = (guard, source, binding, process) =>
    serve(this.#env, {
      guard,
      source,
      binding,
      process,
      touch: this.touch,
      log: this.log,
      intake: this.#intake,
    });

  readonly stop = (): void => {
    this.#closeAll(() => this.ctx.close());
  };

  /** Why the store got stuck (VaultStore.onStuck), once it has. */
  stuckWhy: string | null = null;

  /**
   * The store can be neither used nor closed in this process: stop serving
   * (every request meanwhile was refused with VLT-3004 naming the cause) and
   * let go of the lock, the store left as it is, for daemon.ts to end the
   * process; the next client starts a fresh host, which opens the file anew.
   */
  #abandon(why: string): void {
    if (this.#stopping) return;
    this.stuckWhy = why;
    this.#closeAll(async () => {});
  }

  /** Closes every listener and connection, then `closeStore`, then lets go of the lock. */
  #closeAll(closeStore: () => Promise<void>): void {
    if (this.#stopping) return;
    this.#stopping = true;
    clearTimeout(this.#idle);
    this.#remote?.close();
    this.#remote?.closeAllConnections();
    // The lock goes last: until then no other host may bind or unlink host.sock.
    this.#server.close(() => {
      void closeStore().finally(() => {
        closeSync(this.lock);
        this.#resolveStopped();
      });
    });
    this.#server.closeAllConnections();
    // Upgraded connections are no longer the HTTP server's to close.
    for (const c of this.#channels) c.destroy();
    this.#sockets.closeAll();
    this.#owners.endAll();
  }

  readonly touch = (): void => {
    // A connection closing as the host stops must not arm a timer that keeps it alive.
    if (this.opts.idleMs <= 0 || this.#stopping) {
      clearTimeout(this.#idle);
      return;
    }
    // Pushed back rather than made anew: every request and frame touches it.
    // (A timer that has fired is armed again by refresh.)
    if (this.#idle !== undefined) {
      this.#idle.refresh();
      return;
    }
    this.#idle = setTimeout(() => {
      // A follower, an open connection, or an owner session the owner means to use for a while longer.
      if (this.#followers.count > 0 || this.#open.size > 0 || this.#owners.anyLive())
        return this.touch();
      this.log('idle: stopping');
      this.stop();
    }, this.opts.idleMs);
  };

  /** Counts each connection to its process, and refuses a process that holds too many. */
  #acceptConnections(): void {
    // What the main socket may hold: the host's descriptors less the reserve and
    // what the session sockets hold (crowd.ts). Read once: the limit is the process's.
    const fdLimit = openFileLimit();
    const crowd = new Crowd(() =>
      // The TLS listener's whole budget is set aside, whether or not it is in use (remote.ts).
      Math.max(
        MAX_PER_PEER,
        fdLimit - FD_RESERVE - this.#sockets.connections - (this.opts.remote ? REMOTE_BUDGET : 0),
      ),
    );
    this.#server.on('connection', (socket: Socket) => {
      this.#open.add(socket);
      this.touch();
      // Who connected, taken now: the pid may name another process by a later request.
      const caller = callerAt(socket);
      callers.set(socket, caller);
      const peer = caller?.peer ?? null;
      const key = peer === null ? null : `${peer.uid}:${peer.pid}`;
      crowd.add(key ?? 'unknown', socket);
      if (key !== null && !this.#intake.connect(key)) {
        crowded.add(socket);
        // Its one refusal, then gone: a connection that sends nothing is not kept.
        socket.setTimeout(2000, () => socket.destroy());
      }
      socket.once('close', () => {
        if (key !== null) this.#intake.disconnect(key);
        crowd.remove(key ?? 'unknown', socket);
        this.#open.delete(socket);
        this.touch();
      });
    });
  }

  /** The framed channel (channel.ts): an upgrade of a main-socket connection. */
  #acceptUpgrades(): void {
    this.#server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.touch();
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
      this.#channels.add(socket);
      socket.once('close', () => this.#channels.delete(socket));
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${CHANNEL_UPGRADE}\r\n\r\n`,
      );
      const answer = answerFrame(this.#env, this.log, sourceOf(req));
      serveChannel(socket, head, { intake: this.#intake, touch: this.touch, answer });
    });
  }

  /**
   * Opens the store and listens on `socketPath`; on any failure, closes the
   * store and lets go of the lock, with nothing served.
   */
  async openAndListen(socketPath: string): Promise<void> {
    try {
      // A store a reader can crash (LMDB: a damaged page crashes whoever opens
      // it, and a page that reads survive can crash the first write into it, an
      // audit record, with nearly every request) is read, and written into on a
      // copy, first in a child, before any request can open it here: refused
      // with VLT-3034 instead of dying at every request. After the host lock
      // (taken above), so a second host started meanwhile stops at the lock
      // instead of reading too; the child never takes host.lock. It costs the
      // start about 0.1 s on a 100 KB store, most of it the child's Node start,
      // and 10-15 s at 100,000 entries (300 MB); not run when the file is byte
      // for byte the one the last host closed cleanly (store/lmdb/known-good.ts:
      // its hash, about 0.3 s at 300 MB).
      await this.#scan();
      this.ctx.rescan = this.#rescan;
      // Before the socket listens, so that a start that fails ends here, with
      // nothing served: a start that threw after listening left a host serving
      // half-started, with no idle stop and no signal handlers.
      if (this.ctx.damaged === null && this.ctx.scanFault === null)
        endSessionsOfEarlierHost(this.ctx, this.log);
      // Under the lock, a socket file left here is a dead host's: no live host can own it.
      rmSync(socketPath, { force: true });
      await listenOnce(this.#server, socketPath);
    } catch (err) {
      await this.ctx.close().catch(() => undefined);
      closeSync(this.lock);
      throw err;
    }
  }

  /**
   * The start-up scan (above): damage found is kept (VLT-3034 until `vault
   * check` or a restore); a disk that fails to read the store (EIO) is not
   * damage: it is kept as the refusal naming it (VLT-3004), and the scan runs
   * again on a later request (#rescan) until the store reads whole.
   */
  async #scan(): Promise<void> {
    try {
      this.ctx.damaged = (await this.ctx.place().scan?.(this.log)) ?? null;
      this.ctx.scanFault = null;
    } catch (err) {
      if (!(err instanceof VaultError && err.code === 'VLT-3004')) throw err;
      this.ctx.scanFault = err;
      this.log(`the start-up scan: ${err.message}`);
      return;
    }
    if (this.ctx.damaged !== null) this.log(`the store cannot be read whole: ${this.ctx.damaged}`);
  }

  /** When the scan ended last (ms since the epoch), and whether one runs now. */
  #scanned = Date.now();
  #scanning = false;

  /**
   * The start-up scan again, after a disk fault kept the store unread: asked
   * by each request refused meanwhile, run at most once at a time and not
   * within a second of the last one (a scan reads the whole file). Once it
   * reads whole, the sessions of an earlier host end, as at a start, in the
   * same turn that lets requests open the store.
   */
  readonly #rescan = (): void => {
    if (this.#scanning || this.#stopping || Date.now() - this.#scanned < RESCAN_MS) return;
    this.#scanning = true;
    void this.#scan()
      .then(() => {
        if (this.#stopping) return;
        if (this.ctx.damaged === null && this.ctx.scanFault === null) {
          this.log('the store reads whole again: serving');
          endSessionsOfEarlierHost(this.ctx, this.log);
        }
      })
      .catch((err: unknown) =>
        this.log(`the store scan failed: ${err instanceof Error ? err.name : typeof err}`),
      )
      .finally(() => {
        this.#scanning = false;
        this.#scanned = Date.now();
      });
  };

  /** Also takes remote agents over TCP with TLS, when asked (remote.ts). */
  async listenRemote(): Promise<void> {
    const remote = this.opts.remote;
    if (!remote) return;
    this.#remote = await listenRemote(
      remote,
      this.route(remoteGuard, remoteSource, () => null),
    );
    this.log(`listening for remote agents on ${remote.listen} (TLS)`);
  }
}
