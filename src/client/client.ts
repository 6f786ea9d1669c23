/**
 * The thin client every command uses to reach the vault host: one HTTP+JSON
 * request over the host's Unix socket. When no host answers, it starts
 * `vault-cli daemon` in the background and waits for it. It loads no store, no
 * crypto engine and no UI, so `get` stays a short process.
 */
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { connect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { dirname, join } from 'node:path';
import { VaultError, isErrorCode } from '../core/errors.js';
import { CHANNEL_OPS } from '../core/frames.js';
import {
  OWNER_SECRET_FIELDS,
  PROTOCOL_VERSION,
  SOCKET_NAME,
  SPAWNED_BY_ENV,
  STORE_CONFIG,
  STORE_FILE,
  type AnchorRef,
  type Op,
  type Ops,
  type Reply,
} from '../core/protocol.js';
import type { FramedConnection as Framed } from './framed.js';

export interface ClientOptions {
  /** The vault directory (the host's socket is there unless `socketDir` says otherwise). */
  readonly vaultDir: string;
  /** Where the host's socket is: the hardened host's socket directory. */
  readonly socketDir?: string;
  /** The hardened host (its user's uid), when this client uses it: never started from here. */
  readonly system?: { readonly uid: number; readonly user: string } | null;
  /** How to start a host: the node binary and the CLI script to run `daemon` with. */
  readonly daemon: {
    readonly node: string;
    readonly script: string;
    readonly env: NodeJS.ProcessEnv;
  };
  /** Whether to start a host when none answers. */
  readonly autoStart?: boolean;
  /** Accept a host under libfaketime before sending a passphrase (tests only; see host-check.ts). */
  readonly acceptFaketime?: boolean;
  /** The owner's memory of the audit anchor its last command left (src/cli/owner.ts). */
  readonly anchors?: AnchorMemory;
  /**
   * A team host's TLS listener (VAULT_HOST_URL), for an agent on a machine
   * with no host: its certificate checked against `ca`; never started from here.
   */
  readonly remote?: { readonly host: string; readonly port: number; readonly ca: string } | null;
}

/**
 * Where the owner's client keeps the audit anchor its last command left: sent
 * with each owner request (the host refuses a log cut back before it), and
 * replaced by the anchor each reply brings.
 */
export interface AnchorMemory {
  seen(): AnchorRef | undefined;
  remember(anchor: AnchorRef): void;
  /** After a restore: the log is the backup's, older than any anchor remembered. */
  forget(): void;
}

/**
 * Whether a request is the owner's: it names an owner secret field (absent
 * when the terminal's owner session stands for it: the key is still there,
 * undefined) or asks about the owner session. The host is checked before any
 * byte of it is sent, and the owner's anchor memory goes with it.
 */
function ownerRequest(op: string, body: object): boolean {
  return op.startsWith('owner.') || OWNER_SECRET_FIELDS.some((k) => k in body);
}

/**
 * Connects to the host's socket and, when the request carries the owner's
 * secret, checks the process that accepted before anything is written.
 */
function open(
  opts: ClientOptions,
  socketPath: string,
  op: string,
  body: object,
  onReady: (sock: Socket) => void,
  onRefused: (err: unknown) => void,
): Socket {
  const remote = opts.remote;
  if (remote != null) {
    const tls = tlsConnect(
      {
        host: remote.host,
        port: remote.port,
        ca: readFileSync(remote.ca),
        // SNI takes a name only; an address is checked against the certificate's IP entries.
        ...(isIP(remote.host) === 0 ? { servername: remote.host } : {}),
      },
      () => onReady(tls),
    );
    return tls;
  }
  const owner = ownerRequest(op, body);
  const ino = owner ? socketInode(socketPath) : 0;
  const sock = connect(socketPath, () => {
    if (!owner) return onReady(sock);
    import('./host-check.js')
      .then(({ checkHost, hostVanished }) =>
        checkHost(sock, {
          socketDir: dirname(socketPath),
          socketPath,
          node: opts.daemon.node,
          script: opts.daemon.script,
          acceptFaketime: opts.acceptFaketime,
          systemUid: opts.system?.uid,
        }).catch(async (err: unknown) => {
          // A host that stopped under the check is not an impostor: start it again.
          if (await hostVanished(sock, socketPath, ino)) throw new Unreachable('host stopped');
          throw err;
        }),
      )
      .then(
        () => onReady(sock),
        (err: unknown) => {
          sock.destroy();
          onRefused(err);
        },
      );
  });
  return sock;
}

/** The socket file's inode, to tell later whether it is still the one connected to; 0 when absent. */
function socketInode(socketPath: string): number {
  try {
    return lstatSync(socketPath).ino;
  } catch {
    return 0;
  }
}

/** How long a client keeps trying after the daemon it spawned exited (another host may serve). */
const START_WAIT_MS = 10_000;
/** The longest a client waits for a daemon it spawned that still runs. */
const START_WAIT_MAX_MS = 120_000;
/** Daemons one call starts at most, when each found another host holding the lock and none answers. */
const START_TRIES = 3;

class Unreachable extends Error {}

/** The request line and headers; `Connection: close` makes the host close after its reply. */
function requestHead(op: Op, length: number): string {
  return (
    `POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\nConnection: close\r\n\r\n`
  );
}

/**
 * One HTTP/1.1 exchange on a fresh connection, written by hand on node:net:
 * node:http costs `get` 5-30 ms of start-up (on Node 24 its ESM namespace even
 * loads undici), and the host's replies are always small, complete JSON with a
 * Content-Length.
 */
function post<O extends Op>(
  opts: ClientOptions,
  socketPath: string,
  op: O,
  body: Ops[O]['req'],
): Promise<Reply<O>> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const head = requestHead(op, payload.length);
    const chunks: Buffer[] = [];
    let connected = false;
    let refused = false;
    const ready = (sock: Socket) => {
      connected = true;
      // Not end(): the host's HTTP server drops a half-closed connection before
      // it replies. `Connection: close` makes the host close after the reply.
      const wire = Buffer.concat([Buffer.from(head), payload]);
      // The payload may hold a passphrase or value: zero it once the socket has taken it.
      sock.write(wire, () => {
        wire.fill(0);
        payload.fill(0);
      });
    };
    const sock = open(opts, socketPath, op, body, ready, (err) => {
      refused = true;
      payload.fill(0);
      reject(err);
    });
    let settled = false;
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      // Answered once the reply is whole, without waiting for the close: a
      // host that refuses a body it will not read (VLT-3012) closes on the
      // client still writing, whose write then fails (EPIPE).
      if (settled || refused || !wholeReply(chunks)) return;
      settled = true;
      payload.fill(0);
      try {
        resolve(parseReply<O>(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
      sock.destroy();
    });
    sock.on('error', (err: NodeJS.ErrnoException) => {
      payload.fill(0);
      if (settled || refused) return;
      settled = true;
      // Nothing was sent yet: a host that vanished (its idle stop unlinked the
      // socket, or reset a connection it had not accepted) is a stopped host.
      if (
        !connected &&
        (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET')
      ) {
        reject(new Unreachable(err.code));
      } else {
        reject(goneMidRequest(op, err));
      }
    });
    sock.on('end', () => {
      if (settled || refused) return;
      settled = true;
      if (chunks.length === 0) {
        reject(connected ? goneMidRequest(op) : new Unreachable('closed'));
        return;
      }
      try {
        resolve(parseReply<O>(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/**
 * Operations that change the vault. When the host goes away after the request
 * was sent, such a change may have been committed before it died: the client
 * cannot know, and must not say it did not happen.
 */
const WRITES: ReadonlySet<Op> = new Set<Op>([
  'vault.create',
  'vault.rekey',
  'vault.passwd',
  'vault.restore',
  'vault.migrate',
  'entry.set',
  'entry.rm',
  'entry.hosts',
  'entry.import',
  'agent.add',
  'agent.scope',
  'agent.limits',
  'agent.lock',
  'agent.revoke',
  'key.vouch',
  'key.finish',
  'key.rm',
  'unlock.finish',
  'audit.archive',
  'sweep.mark',
]);

/** What to say when the host went away mid-request (killed, crashed) and replied nothing. */
function goneMidRequest(op: Op, cause?: unknown): VaultError {
  const message = WRITES.has(op)
    ? `The vault host stopped before replying: the change may or may not have been saved; run \`vault-cli ${showCommand(op)}\` to see.`
    : // A read or a check releases nothing without a reply.
      'The vault host stopped before replying; nothing was released.';
  return new VaultError('VLT-3005', message, { cause });
}

function showCommand(op: Op): string {
  if (op.startsWith('entry.')) return 'entry show <entry>';
  if (op.startsWith('agent.') || op === 'unlock.finish') return 'agent show <name>';
  if (op.startsWith('key.')) return 'key ls';
  if (op === 'audit.archive') return 'audit --verify';
  return 'vault check';
}

/** Whether `chunks` hold a reply's head and all the body its Content-Length says. */
function wholeReply(chunks: readonly Buffer[]): boolean {
  const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) return false;
  const length = /\r\ncontent-length: *([0-9]+)/i.exec(
    raw.subarray(0, split).toString('latin1'),
  )?.[1];
  return length !== undefined && raw.length - split - 4 >= Number(length);
}

function parseReply<O extends Op>(raw: Buffer): Reply<O> {
  const broken = () => new VaultError('VLT-3007', 'The vault host sent a malformed reply.');
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw broken();
  const head = raw.subarray(0, split).toString('latin1');
  const body = raw.subarray(split + 4);
  const length = /\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1];
  if (!head.startsWith('HTTP/1.1 ') || length === undefined || Number(length) !== body.length) {
    throw broken();
  }
  try {
    return JSON.parse(body.toString('utf8')) as Reply<O>;
  } catch {
    throw broken();
  }
}

/** A daemon this client spawned: whether it still runs. */
interface Spawned {
  readonly exited: () => boolean;
}

async function startDaemon(opts: ClientOptions): Promise<Spawned> {
  const { spawn } = await import('node:child_process');
  mkdirSync(opts.vaultDir, { recursive: true, mode: 0o700 });
  let log: number;
  try {
    log = openSync(join(opts.vaultDir, 'host.log'), 'a', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOSPC') {
      throw new VaultError(
        'VLT-3005',
        `The vault host could not be started: the vault directory is not writable (${code}).`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    // `ulimit -c 0`: the host holds keys, so it never dumps core.
    const child = spawn(
      '/bin/sh',
      ['-c', 'ulimit -c 0; exec "$0" "$@"', opts.daemon.node, opts.daemon.script, 'daemon'],
      {
        detached: true,
        stdio: ['ignore', log, log],
        // The host serves only while the command that started it still waits for it.
        env: { ...opts.daemon.env, [SPAWNED_BY_ENV]: String(process.pid) },
      },
    );
    let exited = false;
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    return { exited: () => exited };
  } finally {
    closeSync(log);
  }
}

/**
 * The daemon this process last started for each host socket. Calls that find
 * no host at once (a burst of proxy fills, a render's parallel steps) share
 * it and each wait for its socket, instead of each starting a daemon of its
 * own, all but one of which would find the host's lock taken and exit (36
 * processes were seen for 20 fills). Across processes the host's own lock
 * keeps one host (HostAlreadyRunning in host/serve/server.ts).
 */
const spawnedFor = new Map<string, Promise<Spawned>>();

/**
 * The daemon this process started for `socketPath` while it still runs,
 * else a new one, which calls after this one share in turn.
 * @throws VaultError VLT-3005 when the vault directory is not writable.
 */
async function sharedStart(opts: ClientOptions, socketPath: string): Promise<Spawned> {
  const current = spawnedFor.get(socketPath);
  if (current !== undefined) {
    const daemon = await current.catch(() => null);
    if (daemon !== null && !daemon.exited()) return daemon;
    // Another call replaced it while this one waited: share that one.
    if (spawnedFor.get(socketPath) !== current) return sharedStart(opts, socketPath);
  }
  const next = startDaemon(opts);
  spawnedFor.set(socketPath, next);
  next.catch(() => {
    if (spawnedFor.get(socketPath) === next) spawnedFor.delete(socketPath);
  });
  return next;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends one operation to the host and returns its result.
 * @throws VaultError with the host's code, or VLT-3005 when no host can be reached or started.
 */
export async function call<O extends Op>(
  opts: ClientOptions,
  op: O,
  body: Ops[O]['req'],
): Promise<Ops[O]['res']> {
  const memory = opts.anchors !== undefined && ownerRequest(op, body) ? opts.anchors : null;
  const seen = memory?.seen();
  if (seen !== undefined) body = { ...body, seenAnchor: seen };
  const result = await callOnce(opts, op, body);
  if (memory !== null) {
    if (op === 'vault.restore') memory.forget();
    else if (result.anchor !== undefined) memory.remember(result.anchor);
  }
  return result.result;
}

async function callOnce<O extends Op>(
  opts: ClientOptions,
  op: O,
  body: Ops[O]['req'],
): Promise<{ result: Ops[O]['res']; anchor: AnchorRef | undefined }> {
  const socketPath = join(opts.socketDir ?? opts.vaultDir, SOCKET_NAME);
  let reply: Reply<O> | undefined;
  try {
    reply = await post(opts, socketPath, op, body);
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    if (opts.system != null) {
      throw new VaultError(
        'VLT-3005',
        `The system vault host (user ${opts.system.user}) is not running; start it (vault-cli host status says how).`,
      );
    }
    if (opts.autoStart === false || opts.remote != null) throw new VaultError('VLT-3005');
    // No vault and no host: say so without starting one or touching the disk.
    // (`vault restore` may bring one back into an empty directory.)
    if (
      op !== 'vault.create' &&
      op !== 'vault.restore' &&
      !existsSync(join(opts.vaultDir, STORE_FILE)) &&
      // A vault in PostgreSQL (team mode): named by the directory's config or the environment.
      !existsSync(join(opts.vaultDir, STORE_CONFIG)) &&
      !opts.daemon.env.VAULT_STORE_URL
    ) {
      throw new VaultError('VLT-3001');
    }
    reply = await startAndCall(opts, socketPath, op, body);
  }
  return { result: unwrap(reply), anchor: reply.ok ? reply.anchor : undefined };
}

/**
 * Starts a daemon (or joins the one this process is starting: sharedStart)
 * and sends the operation once a host answers. It waits as long as that
 * daemon lives (a cold start under load can take more than any fixed wait),
 * up to START_WAIT_MAX_MS. A daemon that exits at once found another host
 * holding the lock: one that may be stopping (its idle stop), so while no
 * host answers a new daemon is started, a few times, and the client gives up
 * START_WAIT_MS after the last one exited.
 */
async function startAndCall<O extends Op>(
  opts: ClientOptions,
  socketPath: string,
  op: O,
  body: Ops[O]['req'],
): Promise<Reply<O>> {
  let daemon = await sharedStart(opts, socketPath);
  let starts = 1;
  const started = Date.now();
  let exitedAt: number | null = null;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    await sleep(wait);
    try {
      return await post(opts, socketPath, op, body);
    } catch (again) {
      if (!(again instanceof Unreachable)) throw again;
    }
    const now = Date.now();
    if (exitedAt === null && daemon.exited()) exitedAt = now;
    if (exitedAt !== null && starts < START_TRIES) {
      daemon = await sharedStart(opts, socketPath);
      starts++;
      exitedAt = null;
      wait = 10;
    } else if (
      now - started > START_WAIT_MAX_MS ||
      (exitedAt !== null && now - exitedAt > START_WAIT_MS)
    ) {
      throw new VaultError('VLT-3005');
    }
  }
}

/** How long the channel keeps an idle connection: well inside the host's keep-alive (5 s). */
const CHANNEL_IDLE_MS = 2000;
/** Connections one channel opens at most; calls beyond wait for one. */
const CHANNEL_MAX = 64;

/** One kept-alive connection of a channel, one call at a time. */
class ChannelConnection {
  readonly sock: Socket;
  #buf: Buffer = Buffer.alloc(0);
  #pending: { resolve: (raw: Buffer) => void; reject: (err: Error) => void } | null = null;
  /** Calls answered on it so far: a connection that answered none is a new one. */
  answered = 0;
  idleSince = 0;
  reusable = true;

  constructor(sock: Socket) {
    this.sock = sock;
    sock.setNoDelay(true);
    sock.on('data', (c: Buffer) => this.#data(c));
    const gone = (err: Error) => {
      this.reusable = false;
      const p = this.#pending;
      this.#pending = null;
      p?.reject(err);
    };
    sock.on('error', (err) => gone(new VaultError('VLT-3005', undefined, { cause: err })));
    sock.on('close', () => gone(new Closed()));
  }

  #data(c: Buffer): void {
    this.#buf = this.#buf.length === 0 ? c : Buffer.concat([this.#buf, c]);
    const split = this.#buf.indexOf('\r\n\r\n');
    if (split < 0) return;
    const head = this.#buf.subarray(0, split).toString('latin1');
    const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1] ?? NaN);
    if (!Number.isInteger(length) || this.#pending === null) {
      this.reusable = false;
      this.sock.destroy();
      return;
    }
    const end = split + 4 + length;
    if (this.#buf.length < end) return;
    const raw = this.#buf.subarray(0, end);
    // Bytes past the reply: the two sides no longer agree; the connection goes.
    if (this.#buf.length > end) this.reusable = false;
    if (/\r\nconnection: *close/i.test(head)) this.reusable = false;
    this.#buf = Buffer.alloc(0);
    const p = this.#pending;
    this.#pending = null;
    this.answered++;
    p.resolve(raw);
  }

  /** Sends one request and reads its reply (raw, whole). */
  exchange(wire: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.sock.write(wire, () => wire.fill(0));
    });
  }
}

/** The host closed a connection before replying. */
class Closed extends Error {}

/**
 * Calls to the host for a process that calls it often: the proxy resolves
 * on every filled request. An agent's requests (CHANNEL_OPS) go on one
 * framed connection (framed.ts), all at once, each written as it comes;
 * anything else (status, an owner's command, which must check
 * the host before its passphrase goes out) is a one-off `call`. A host that
 * does not know the channel (an earlier version) is called on a few
 * kept-alive HTTP connections instead, as before: calls at once on
 * connections of their own (up to CHANNEL_MAX). Idle connections do not
 * keep the process alive.
 *
 * A request the host never read (it closed an idle connection as the call
 * went) is sent again on a new connection; one it read and did not answer
 * fails with VLT-3005, and is not sent again.
 */
export class HostChannel {
  readonly #opts: ClientOptions;
  readonly #socketPath: string;
  readonly #idle: ChannelConnection[] = [];
  readonly #waiting: (() => void)[] = [];
  #open = 0;
  #closed = false;
  /** The framed connection, or its opening; null when there is none yet (or any more). */
  #framed: Promise<Framed | 'old' | 'busy' | null> | null = null;
  /** The host knows no channel: HTTP from now on. */
  #old = false;

  constructor(opts: ClientOptions) {
    this.#opts = opts;
    this.#socketPath = join(opts.socketDir ?? opts.vaultDir, SOCKET_NAME);
  }

  /** As `call`: the operation's result, or its VaultError. */
  async call<O extends Op>(op: O, body: Ops[O]['req']): Promise<Ops[O]['res']> {
    if (this.#closed) throw new VaultError('VLT-3005');
    if (!CHANNEL_OPS.has(op)) return call(this.#opts, op, body);
    // A request the host did not read goes again; a few times at most, each on a new connection.
    for (let attempt = 0; !this.#old; attempt++) {
      const conn = await this.#channel();
      // No host answers: the one-off path starts one (or says why not).
      if (conn === null) return call(this.#opts, op, body);
      if (conn === 'busy') break;
      if (conn === 'old') continue;
      try {
        return unwrap((await conn.send(op, Buffer.from(JSON.stringify(body)))) as Reply<O>);
      } catch (err) {
        if (this.#closed) throw new VaultError('VLT-3005');
        if (err instanceof Error && err.name === 'Gone') throw goneMidRequest(op);
        if (!(err instanceof Error && err.name === 'Unread')) throw err;
        // Hosts going away one after another (a restart under load: a new host
        // that finds another serving exits): the one-off path waits for the one
        // that stays, or starts it. The host read nothing, so sending is safe.
        if (attempt >= 3) return call(this.#opts, op, body);
      }
    }
    return this.#callHttp(op, body);
  }

  /** The framed connection, opened when there is none. */
  #channel(): Promise<Framed | 'old' | 'busy' | null> {
    const current = this.#framed;
    if (current !== null) {
      return current.then((c) => {
        if (typeof c === 'object' && c !== null && c.done && this.#framed === current) {
          this.#framed = null;
          return this.#channel();
        }
        return c;
      });
    }
    const opening = import('./framed.js').then(({ openFramed }) =>
      openFramed(this.#socketPath, () => {
        if (this.#framed === opening) this.#framed = null;
      }),
    );
    this.#framed = opening;
    opening.then(
      (c) => {
        if (c === 'old') this.#old = true;
        // Only a connection is kept: the next call asks again.
        if (c === null || typeof c === 'string') {
          if (this.#framed === opening) this.#framed = null;
        } else if (this.#closed) c.close();
      },
      () => {
        if (this.#framed === opening) this.#framed = null;
      },
    );
    return opening;
  }

  /** A call on the kept-alive HTTP connections: for a host that knows no channel. */
  async #callHttp<O extends Op>(op: O, body: Ops[O]['req']): Promise<Ops[O]['res']> {
    let conn = await this.#take();
    // No host answers: the one-off path starts one (or says why not).
    if (conn === null) return call(this.#opts, op, body);
    const payload = Buffer.from(JSON.stringify(body));
    const head = Buffer.from(channelHead(op, payload.length));
    let raw: Buffer;
    try {
      try {
        raw = await conn.exchange(Buffer.concat([head, payload]));
      } catch (err) {
        if (!(err instanceof Closed) || conn.answered === 0) throw err;
        this.#give(conn);
        conn = await this.#take();
        if (conn === null) throw new VaultError('VLT-3005');
        raw = await conn.exchange(Buffer.concat([head, payload]));
      }
    } catch (err) {
      if (conn !== null) this.#give(conn);
      if (err instanceof Closed) throw goneMidRequest(op);
      throw err;
    } finally {
      payload.fill(0);
    }
    this.#give(conn);
    return unwrap(parseReply<O>(raw));
  }

  /** Ends every connection; later calls fail. */
  close(): void {
    this.#closed = true;
    void this.#framed?.then(
      (c) => {
        if (typeof c === 'object' && c !== null) c.close();
      },
      () => {},
    );
    for (const c of this.#idle.splice(0)) c.sock.destroy();
    for (const w of this.#waiting.splice(0)) w();
  }

  /** An idle connection, a new one, or (at the limit) the next one freed; null when no host answers. */
  async #take(): Promise<ChannelConnection | null> {
    for (;;) {
      const now = Date.now();
      while (this.#idle.length > 0) {
        const c = this.#idle.pop() as ChannelConnection;
        if (c.reusable && !c.sock.destroyed && now - c.idleSince < CHANNEL_IDLE_MS) {
          c.sock.ref();
          return c;
        }
        c.sock.destroy();
      }
      if (this.#closed) throw new VaultError('VLT-3005');
      if (this.#open < CHANNEL_MAX) return this.#connect();
      await new Promise<void>((r) => this.#waiting.push(r));
    }
  }

  #connect(): Promise<ChannelConnection | null> {
    this.#open++;
    return new Promise((resolve, reject) => {
      const sock = connect(this.#socketPath);
      const c = new ChannelConnection(sock);
      let connected = false;
      sock.once('close', () => {
        this.#open--;
        this.#waiting.shift()?.();
      });
      sock.once('connect', () => {
        connected = true;
        resolve(c);
      });
      sock.once('error', (err: NodeJS.ErrnoException) => {
        if (connected) return;
        if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(null);
        else reject(new VaultError('VLT-3005', undefined, { cause: err }));
      });
    });
  }

  #give(c: ChannelConnection): void {
    if (this.#closed || !c.reusable || c.sock.destroyed) {
      c.sock.destroy();
      return;
    }
    c.idleSince = Date.now();
    c.sock.unref();
    this.#idle.push(c);
    this.#waiting.shift()?.();
  }
}

/** A channel's request head: like requestHead, kept alive. */
function channelHead(op: Op, length: number): string {
  return (
    `POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\n\r\n`
  );
}

/** A reply's result, or its error thrown. */
function unwrap<O extends Op>(reply: Reply<O>): Ops[O]['res'] {
  if (reply.ok) return reply.result;
  const code = isErrorCode(reply.code) ? reply.code : 'VLT-3007';
  const problems = (reply.problems ?? []).map((p) => ({
    index: p.index,
    code: isErrorCode(p.code) ? p.code : code,
  }));
  throw new VaultError(code, reply.message, { problems });
}

/**
 * `audit --follow`: sends the request and hands every line of the streamed
 * reply to `onLine` until the host closes the connection, or until `signal`
 * aborts: then the socket is destroyed and the promise resolves (the
 * dashboard stops its feed this way). An error reply (a normal JSON reply with
 * a Content-Length) is thrown as its VaultError.
 */
export function follow<O extends 'audit.follow' | 'session.hold' | 'watch'>(
  opts: ClientOptions,
  op: O,
  body: Ops[O]['req'],
  onLine: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const socketPath = join(opts.socketDir ?? opts.vaultDir, SOCKET_NAME);
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const head = requestHead(op, payload.length);
    let buffered = Buffer.alloc(0);
    let streaming = false;
    let pending = '';
    const sock = open(
      opts,
      socketPath,
      op,
      body,
      (s) => s.write(Buffer.concat([Buffer.from(head), payload]), () => payload.fill(0)),
      (err) => {
        payload.fill(0);
        reject(err);
      },
    );
    const stop = () => {
      payload.fill(0);
      sock.destroy();
      resolve();
    };
    signal?.addEventListener('abort', stop, { once: true });
    sock.on('close', () => signal?.removeEventListener('abort', stop));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      reject(new VaultError('VLT-3005', undefined, { cause: err }));
    });
    sock.on('data', (c: Buffer) => {
      if (signal?.aborted === true) return;
      if (!streaming) {
        buffered = Buffer.concat([buffered, c]);
        const split = buffered.indexOf('\r\n\r\n');
        if (split < 0) return;
        // A reply with a length is a whole JSON reply: an error before streaming began.
        if (/\r\ncontent-length:/i.test(buffered.subarray(0, split).toString('latin1'))) return;
        streaming = true;
        c = buffered.subarray(split + 4);
      }
      pending += c.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line !== '') onLine(line);
    });
    sock.on('end', () => {
      if (streaming) return resolve();
      try {
        const reply = parseReply<O>(buffered);
        if (reply.ok) resolve();
        else
          reject(new VaultError(isErrorCode(reply.code) ? reply.code : 'VLT-3007', reply.message));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** A session held by `run`: `ended` settles when the host lets go (it stopped, or the session ended). */
export interface Hold {
  readonly ended: Promise<void>;
  /** Lets go of the session: the host ends it. */
  release(): void;
}

/**
 * Holds a `run` session on a connection of its own: the host ends the session
 * when this connection ends, so the session cannot outlive this process, even
 * one killed by SIGKILL. Resolves once the host says the hold is in place.
 * @throws VaultError the host's refusal (VLT-2040 for a token it does not know).
 */
export async function hold(opts: ClientOptions, token: string): Promise<Hold> {
  const stop = new AbortController();
  let ready: () => void = () => {};
  const isHeld = new Promise<void>((resolve) => (ready = resolve));
  const ended = follow(opts, 'session.hold', { token }, () => ready(), stop.signal);
  // A host that goes away later ends the hold; `ended` reports it, never as an unhandled rejection.
  ended.catch(() => {});
  await Promise.race([isHeld, ended]);
  return { ended, release: () => stop.abort() };
}
