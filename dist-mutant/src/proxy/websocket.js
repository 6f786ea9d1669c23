/**
 * WebSocket frames (RFC 6455 5.2) from the server, read and written again with
 * echoed values scrubbed back to their references: a server that reflects the
 * handshake's Authorization inside a message must not hand the secret to the
 * client, as an HTTP response must not.
 *
 * - Data frames of one message are scrubbed as one stream (scrub.ts), so a
 *   value split across fragments, frames or TCP chunks is found; a frame is
 *   written again with its new length, the message's fragmentation kept
 *   (a fragment the scrubber holds back entirely is not sent on its own).
 * - A frame's payload is held whole (its length goes before it), so a frame
 *   above MAX_FRAME is refused: close 1009 to the client, the upstream dropped.
 *   Memory per connection is bounded by the frame cap, not by the message.
 * - Anything a client must fail on (a masked server frame, RSV bits without a
 *   negotiated extension, a bad length, a fragmented or long control frame, a
 *   continuation without a start) ends the connection with close 1002.
 * - Client-to-server frames are not touched: they hold references, not values.
 */
import { Transform } from 'node:stream';
import { Scrubber } from './scrub.js';
/** The largest frame payload held for scrubbing: 16 MiB. */
export const MAX_FRAME = 16 * 1024 * 1024;
export const OP = {
    continuation: 0x0,
    text: 0x1,
    binary: 0x2,
    close: 0x8,
    ping: 0x9,
    pong: 0xa,
};
/** A frame stream that cannot be read; `close` is the status to send (1002 or 1009). */
export class FrameError extends Error {
    close;
    constructor(close, message) {
        super(message);
        this.close = close;
        this.name = 'FrameError';
    }
}
/**
 * Incremental frame reader: feed it chunks as they come, get whole frames.
 * Chunks are kept as a list and joined once per frame, so a large frame
 * arriving in many chunks is copied once, not once per chunk.
 */
export class FrameParser {
    maxPayload;
    chunks = [];
    held = 0;
    head = null;
    constructor(maxPayload = MAX_FRAME) {
        this.maxPayload = maxPayload;
    }
    /**
     * The frames completed by `chunk`.
     * @throws FrameError on a malformed frame or one above the cap; the stream is then unusable.
     */
    push(chunk) {
        if (chunk.length > 0) {
            this.chunks.push(chunk);
            this.held += chunk.length;
        }
        const out = [];
        for (;;) {
            if (this.head === null) {
                const h = this.header();
                if (h === null)
                    break;
                this.take(h.size, false);
                this.head = h;
            }
            const h = this.head;
            if (this.held < h.length)
                break;
            const payload = this.take(h.length, h.mask !== null);
            if (h.mask !== null) {
                for (let i = 0; i < payload.length; i++) {
                    payload[i] = payload[i] ^ h.mask[i & 3];
                }
            }
            out.push({ fin: h.fin, rsv: h.rsv, opcode: h.opcode, mask: h.mask, payload });
            this.head = null;
        }
        return out;
    }
    /** Bytes received that are not yet part of a whole frame. */
    get pending() {
        return this.held;
    }
    header() {
        if (this.held < 2)
            return null;
        const b = this.peek(Math.min(this.held, 14));
        const b0 = b[0];
        const b1 = b[1];
        const masked = (b1 & 0x80) !== 0;
        const short = b1 & 0x7f;
        const extra = short === 126 ? 2 : short === 127 ? 8 : 0;
        const size = 2 + extra + (masked ? 4 : 0);
        if (b.length < size)
            return null;
        let length = short;
        if (short === 126)
            length = b.readUInt16BE(2);
        if (short === 127) {
            const hi = b.readUInt32BE(2);
            if (hi & 0x80000000)
                throw new FrameError(1002, 'frame length with its top bit set');
            length = hi * 2 ** 32 + b.readUInt32BE(6);
        }
        const opcode = b0 & 0x0f;
        const fin = (b0 & 0x80) !== 0;
        if (opcode >= 0x8) {
            if (opcode > OP.pong)
                throw new FrameError(1002, 'reserved control opcode');
            if (!fin || length > 125)
                throw new FrameError(1002, 'fragmented or long control frame');
        }
        else if (opcode > OP.binary) {
            throw new FrameError(1002, 'reserved data opcode');
        }
        if (length > this.maxPayload)
            throw new FrameError(1009, 'frame above the size cap');
        const mask = masked ? Buffer.from(b.subarray(2 + extra, size)) : null;
        return { fin, rsv: (b0 >> 4) & 0x7, opcode, mask, length, size };
    }
    /** The first `n` held bytes, without consuming them (n is at most 14). */
    peek(n) {
        const first = this.chunks[0];
        if (first.length >= n)
            return first;
        const out = Buffer.allocUnsafe(n);
        let at = 0;
        for (const c of this.chunks) {
            at += c.copy(out, at, 0, Math.min(c.length, n - at));
            if (at === n)
                break;
        }
        return out;
    }
    /**
     * Removes and returns the first `n` held bytes: a copy when they span chunks
     * or when `copy` asks (a masked payload is unmasked in place, never in the
     * socket's own buffer).
     */
    take(n, copy) {
        this.held -= n;
        const first = this.chunks[0];
        if (n === 0)
            return Buffer.alloc(0);
        if (first !== undefined && first.length >= n) {
            if (first.length === n)
                this.chunks.shift();
            else
                this.chunks[0] = first.subarray(n);
            const bytes = first.subarray(0, n);
            return copy ? Buffer.from(bytes) : bytes;
        }
        const out = Buffer.allocUnsafe(n);
        let at = 0;
        while (at < n) {
            const c = this.chunks[0];
            const k = Math.min(c.length, n - at);
            c.copy(out, at, 0, k);
            at += k;
            if (k === c.length)
                this.chunks.shift();
            else
                this.chunks[0] = c.subarray(k);
        }
        return out;
    }
}
/** A frame on the wire, with the shortest length encoding; masked when it has a mask. */
export function encodeFrame(f) {
    const n = f.payload.length;
    const extra = n < 126 ? 0 : n < 65536 ? 2 : 8;
    const maskLen = f.mask === null ? 0 : 4;
    const out = Buffer.allocUnsafe(2 + extra + maskLen + n);
    out[0] = (f.fin ? 0x80 : 0) | ((f.rsv & 7) << 4) | (f.opcode & 0x0f);
    const m = f.mask === null ? 0 : 0x80;
    if (extra === 0)
        out[1] = m | n;
    else if (extra === 2) {
        out[1] = m | 126;
        out.writeUInt16BE(n, 2);
    }
    else {
        out[1] = m | 127;
        out.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
        out.writeUInt32BE(n >>> 0, 6);
    }
    const at = 2 + extra + maskLen;
    if (f.mask === null) {
        f.payload.copy(out, at);
    }
    else {
        f.mask.copy(out, 2 + extra, 0, 4);
        for (let i = 0; i < n; i++) {
            out[at + i] = f.payload[i] ^ f.mask[i & 3];
        }
    }
    return out;
}
/** A close frame from the server side with a status code. */
export function closeFrame(code) {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    return encodeFrame({ fin: true, rsv: 0, opcode: OP.close, mask: null, payload });
}
/**
 * Server-to-client frames with echoed values put back to their references.
 * On a frame it cannot read it sends the client a close frame (1002, or 1009
 * for a frame above the cap), ends, and emits `refused` so the caller drops
 * the upstream connection; nothing more is read.
 */
