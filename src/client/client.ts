/**
 * The thin client every command uses to reach the vault host: one HTTP+JSON
 * request over the host's Unix socket. When no host answers, it starts
 * `vault-cli daemon` in the background and waits for it. It loads no store, no
 * crypto engine and no UI, so `get` stays a short process.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { VaultError, isErrorCode } from '../core/errors.js';
import {
  PID_HEADER,
  PROTOCOL_VERSION,
  SOCKET_NAME,
  SPAWNED_BY_ENV,
  STORE_FILE,
  type Op,
  type Ops,
  type Reply,
} from '../core/protocol.js';

export interface ClientOptions {
  /** The vault directory, where the host's socket lives. */
  readonly vaultDir: string;
  /** How to start a host: the node binary and the CLI script to run `daemon` with. */
  readonly daemon: {
    readonly node: string;
    readonly script: string;
    readonly env: NodeJS.ProcessEnv;
  };
  /** Whether to start a host when none answers. */
  readonly autoStart?: boolean;
}

const START_WAIT_MS = 10_000;

class Unreachable extends Error {}

/** The request line and headers; `Connection: close` makes the host close after its reply. */
function requestHead(op: Op, length: number): string {
  return (
    `POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\n${PID_HEADER}: ${process.pid}\r\nConnection: close\r\n\r\n`
  );
}

/**
 * One HTTP/1.1 exchange on a fresh connection, written by hand on node:net:
 * node:http costs `get` 5-30 ms of start-up (on Node 24 its ESM namespace even
 * loads undici), and the host's replies are always small, complete JSON with a
 * Content-Length.
 */
function post<O extends Op>(socketPath: string, op: O, body: Ops[O]['req']): Promise<Reply<O>> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const head = requestHead(op, payload.length);
    const chunks: Buffer[] = [];
    let connected = false;
    const sock = connect(socketPath, () => {
      connected = true;
      // Not end(): the host's HTTP server drops a half-closed connection before
      // it replies. `Connection: close` makes the host close after the reply.
      const wire = Buffer.concat([Buffer.from(head), payload]);
      // The payload may hold a passphrase or value: zero it once the socket has taken it.
      sock.write(wire, () => {
        wire.fill(0);
        payload.fill(0);
      });
    });
    sock.on('data', (c: Buffer) => chunks.push(c));
    let settled = false;
    sock.on('error', (err: NodeJS.ErrnoException) => {
      payload.fill(0);
      if (settled) return;
      settled = true;
      if (!connected && (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')) {
        reject(new Unreachable(err.code));
      } else {
        reject(goneMidRequest(op, err));
      }
    });
    sock.on('end', () => {
      if (settled) return;
      settled = true;
      if (chunks.length === 0) {
        reject(goneMidRequest(op));
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
  'vault.passwd',
  'vault.restore',
  'entry.set',
  'entry.rm',
  'entry.hosts',
  'agent.add',
  'agent.scope',
  'agent.limits',
  'agent.lock',
  'agent.revoke',
  'key.finish',
  'key.rm',
  'unlock.finish',
  'audit.archive',
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

async function startDaemon(opts: ClientOptions): Promise<void> {
  const { spawn } = await import('node:child_process');
  mkdirSync(opts.vaultDir, { recursive: true, mode: 0o700 });
  const log = openSync(join(opts.vaultDir, 'host.log'), 'a', 0o600);
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
    child.unref();
  } finally {
    closeSync(log);
  }
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
  const socketPath = join(opts.vaultDir, SOCKET_NAME);
  let reply: Reply<O> | undefined;
  try {
    reply = await post(socketPath, op, body);
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    if (opts.autoStart === false) throw new VaultError('VLT-3005');
    // No vault and no host: say so without starting one or touching the disk.
    // (`vault restore` may bring one back into an empty directory.)
    if (
      op !== 'vault.create' &&
      op !== 'vault.restore' &&
      !existsSync(join(opts.vaultDir, STORE_FILE))
    ) {
      throw new VaultError('VLT-3001');
    }
    await startDaemon(opts);
    const deadline = Date.now() + START_WAIT_MS;
    for (let wait = 10; reply === undefined; wait = Math.min(wait * 2, 200)) {
      if (Date.now() > deadline) throw new VaultError('VLT-3005');
      await sleep(wait);
      try {
        reply = await post(socketPath, op, body);
      } catch (again) {
        if (!(again instanceof Unreachable)) throw again;
      }
    }
  }
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
export function follow<O extends 'audit.follow' | 'session.hold'>(
  opts: ClientOptions,
  op: O,
  body: Ops[O]['req'],
  onLine: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const socketPath = join(opts.vaultDir, SOCKET_NAME);
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const head = requestHead(op, payload.length);
    let buffered = Buffer.alloc(0);
    let streaming = false;
    let pending = '';
    const sock = connect(socketPath, () => {
      sock.write(Buffer.concat([Buffer.from(head), payload]), () => payload.fill(0));
    });
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
