/**
 * One request's exchange with the upstream inside a CONNECT tunnel, on the
 * tunnel's own connection (upstream.ts), without node:http's client: the
 * request head goes out as one string, its body as it comes, and the
 * response is read with Node's own HTTP parser (llhttp, the one node:http
 * uses, from `_http_common`) straight into callbacks, with no ClientRequest,
 * no IncomingMessage stream and no agent in between.
 *
 * Why: measured A/B against ClientRequest, alternating 1 s rounds, median
 * share of direct: c=1 46% -> 59%, c=32 55% -> 59%, c=8 unchanged (the TLS
 * work bounds it). `_http_common` is an undocumented built-in, and it stays:
 * Node has no public parser API, and the llhttp npm package generates C, it
 * is not a parser JavaScript can call (a WebAssembly build of it, as undici
 * bundles privately, would be a second copy of the parser to keep up to
 * date, for no gain in speed). So it is pinned instead: `parserProblem`
 * parses a canned exchange (a chunked response with a trailer, then a
 * second response on the same connection) and checks every callback this
 * file relies on fires as expected, and the proxy refuses to start when it
 * does not; the pinned Node runs every proxy test through this file.
 *
 * What it guarantees: a connection carries one exchange at a time; it is
 * handed back for reuse only when the response ended cleanly, the server
 * did not ask to close, and the whole request body was sent; anything else
 * (a parse error, an early end, an abort) destroys it.
 *
 * A kept-alive connection the upstream closes as a request goes out (its idle
 * timeout fired while the request was on its way) fails with no byte of
 * response. Browsers, undici and Go send such a request again, and so does
 * this file, once, on a new connection to the same address, and only when
 * that cannot do what the client did not ask for: the connection had carried
 * an earlier exchange (a new one failing says the upstream is down, and is
 * answered), nothing of a response arrived, and the request is replayable
 * (forward.ts: an idempotent method, no body). The head sent again is the
 * same bytes, filled once: the host resolved, charged and audited the request
 * once, and the value goes nowhere the first attempt was not going. A POST,
 * or any request with a body, is never sent twice: whether the upstream read
 * it before closing cannot be known from here.
 */
import { createRequire } from 'node:module';
const { HTTPParser } = createRequire(import.meta.url)('_http_common');
/**
 * Why this Node's parser cannot serve the proxy, or null when it behaves as
 * this file expects: every member used is there, and a chunked response with
 * a trailer followed by a second response parse into the callbacks in order,
 * the trailer through kOnHeaders at the end of its message (where the
 * reader drops it), never into the next head.
 */
