import { CHANNEL_OPS, FrameReader, GOODBYE, replyFrame, splitRequest, } from '../../core/frames.js';
import { FREE_BYTES, Held, MAX_BODY } from './intake.js';
/** How long a frame may take to arrive whole once it has begun. */
const FRAME_WITHIN_MS = 5_000;
/** An idle connection is closed after this (as HTTP keep-alive was): a proxy left alone keeps no host alive. */
const IDLE_MS = 5_000;
/** The operation's name and its length byte, on top of the body. */
const MAX_PAYLOAD = MAX_BODY + 256;
const refused = (code, message) => ({ ok: false, code, message });
/** Serves the channel on `socket`, whose upgrade the host accepted; `first` came with the upgrade. */
export function serveChannel(socket, first, host) {
    socket.setNoDelay(true);
    const channel = new Channel(socket, host);
    socket.on('data', (c) => channel.data(c));
    socket.on('error', () => socket.destroy());
    socket.once('close', () => channel.stop());
    if (first.length > 0)
        channel.data(first);
    else
        channel.rearm();
}
/** One connection's channel: its frames as they arrive, its requests in flight, its timers. */
class Channel {
    socket;
    host;
    inFlight = 0;
    closing = false;
    corked = false;
    timer;
    /** When the frame now arriving began (ms), or null between frames. */
    begun = null;
    /** What the frame now arriving keeps: of the pool, and of the connection's FREE_BYTES. */
    arriving = null;
    /** What is left of the connection's own FREE_BYTES. */
    free = FREE_BYTES;
    reader = new FrameReader(this);
    constructor(socket, host) {
        this.socket = socket;
        this.host = host;
    }
    /** Bytes from the socket. */
    data(c) {
        if (this.closing) {
            c.fill(0);
            return;
        }
        this.reader.push(c);
        this.rearm();
    }
    /** Arms the one timer the connection's state calls for: a frame's deadline, or idleness. */
    rearm() {
        clearTimeout(this.timer);
        if (this.closing)
            return;
        if (this.reader.partial) {
            this.begun ??= Date.now();
            const left = this.begun + FRAME_WITHIN_MS - Date.now();
            this.timer = setTimeout(() => this.socket.destroy(), left);
        }
        else if (this.inFlight === 0) {
            this.timer = setTimeout(() => {
                this.send(GOODBYE, { ok: true, goodbye: true });
                this.close();
            }, IDLE_MS);
        }
    }
    /** Reads nothing more, and gives back what the frame now arriving holds. */
    stop() {
        this.closing = true;
        clearTimeout(this.timer);
        this.reader.wipe();
        if (this.arriving !== null)
            this.release(this.arriving);
        this.arriving = null;
    }
    head(id, length) {
        if (id === GOODBYE) {
            this.cut(id, 'VLT-1001', 'Bad request: frame id 0 is the host’s.');
            return false;
        }
        if (length > MAX_PAYLOAD) {
            this.cut(id, 'VLT-1002', `The request is larger than the host accepts (${MAX_BODY / 1024 / 1024} MiB); a value that large cannot be stored.`);
            return false;
        }
        const own = Math.min(length, this.free);
        const held = new Held();
        // keep() draws what passes FREE_BYTES: here, what the connection's own share does not cover.
        if (!this.host.intake.keep(held, length - own + FREE_BYTES))
            return false;
        this.free -= own;
        this.arriving = { held, own };
        return true;
    }
    frame(id, payload) {
        const kept = this.arriving ?? { held: new Held(), own: 0 };
        this.arriving = null;
        this.begun = null;
        void this.handle(id, payload, kept);
    }
    dropped(id) {
        this.begun = null;
        if (this.closing)
            return;
        this.send(id, refused('VLT-3012', 'The vault host holds as many request bytes as it accepts; try again once some are answered.'));
    }
    async handle(id, payload, kept) {
        this.inFlight++;
        this.host.touch();
        try {
            const request = decodeRequest(payload);
            payload.fill(0);
            const reply = 'refused' in request ? request.refused : await this.host.answer(request.op, request.body);
            this.send(id, reply);
        }
        finally {
            payload.fill(0);
            this.release(kept);
            this.inFlight--;
            this.rearm();
        }
    }
    release(kept) {
        this.host.intake.release(kept.held);
        this.free += kept.own;
        kept.own = 0;
    }
    send(id, reply) {
        const { socket } = this;
        if (socket.destroyed || socket.writableEnded)
            return;
        // The replies one group commit settles go out in one write.
        if (!this.corked) {
            this.corked = true;
            socket.cork();
            process.nextTick(() => {
                this.corked = false;
                socket.uncork();
            });
        }
        socket.write(replyFrame(id, JSON.stringify(reply)));
        // A client that does not read its replies is not read either: they would pile up here.
        if (socket.writableNeedDrain && !socket.isPaused()) {
            socket.pause();
            socket.once('drain', () => socket.resume());
        }
    }
    /** Says why, and reads nothing more on this connection. */
    cut(id, code, message) {
        this.send(id, refused(code, message));
        this.close();
    }
    close() {
        this.stop();
        this.socket.end();
        // A client that never closes its side is not waited for.
        setTimeout(() => this.socket.destroy(), FRAME_WITHIN_MS).unref();
    }
}
/** A frame's payload as a channel request, or the refusal to send back. */
function decodeRequest(payload) {
    const request = splitRequest(payload);
    if (request === null || !CHANNEL_OPS.has(request.op)) {
        return { refused: refused('VLT-1001', 'No such operation on the host channel.') };
    }
    let body;
    try {
        body = JSON.parse(request.body.toString('utf8'));
    }
    catch {
        body = null;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return { refused: refused('VLT-1001', 'Bad request: body is not a JSON object.') };
    }
    return { op: request.op, body: body };
}
