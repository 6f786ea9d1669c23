/**
 * One request on the host's sockets, from its bytes to its reply: the body
 * read whole (the owner's secrets lifted out as Buffers), decoded, checked by
 * the socket's guard, handed to its operation, and its error turned into
 * `{ ok: false, code, message }`; and the same for a channel frame. It never
 * logs a request body, and a reply never carries a secret except the one
 * asked for. The sockets themselves are server.ts's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { bad } from '../../core/decode.js';
import { ERRORS, VaultError, isErrorCode } from '../../core/errors.js';
import { PROTOCOL_VERSION, type Op } from '../../core/protocol.js';
import { REQUESTS } from '../../core/requests.js';
import { callerAt, stillConnected, type Caller } from './caller.js';
import { parseToken } from '../../crypto/token.js';
import { liftOwnerSecrets, OwnerSecrets } from '../owner/secrets.js';
import { bindingOf, processOf, type Binding, type ProcessBinding } from '../owner/unlock.js';
import { ACCESS_REFUSALS, storeDamage } from '../vault/damage-probe.js';
import { Held, MAX_BODY, MAX_PER_PEER, type Intake } from './intake.js';
import { CALLER_OPS, OPS, SANDBOX_OPS } from '../ops/index.js';
import { anchoredBy, type Handler, type HostEnv, type Request, type Streamed } from '../ops/op.js';

/** How much of a too-large body is read (and discarded) to answer it before its connection is cut. */
const MAX_DRAIN = 64 * 1024 * 1024;

export type Body = Record<string, unknown>;

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

/** Who connected on each socket, taken when the host accepted it (caller.ts). */
export const callers = new WeakMap<Socket, Caller | null>();

/** The connecting process as the kernel recorded it when the host accepted it (caller.ts), or null off Linux. */
function callerOf(req: IncomingMessage): Caller | null {
  const socket = req.socket;
  let caller = callers.get(socket);
  if (caller === undefined) {
    caller = callerAt(socket);
    callers.set(socket, caller);
  }
  return caller;
}

/**
 * The audit source of a request: `pid:<n> uid:<n>` of the connecting process,
 * as the kernel recorded it (SO_PEERCRED). Nothing the client writes on the
 * socket can change it; a pid the client states about itself is not read.
 */
export function sourceOf(req: IncomingMessage): string {
  const peer = callerOf(req)?.peer;
  return peer === undefined ? 'local' : `pid:${peer.pid} uid:${peer.uid}`;
}

/**
 * The caller's terminal and session, for an owner session (owner-unlock.ts);
 * read per request, and only while the pid still names the process that
 * connected (caller.ts).
 */
export function bindingFor(req: IncomingMessage): Binding | null {
  const caller = callerOf(req);
  return caller === null || !stillConnected(caller) ? null : bindingOf(caller.peer);
}

/** The calling process, for a process hold (owner-unlock.ts): the one that connected, while it runs. */
export function processFor(req: IncomingMessage): ProcessBinding | null {
  const caller = callerOf(req);
  return caller === null || !stillConnected(caller) ? null : processOf(caller.peer);
}

/** What a streamed operation's handling resolves to: its reply is already on its way. */
const streaming: unique symbol = Symbol('streaming');

/** A check of a request before its operation runs (a session socket's gate). */
export type Guard = (op: Op, body: Body) => void;

/**
 * A session socket's gate: agent operations only, with that session's token
 * only; anything else is refused before it reaches a handler.
 */
export function sandboxGuard(id: string): Guard {
  return (op, b) => {
    if (!SANDBOX_OPS.has(op)) throw new VaultError('VLT-2051');
    const token = typeof b.token === 'string' ? parseToken(b.token) : null;
    if (token?.agentId !== id)
      throw new VaultError('VLT-2051', 'Only this session’s token works inside its sandbox.');
  };
}

/** Connections of a process that held MAX_PER_PEER others when it connected: its requests are refused. */
export const crowded = new WeakSet<Socket>();

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

/** How one socket serves: its guard, how it names and binds its callers, and the host's hooks. */
export interface Serving {
  readonly guard: Guard | null;
  readonly source: (req: IncomingMessage) => string;
  /** Null for every caller on a session socket: no owner session inside a sandbox. */
  readonly binding: (req: IncomingMessage) => Binding | null;
  /** Absent on a session socket: no process hold inside a sandbox either. */
  readonly process?: (req: IncomingMessage) => ProcessBinding | null;
  readonly touch: () => void;
  readonly log: (line: string) => void;
  readonly intake: Intake;
}

/**
 * One socket's request listener: `POST /v1/<op>` with a JSON body, read
 * whole (at most MAX_BODY), decoded by the operation's entry in REQUESTS,
 * handed to its handler with the caller's source and the owner's secrets, and
 * answered `{ ok: true, result }` or `{ ok: false, code, message }`. The
 * secrets are wiped once the handler is done, whatever it did.
 */
export function serve(
  env: HostEnv,
  how: Serving,
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
export function answerFrame(
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
export function refuseUpgrade(socket: Socket, status: string, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, code, message });
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}