export function parserProblem() {
    const names = [
        'RESPONSE',
        'kOnMessageBegin',
        'kOnHeaders',
        'kOnHeadersComplete',
        'kOnBody',
        'kOnMessageComplete',
    ];
    const missing = names.filter((n) => typeof HTTPParser?.[n] !== 'number');
    if (missing.length > 0)
        return `_http_common.HTTPParser lacks ${missing.join(', ')}`;
    const events = [];
    try {
        const p = new HTTPParser();
        p.initialize(HTTPParser.RESPONSE, {}, 0, 0);
        p[HTTPParser.kOnMessageBegin] = () => events.push('begin');
        p[HTTPParser.kOnHeaders] = (h) => events.push(`headers ${h.join(':')}`);
        p[HTTPParser.kOnHeadersComplete] = (...a) => {
            events.push(`head ${String(a[5])} ${a[2]?.length ?? 'none'}`);
            return 0;
        };
        p[HTTPParser.kOnBody] = (b) => events.push(`body ${b.toString('latin1')}`);
        p[HTTPParser.kOnMessageComplete] = () => events.push('complete');
        const wire = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n' +
            '1\r\na\r\n0\r\nX-T: v\r\n\r\nHTTP/1.1 204 No Content\r\nX-N: 1\r\n\r\n';
        const n = p.execute(Buffer.from(wire, 'latin1'));
        if (n instanceof Error)
            return `_http_common.HTTPParser failed a canned response (${n.message})`;
    }
    catch (err) {
        return `_http_common.HTTPParser failed a canned response (${err.name})`;
    }
    // After a trailer, llhttp hands the next head's headers over through kOnHeaders
    // too (this Node does): the reader must start each message with an empty list.
    const first = ['begin', 'head 200 4', 'body a', 'headers X-T:v', 'complete', 'begin'];
    const second = [
        ['head 204 2', 'complete'],
        ['headers X-N:1', 'head 204 none', 'complete'],
    ];
    const seen = events.join('|');
    return second.some((s) => seen === [...first, ...s].join('|'))
        ? null
        : `_http_common.HTTPParser reads responses differently (${events.join(', ')})`;
}
/** The reader of one upstream connection: its parser, and whose exchange its bytes are. */
class Reader {
    socket;
    #parser = new HTTPParser();
    #headers = [];
    current = null;
    /** The connection's last error code, for the refusal that names it. */
    failure = null;
    constructor(socket) {
        this.socket = socket;
        const p = this.#parser;
        p.initialize(HTTPParser.RESPONSE, {}, 0, 0);
        // The header list is per message: trailers llhttp hands over at a message's
        // end (kOnHeaders again) must never become part of the next response's head,
        // which may be another caller's.
        p[HTTPParser.kOnMessageBegin] = () => {
            this.#headers = [];
        };
        p[HTTPParser.kOnHeaders] = (headers) => {
            for (const h of headers)
                this.#headers.push(h);
        };
        p[HTTPParser.kOnHeadersComplete] = (_major, _minor, headers, _method, _url, status, message, _upgrade, keepAlive) => {
            const raw = headers ?? this.#headers;
            this.#headers = [];
            // A response nobody asked for (bytes past the end of the last one): the
            // two sides no longer agree where messages begin; the connection goes.
            if (this.current === null) {
                socket.destroy();
                return 0;
            }
            return this.current.onHead(status, message, raw, keepAlive);
        };
        p[HTTPParser.kOnBody] = (b) => this.current?.onBody(b);
        p[HTTPParser.kOnMessageComplete] = () => {
            // Trailers: dropped, never relayed, never kept.
            this.#headers = [];
            this.current?.onComplete();
        };
        socket.on('data', (d) => {
            const x = this.current;
            // Bytes on a connection nobody is waiting on: it cannot be trusted again.
            if (x === null)
                return void socket.destroy();
            x.heard = true;
            if (guarded(() => p.execute(d)) instanceof Error)
                this.#broken('malformed response');
        });
        socket.on('end', () => {
            // A body delimited by the connection's end is complete now.
            if (guarded(() => p.finish()) instanceof Error)
                this.#broken('malformed response');
            else
                this.#broken('connection closed before the response ended');
        });
        socket.on('error', (err) => (this.failure = err.code ?? null));
        socket.on('close', () => this.#broken(this.failure ?? 'connection closed'));
    }
    #broken(reason) {
        const x = this.current;
        this.current = null;
        this.socket.destroy();
        x?.onFail(reason);
    }
}
/**
 * The parser's result, or an Error for anything thrown by the callbacks it
 * ran (the relay writing to the client: a bug of ours, never the upstream's
 * to trigger). That exchange fails; the proxy goes on.
 */
function guarded(run) {
    try {
        return run();
    }
    catch {
        return new Error('relay failed');
    }
}
const readers = new WeakMap();
/**
 * A request under way on `socket`. `give` takes the connection back when the
 * exchange leaves it reusable.
 */
