/**
 * What goes on to the next hop, both ways: the outgoing request (through
 * node:http's client, or as a head written on a tunnel's own connection)
 * and the response headers going back, and the request body streamed on
 * with back-pressure.
 *
 * Injected headers always win: the outgoing list is the client's with
 * hop-by-hop headers, those named in `Connection` and Proxy-Authorization
 * dropped (raw-headers.ts), references filled in place (headers.ts), and the
 * proxy's own framing set last, over anything of that name.
 */
import { Agent as HttpAgent, request as httpRequest, } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { requestLine, serializeHead } from './head.js';
import { Scrubber } from './scrub.js';
/** Zeroes the values kept for scrubbing (best effort: header strings built from them stay). */
export function wipeValues(p) {
    for (const r of p.replacements)
        r.value.fill(0);
}
/** Whether the request's body goes chunk-encoded (any Transfer-Encoding passed framing only as `chunked`). */
const isChunked = (req) => req.headers['transfer-encoding'] !== undefined;
/**
 * The request line and headers of a request going upstream on a tunnel's
 * connection: the proxy's own framing and keep-alive win over the client's.
 */
export function requestHead(req, path, p) {
    let h = p.headers;
    if (isChunked(req))
        h = h.set('Transfer-Encoding', 'chunked');
    // Our own hop to the upstream, kept alive (as node:http's client says it).
    return serializeHead(requestLine(req.method ?? 'GET', path), h.set('Connection', 'keep-alive'));
}
/**
 * The response headers going back to the client: hop-by-hop ones dropped,
 * the length and encoding too when the body changes, and echoed values put
 * back as their references.
 */
export function responseHeaders(raw, replacements, bodyChanges, keepUpgrade = false) {
    let h = raw.withoutHopByHop(keepUpgrade);
    if (bodyChanges)
        h = h.delete('content-length', 'content-encoding');
    if (replacements.length === 0)
        return h;
    return h.mapValues((v) => Scrubber.text(replacements, v));
}
/** The decoder of a body in `encoding` (policy.ts has said it is one the proxy can undo). */
export function decoderFor(encoding) {
    if (encoding === 'deflate')
        return createInflate();
    if (encoding === 'br')
        return createBrotliDecompress();
    return createGunzip();
}
/** Where a request's caller rides in node:http's request options, for the agents' pool names. */
const CALLER = Symbol('caller');
const callerPart = (o) => {
    const c = o?.[CALLER];
    return c === undefined || c === null ? ':-' : `:+${c}`;
};
/**
 * node:http's agents, pooling by caller as well as origin: a kept-alive
 * upstream connection one caller used is never handed to another
 * (upstream.ts does the same for tunnels).
 */
class CallerHttpsAgent extends HttpsAgent {
    getName(o) {
        return super.getName(o) + callerPart(o);
    }
}
class CallerHttpAgent extends HttpAgent {
    getName(o) {
        return super.getName(o) + callerPart(o);
    }
}
/** Requests sent through node:http's client: absolute-form ones, and WebSocket handshakes. */
export class ClientForwarder {
    #trust;
    #lookupFor;
    #https;
    #http = new CallerHttpAgent({ keepAlive: true, maxFreeSockets: 64 });
    constructor(trust, lookupFor) {
        this.#trust = trust;
        this.#lookupFor = lookupFor;
        this.#https = new CallerHttpsAgent({
            keepAlive: true,
            secureContext: trust,
            maxFreeSockets: 64,
        });
    }
    /**
     * The request to the upstream, its body still to send. `alone`: on a new
     * connection of its own, outside the pool (an upgrade; a request sent
     * again after its kept-alive connection closed under it). `to`: the
     * address to connect to instead of looking the name up (a request sent
     * again goes where its first attempt went), the certificate still checked
     * against the name.
     */
    request(req, { dest, path, caller }, p, alone, to = null) {
        const headers = isChunked(req) ? p.headers.set('Transfer-Encoding', 'chunked') : p.headers;
        const common = {
            host: to ?? dest.host,
            port: dest.port,
            lookup: this.#lookupFor(dest.host, dest.port),
            method: req.method,
            path,
            headers: headers.toArray(),
            setHost: false,
            [CALLER]: caller,
        };
        if (dest.tls) {
            return httpsRequest({
                ...common,
                ...(alone ? { agent: false, secureContext: this.#trust } : { agent: this.#https }),
                servername: isIP(dest.host) === 0 ? dest.host : undefined,
            });
        }
        // Plain HTTP with a value: to the loopback address the name was judged by.
        const plain = { ...common, host: to ?? p.address ?? dest.host };
        return httpRequest({ ...plain, agent: alone ? false : this.#http });
    }
    close() {
        this.#https.destroy();
        this.#http.destroy();
    }
}
/** node:http's client request as an UpstreamBody. */
export const clientBody = (up) => ({
    write: (chunk) => up.write(chunk),
    onceDrain: (resume) => up.once('drain', resume),
    end: () => up.end(),
    destroy: () => up.destroy(),
});
/** A request with no body to send on: no length, or length 0, and not chunked. */
function isBodyless(req) {
    const length = req.headers['content-length'];
    return !isChunked(req) && (length === undefined || length === '0');
}
/**
 * Methods whose request, sent twice, does what it does once (RFC 9110 9.2.2):
 * a request of one of them may go again when its kept-alive connection closed
 * before any reply (exchange.ts), as browsers, undici and Go do.
 */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/**
 * Whether a request may be sent a second time: an idempotent method and no
 * body, so nothing needs keeping to send it again.
 */
export function isReplayable(req) {
    return IDEMPOTENT.has(req.method ?? '') && isBodyless(req);
}
/**
 * The request's body on to the upstream as it comes, with back-pressure
 * (nothing for a bodyless request); the client giving up, or its request
 * ending early, ends the upstream side too. `seen` counts every chunk.
 */
export function sendBody(req, res, up, seen, body) {
    res.on('close', () => {
        if (!res.writableFinished)
            up.destroy();
    });
    if (body !== undefined) {
        seen(body);
        up.write(body);
        up.end();
        return;
    }
    if (isBodyless(req)) {
        req.resume();
        up.end();
        return;
    }
    req.on('data', (chunk) => {
        seen(chunk);
        if (!up.write(chunk)) {
            req.pause();
            up.onceDrain(() => req.resume());
        }
    });
    req.on('end', () => up.end());
    req.on('error', () => up.destroy());
    req.on('close', () => {
        if (!req.complete)
            up.destroy();
    });
}