export class ServerFrameScrubber extends Transform {
    replacements;
    parser;
    /** The scrubber of the data message in progress, null between messages. */
    message = null;
    /** The opcode the message's first sent fragment must carry (then continuation). */
    messageOpcode = OP.continuation;
    failed = false;
    constructor(replacements, maxPayload = MAX_FRAME) {
        super();
        this.replacements = replacements;
        this.parser = new FrameParser(maxPayload);
    }
    _transform(chunk, _enc, done) {
        if (this.failed)
            return done();
        let frames;
        try {
            frames = this.parser.push(chunk);
        }
        catch (err) {
            if (!(err instanceof FrameError))
                return done(err);
            return this.refuse(err.close, done);
        }
        const out = [];
        for (const f of frames) {
            const bytes = this.frame(f);
            if (bytes === null)
                return this.refuse(1002, done);
            if (bytes.length > 0)
                out.push(bytes);
        }
        done(null, out.length === 0 ? undefined : out.length === 1 ? out[0] : Buffer.concat(out));
    }
    _flush(done) {
        // The server ended mid-frame: what was held of it is not passed on half-read.
        done();
    }
    /** The frame as it goes to the client (empty: nothing yet), or null when it must be refused. */
    frame(f) {
        // A server frame is never masked; RSV bits mean an extension we did not let through.
        if (f.mask !== null || f.rsv !== 0)
            return null;
        if (f.opcode >= 0x8) {
            // Control frames may interleave with fragments; each is scrubbed on its own.
            const payload = Scrubber.bytes(this.replacements, f.payload);
            if (payload.length > 125)
                return null;
            return encodeFrame({ ...f, payload });
        }
        if (f.opcode === OP.continuation) {
            if (this.message === null)
                return null;
        }
        else {
            if (this.message !== null)
                return null;
            this.message = new Scrubber(this.replacements);
            this.messageOpcode = f.opcode;
        }
        let payload = this.message.write(f.payload);
        if (f.fin) {
            const rest = this.message.end();
            payload = rest.length === 0 ? payload : Buffer.concat([payload, rest]);
            this.message = null;
        }
        else if (payload.length === 0) {
            // All of it held back (it may begin a value): sent with the next fragment.
            return Buffer.alloc(0);
        }
        const opcode = this.messageOpcode;
        this.messageOpcode = OP.continuation;
        return encodeFrame({ fin: f.fin, rsv: 0, opcode, mask: null, payload });
    }
    refuse(code, done) {
        this.failed = true;
        this.push(closeFrame(code));
        this.push(null);
        this.emit('refused', code);
        done();
    }
}