export class Exchange {
    #socket;
    #reader;
    #sink;
    #chunked;
    #headOnly;
    #connections;
    /**
     * The head, kept while the request may still be sent again: on a reused
     * connection, for a replayable request, until it is sent the second time.
     */
    #resend;
    /** @internal Some byte of a response arrived (the reader says so). */
    heard = false;
    #headSeen = false;
    #informational = false;
    #keepAlive = false;
    #bodySent = false;
    #done = false;
    /**
     * Sends `head` (the request line and headers, CRLF-terminated, with the
     * blank line: head.ts) at once. `chunked`: the body is sent chunk-encoded.
     * `headOnly`: the response has no body whatever its headers say (HEAD).
     * `replayable`: the request may be sent again if the connection, an
     * earlier exchange's, closes before any byte of a response (see above).
     */
    constructor(socket, head, opts, sink, connections) {
        this.#socket = socket;
        // A connection that has a reader has carried an exchange before.
        let reader = readers.get(socket);
        this.#resend = reader !== undefined && opts.replayable ? head : null;
        if (reader === undefined) {
            reader = new Reader(socket);
            readers.set(socket, reader);
        }
        this.#reader = reader;
        reader.current = this;
        this.#sink = sink;
        this.#chunked = opts.chunked;
        this.#headOnly = opts.headOnly;
        this.#connections = connections;
        socket.write(head);
    }
    /** A piece of the request body; false when the connection wants a pause (`drain` follows). */
    write(chunk) {
        if (this.#done || chunk.length === 0)
            return true;
        if (!this.#chunked)
            return this.#socket.write(chunk);
        this.#socket.cork();
        this.#socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
        this.#socket.write(chunk);
        const more = this.#socket.write('\r\n', 'latin1');
        this.#socket.uncork();
        return more;
    }
    /** Calls `resume` once the connection takes writes again. */
    onceDrain(resume) {
        this.#socket.once('drain', resume);
    }
    /** The request body is complete. */
    end() {
        if (this.#done)
            return;
        if (this.#chunked)
            this.#socket.write('0\r\n\r\n', 'latin1');
        this.#bodySent = true;
    }
    /** Stops and resumes reading the response (back-pressure from the client). */
    pause() {
        if (!this.#done)
            this.#socket.pause();
    }
    resume() {
        if (!this.#done)
            this.#socket.resume();
    }
    /** Gives up: the connection is destroyed, mid-exchange it is of no further use. */
    destroy() {
        if (this.#done)
            return;
        this.#done = true;
        if (this.#reader.current === this)
            this.#reader.current = null;
        this.#socket.destroy();
    }
    /** @internal The parser read a response head; returns 1 to read no body. */
    onHead(status, message, raw, keepAlive) {
        if (this.#done)
            return 0;
        if (status < 200) {
            if (status === 101) {
                this.#fail('switched protocols unasked');
                return 0;
            }
            // 100 Continue and other interim replies: the final response follows.
            this.#informational = true;
            return 1;
        }
        this.#headSeen = true;
        this.#keepAlive = keepAlive;
        try {
            this.#sink.head(status, message, raw);
        }
        catch {
            // A head the client side will not write (node:http refuses some values llhttp reads).
            this.#headSeen = false;
            this.#fail('response head cannot be relayed');
            return 0;
        }
        return this.#headOnly ? 1 : 0;
    }
    /** @internal */
    onBody(chunk) {
        if (!this.#done)
            this.#sink.body(chunk);
    }
    /** @internal The parser read the end of a message. */
    onComplete() {
        if (this.#informational) {
            this.#informational = false;
            return;
        }
        if (this.#done)
            return;
        this.#done = true;
        this.#reader.current = null;
        this.#resend = null;
        const reusable = this.#keepAlive && this.#bodySent && !this.#socket.destroyed;
        this.#sink.end();
        // Paused for this client's back-pressure in the read that ended it: the next exchange reads.
        if (this.#socket.isPaused())
            this.#socket.resume();
        if (reusable)
            this.#connections.give(this.#socket);
        else
            this.#socket.destroy();
    }
    /** @internal The connection failed or closed under this exchange. */
    onFail(reason) {
        if (this.#done)
            return;
        const head = this.#resend;
        this.#resend = null;
        if (head !== null && !this.heard && this.#bodySent)
            return this.#sendAgain(head);
        this.#done = true;
        this.#sink.fail(reason, this.#headSeen);
    }
    /**
     * The request once more, on a new connection to the address the failed one
     * went to: the one retry (a new connection's exchange is never replayed).
     */
    #sendAgain(head) {
        const socket = this.#connections.fresh(this.#socket);
        const reader = new Reader(socket);
        readers.set(socket, reader);
        reader.current = this;
        this.#socket = socket;
        this.#reader = reader;
        socket.write(head);
    }
    #fail(reason) {
        const headSeen = this.#headSeen;
        this.destroy();
        this.#sink.fail(reason, headSeen);
    }
}
