import { bad } from '../../core/decode.js';
import { ERRORS, VaultError, isErrorCode } from '../../core/errors.js';
import { PROTOCOL_VERSION } from '../../core/protocol.js';
import { REQUESTS } from '../../core/requests.js';
import { callerAt, stillConnected } from './caller.js';
import { parseToken } from '../../crypto/token.js';
import { liftOwnerSecrets, OwnerSecrets } from '../owner/secrets.js';
import { bindingOf, processOf } from '../owner/unlock.js';
import { ACCESS_REFUSALS, storeDamage } from '../vault/damage-probe.js';
import { Held, MAX_BODY, MAX_PER_PEER } from './intake.js';
import { CALLER_OPS, OPS, SANDBOX_OPS } from '../ops/index.js';
import { anchoredBy } from '../ops/op.js';
/** How much of a too-large body is read (and discarded) to answer it before its connection is cut. */
const MAX_DRAIN = 64 * 1024 * 1024;
/**
 * What the host log says of an unexpected error: its class, errno-style code
 * and top stack frame. Never its message: a dependency's message could quote
 * the input that failed, and the input may be a secret.
 */
function describe(err) {
    if (!(err instanceof Error))
        return typeof err;
    const code = err.code;
    const frame = err.stack
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
function readBody(req, intake, held) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        let busy = false;
        req.on('data', (c) => {
            size += c.length;
            if (busy)
                return;
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
                for (const kept of chunks.splice(0))
                    kept.fill(0);
                intake.release(held);
                req.pause();
                reject(new VaultError('VLT-3012', 'The vault host holds as many request bytes as it accepts; try again once some are answered.'));
                return;
            }
            // Too large: what came is dropped and the rest read and discarded, so
            // the client, still writing, gets its refusal instead of a cut
            // connection (VLT-3005, "the host stopped"). Past MAX_DRAIN it is cut.
            c.fill(0);
            for (const kept of chunks.splice(0))
                kept.fill(0);
            intake.release(held);
            if (size > MAX_DRAIN)
                req.destroy();
        });
        req.on('end', () => {
            if (size > MAX_BODY) {
                reject(new VaultError('VLT-1002', `The request is larger than the host accepts (${MAX_BODY / 1024 / 1024} MiB); a value that large cannot be stored.`));
                return;
            }
            if (busy)
                return;
            const raw = Buffer.concat(chunks);
            try {
                // The owner's secrets leave as Buffers before the bytes become a string.
                const secrets = new OwnerSecrets(liftOwnerSecrets(raw));
                let parsed;
                try {
                    parsed = JSON.parse(raw.toString('utf8') || '{}');
                }
                catch (err) {
                    secrets.wipe();
                    throw err;
                }
                if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
                    secrets.wipe();
                    throw bad('body');
                }
                resolve({ body: parsed, secrets });
            }
            catch (err) {
                reject(err instanceof VaultError ? err : bad('body is not JSON'));
            }
            finally {
                raw.fill(0);
                for (const c of chunks)
                    c.fill(0);
            }
        });
        req.on('error', reject);
    });
}
/** Who connected on each socket, taken when the host accepted it (caller.ts). */
export const callers = new WeakMap();
/** The connecting process as the kernel recorded it when the host accepted it (caller.ts), or null off Linux. */
function callerOf(req) {
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
export function sourceOf(req) {
    const peer = callerOf(req)?.peer;
    return peer === undefined ? 'local' : `pid:${peer.pid} uid:${peer.uid}`;
}
/**
 * The caller's terminal and session, for an owner session (owner-unlock.ts);
 * read per request, and only while the pid still names the process that
 * connected (caller.ts).
 */
export function bindingFor(req) {
    const caller = callerOf(req);
    return caller === null || !stillConnected(caller) ? null : bindingOf(caller.peer);
}
/** The calling process, for a process hold (owner-unlock.ts): the one that connected, while it runs. */
export function processFor(req) {
    const caller = callerOf(req);
    return caller === null || !stillConnected(caller) ? null : processOf(caller.peer);
}
/** What a streamed operation's handling resolves to: its reply is already on its way. */
const streaming = Symbol('streaming');
/**
 * A session socket's gate: agent operations only, with that session's token
 * only; anything else is refused before it reaches a handler.
 */
export function sandboxGuard(id) {
    return (op, b) => {
        if (!SANDBOX_OPS.has(op))
            throw new VaultError('VLT-2051');
        const token = typeof b.token === 'string' ? parseToken(b.token) : null;
        if (token?.agentId !== id)
            throw new VaultError('VLT-2051', 'Only this session’s token works inside its sandbox.');
    };
}
/** Connections of a process that held MAX_PER_PEER others when it connected: its requests are refused. */
export const crowded = new WeakSet();
/** Writes a whole JSON reply, with its length; never cached. */
function reply(res, status, body) {
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
function refusal(env, log, op, err) {
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
    if (damage !== null)
        return { ok: false, code: damage, message: ERRORS[damage].message };
    return { ok: false, code: 'VLT-3007', message: 'Internal error in the vault host.' };
}
/**
 * One socket's request listener: `POST /v1/<op>` with a JSON body, read
 * whole (at most MAX_BODY), decoded by the operation's entry in REQUESTS,
 * handed to its handler with the caller's source and the owner's secrets, and
 * answered `{ ok: true, result }` or `{ ok: false, code, message }`. The
 * secrets are wiped once the handler is done, whatever it did.
 */
export function serve(env, how) {
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
        const op = (url.startsWith(prefix) ? url.slice(prefix.length) : '');
        const def = req.method === 'POST' && Object.hasOwn(OPS, op)
            ? OPS[op]
            : undefined;
        if (def === undefined) {
            reply(res, 404, { ok: false, code: 'VLT-1001', message: 'No such operation.' });
            return;
        }
        // A stream answers by itself, and clears the caller cache when it ends if it must.
        const changes = typeof def === 'function' && !CALLER_OPS.has(op);
        let request = null;
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
                    body: REQUESTS[op](body, 'body'),
                    source: how.source(req),
                    secrets,
                    binding: () => how.binding(req),
                    process: () => how.process?.(req) ?? null,
                };
                if (typeof def !== 'function') {
                    await def.stream(env, request, res);
                    return streaming;
                }
                if (changes)
                    ctx.callers.clear();
                return await def(env, request);
            }
            finally {
                secrets.wipe();
            }
        })
            .finally(() => {
            if (changes)
                ctx.callers.clear();
        })
            .then((result) => {
            if (result === streaming)
                return;
            // An owner command's anchor, for its client to remember (ops/op.ts).
            const anchor = request === null ? undefined : anchoredBy(request);
            reply(res, 200, { ok: true, result, ...(anchor === undefined ? {} : { anchor }) });
        }, (err) => {
            const answer = refusal(env, how.log, op, err);
            // A stream that failed after its head went out can only be cut.
            if (res.headersSent)
                res.destroy();
            else {
                // A body refused half-read (the pool was full) is not read on: the connection ends with the reply.
                if (!req.complete)
                    res.setHeader('connection', 'close');
                reply(res, 200, answer);
            }
        });
    };
}
/**
 * A channel request's reply (channel.ts): an agent operation from the
 * connection's peer, decoded and answered as its HTTP request would be. It
 * holds no owner secret and no owner session (binding null): the channel
 * serves none of the owner's commands.
 */
export function answerFrame(env, log, source) {
    return async (op, body) => {
        try {
            const request = {
                op,
                body: REQUESTS[op](body, 'body'),
                source,
                secrets: new OwnerSecrets(),
                binding: () => null,
                process: () => null,
            };
            return { ok: true, result: await OPS[op](env, request) };
        }
        catch (err) {
            return refusal(env, log, op, err);
        }
    };
}
/** A refusal on a connection that asked to upgrade: plain HTTP, then the connection ends. */
export function refuseUpgrade(socket, status, code, message) {
    const body = JSON.stringify({ ok: false, code, message });
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`);
}
