/**
 * The host channel's framing (issue 28): what the proxy and the host say on
 * a kept connection once the host has answered `GET /v1/channel` with
 * `Upgrade: vault-channel/1` by 101. An HTTP message per resolve cost the host
 * 0.15-0.6 ms of CPU to parse and answer, more than the rest of a fill's work
 * on the channel.
 *
 * Each request and each reply is one frame: a 4-byte big-endian length of the
 * payload, a 4-byte id, then the payload. A request's payload is a 1-byte
 * length, the operation's name and its JSON body; a reply's is the same JSON
 * reply an HTTP request gets, under the request's id, so replies come in the
 * order they are ready and several requests may share one write. Id 0 is the
 * host's own: GOODBYE, sent as it closes an idle connection, after which it
 * reads nothing more on it (a request the client wrote meanwhile was not read,
 * and may go again on a new connection).
 */
import { PROTOCOL_VERSION } from './protocol.js';
export const CHANNEL_PATH = `/${PROTOCOL_VERSION}/channel`;
export const CHANNEL_UPGRADE = 'vault-channel/1';
/** The id of the host's farewell on an idle connection. */
export const GOODBYE = 0;
/** Length and id. */
export const FRAME_HEAD = 8;
/** The largest id; ids wrap back to 1 after it. */
export const MAX_ID = 0xffffffff;
/**
 * The operations the channel carries: an agent's, with its token. Owner
 * commands keep HTTP on a connection of their own, where the client checks
 * the host before a passphrase goes out (src/client/host-check.ts).
 */
export const CHANNEL_OPS = new Set([
    'whoami',
    'read',
    'resolve',
    'report',
    'sign',
]);
/** A frame's first bytes: its length and id. */
function head(length, id) {
    const h = Buffer.allocUnsafe(FRAME_HEAD);
    h.writeUInt32BE(length, 0);
    h.writeUInt32BE(id, 4);
    return h;
}
/** A request frame: `op`, and its body as JSON bytes. */
export function requestFrame(id, op, body) {
    const name = Buffer.from(op, 'latin1');
    return Buffer.concat([
        head(1 + name.length + body.length, id),
        Buffer.from([name.length]),
        name,
        body,
    ]);
}
/**
 * A reply frame: the reply as JSON text (or its bytes), written once into the
 * frame (a reply carries values: one copy of them, not three).
 */
export function replyFrame(id, reply) {
    const n = typeof reply === 'string' ? Buffer.byteLength(reply, 'utf8') : reply.length;
    const out = Buffer.allocUnsafe(FRAME_HEAD + n);
    out.writeUInt32BE(n, 0);
    out.writeUInt32BE(id, 4);
    if (typeof reply === 'string')
        out.write(reply, FRAME_HEAD, 'utf8');
    else
        reply.copy(out, FRAME_HEAD);
    return out;
}
/** A request frame's payload split into its operation's name and its body. */
export function splitRequest(payload) {
    const n = payload[0];
    if (n === undefined || n === 0 || payload.length < 1 + n)
        return null;
    return { op: payload.toString('latin1', 1, 1 + n), body: payload.subarray(1 + n) };
}
/**
 * Cuts a byte stream into frames. The bytes of a payload copied out of
 * several chunks are zeroed where they were (a payload may hold a token or a
 * value); a payload handed out whole is the caller's to wipe.
 */
export class FrameReader {
    #sink;
    #chunks = [];
    #size = 0;
    #current = null;
    constructor(sink) {
        this.#sink = sink;
    }
    /** Whether part of a frame has come and the rest not yet. */
    get partial() {
        return this.#size > 0 || this.#current !== null;
    }
    /** Takes the next bytes of the stream; the sink hears of each frame they complete. */
    push(chunk) {
        if (chunk.length > 0) {
            this.#chunks.push(chunk);
            this.#size += chunk.length;
        }
        for (;;) {
            if (this.#current === null) {
                if (this.#size < FRAME_HEAD)
                    return;
                const h = this.#take(FRAME_HEAD);
                const length = h.readUInt32BE(0);
                const id = h.readUInt32BE(4);
                this.#current = { id, length, keep: this.#sink.head(id, length) };
            }
            const c = this.#current;
            if (!c.keep) {
                // Dropped as it comes: what has arrived of it goes now.
                const n = Math.min(c.length, this.#size);
                this.#take(n).fill(0);
                c.length -= n;
                if (c.length > 0)
                    return;
                this.#current = null;
                this.#sink.dropped(c.id);
                continue;
            }
            if (this.#size < c.length)
                return;
            const payload = this.#take(c.length);
            this.#current = null;
            this.#sink.frame(c.id, payload);
        }
    }
    /** The next `n` bytes, out of the chunks held. */
    #take(n) {
        this.#size -= n;
        const first = this.#chunks[0];
        if (first !== undefined && first.length >= n) {
            const out = first.subarray(0, n);
            if (first.length === n)
                this.#chunks.shift();
            else
                this.#chunks[0] = first.subarray(n);
            return out;
        }
        const out = Buffer.allocUnsafe(n);
        let at = 0;
        while (at < n) {
            const c = this.#chunks[0];
            const k = Math.min(c.length, n - at);
            c.copy(out, at, 0, k);
            c.fill(0, 0, k);
            at += k;
            if (k === c.length)
                this.#chunks.shift();
            else
                this.#chunks[0] = c.subarray(k);
        }
        return out;
    }
    /** Zeroes and drops what is held of an unfinished frame. */
    wipe() {
        for (const c of this.#chunks)
            c.fill(0);
        this.#chunks = [];
        this.#size = 0;
        this.#current = null;
    }
}
