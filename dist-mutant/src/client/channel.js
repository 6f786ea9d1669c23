/**
 * The channel: calls to the host for a process that calls it often (the
 * proxy, on every fill), on connections kept open, instead of a new one per
 * call.
 */
import { connect } from 'node:net';
import { VaultError } from '../core/errors.js';
import { CHANNEL_OPS } from '../core/frames.js';
import { PROTOCOL_VERSION } from '../core/protocol.js';
import { call } from './client.js';
import { goneMidRequest, parseReply, socketPathOf, unwrap } from './request.js';
/** How long the channel keeps an idle connection: well inside the host's keep-alive (5 s). */
const CHANNEL_IDLE_MS = 2000;
/** Connections one channel opens at most; calls beyond wait for one. */
const CHANNEL_MAX = 64;
/** One kept-alive connection of a channel, one call at a time. */
class ChannelConnection {
    sock;
    #buf = Buffer.alloc(0);
    #pending = null;
    /** Calls answered on it so far: a connection that answered none is a new one. */
    answered = 0;
    idleSince = 0;
    reusable = true;
    constructor(sock) {
        this.sock = sock;
        sock.setNoDelay(true);
        sock.on('data', (c) => this.#data(c));
        const gone = (err) => {
            this.reusable = false;
            const p = this.#pending;
            this.#pending = null;
            p?.reject(err);
        };
        sock.on('error', (err) => gone(new VaultError('VLT-3005', undefined, { cause: err })));
        sock.on('close', () => gone(new Closed()));
    }
    #data(c) {
        this.#buf = this.#buf.length === 0 ? c : Buffer.concat([this.#buf, c]);
        const split = this.#buf.indexOf('\r\n\r\n');
        if (split < 0)
            return;
        const head = this.#buf.subarray(0, split).toString('latin1');
        const length = Number(/\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1] ?? NaN);
        if (!Number.isInteger(length) || this.#pending === null) {
            this.reusable = false;
            this.sock.destroy();
            return;
        }
        const end = split + 4 + length;
        if (this.#buf.length < end)
            return;
        const raw = this.#buf.subarray(0, end);
        // Bytes past the reply: the two sides no longer agree; the connection goes.
        if (this.#buf.length > end)
            this.reusable = false;
        if (/\r\nconnection: *close/i.test(head))
            this.reusable = false;
        this.#buf = Buffer.alloc(0);
        const p = this.#pending;
        this.#pending = null;
        this.answered++;
        p.resolve(raw);
    }
    /** Sends one request and reads its reply (raw, whole). */
    exchange(wire) {
        return new Promise((resolve, reject) => {
            this.#pending = { resolve, reject };
            this.sock.write(wire, () => wire.fill(0));
        });
    }
}
/** The host closed a connection before replying. */
class Closed extends Error {
}
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
    #opts;
    #socketPath;
    #idle = [];
    #waiting = [];
    #open = 0;
    #closed = false;
    /** The framed connection, or its opening; null when there is none yet (or any more). */
    #framed = null;
    /** The host knows no channel: HTTP from now on. */
    #old = false;
    constructor(opts) {
        this.#opts = opts;
        this.#socketPath = socketPathOf(opts);
    }
    /** As `call`: the operation's result, or its VaultError. */
    async call(op, body) {
        if (this.#closed)
            throw new VaultError('VLT-3005');
        if (!CHANNEL_OPS.has(op))
            return call(this.#opts, op, body);
        // A request the host did not read goes again; a few times at most, each on a new connection.
        for (let attempt = 0; !this.#old; attempt++) {
            const conn = await this.#channel();
            // No host answers: the one-off path starts one (or says why not).
            if (conn === null)
                return call(this.#opts, op, body);
            if (conn === 'busy')
                break;
            if (conn === 'old')
                continue;
            try {
                return unwrap((await conn.send(op, Buffer.from(JSON.stringify(body)))));
            }
            catch (err) {
                if (this.#closed)
                    throw new VaultError('VLT-3005');
                if (err instanceof Error && err.name === 'Gone')
                    throw goneMidRequest(op);
                if (!(err instanceof Error && err.name === 'Unread'))
                    throw err;
                // Hosts going away one after another (a restart under load: a new host
                // that finds another serving exits): the one-off path waits for the one
                // that stays, or starts it. The host read nothing, so sending is safe.
                if (attempt >= 3)
                    return call(this.#opts, op, body);
            }
        }
        return this.#callHttp(op, body);
    }
    /** The framed connection, opened when there is none. */
    #channel() {
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
        const opening = import('./framed.js').then(({ openFramed }) => openFramed(this.#socketPath, () => {
            if (this.#framed === opening)
                this.#framed = null;
        }));
        this.#framed = opening;
        opening.then((c) => {
            if (c === 'old')
                this.#old = true;
            // Only a connection is kept: the next call asks again.
            if (c === null || typeof c === 'string') {
                if (this.#framed === opening)
                    this.#framed = null;
            }
            else if (this.#closed)
                c.close();
        }, () => {
            if (this.#framed === opening)
                this.#framed = null;
        });
        return opening;
    }
    /** A call on the kept-alive HTTP connections: for a host that knows no channel. */
    async #callHttp(op, body) {
        let conn = await this.#take();
        // No host answers: the one-off path starts one (or says why not).
        if (conn === null)
            return call(this.#opts, op, body);
        const payload = Buffer.from(JSON.stringify(body));
        const head = Buffer.from(channelHead(op, payload.length));
        let raw;
        try {
            try {
                raw = await conn.exchange(Buffer.concat([head, payload]));
            }
            catch (err) {
                if (!(err instanceof Closed) || conn.answered === 0)
                    throw err;
                this.#give(conn);
                conn = await this.#take();
                if (conn === null)
                    throw new VaultError('VLT-3005');
                raw = await conn.exchange(Buffer.concat([head, payload]));
            }
        }
        catch (err) {
            if (conn !== null)
                this.#give(conn);
            if (err instanceof Closed)
                throw goneMidRequest(op);
            throw err;
        }
        finally {
            payload.fill(0);
        }
        this.#give(conn);
        return unwrap(parseReply(raw));
    }
    /** Ends every connection; later calls fail. */
    close() {
        this.#closed = true;
        void this.#framed?.then((c) => {
            if (typeof c === 'object' && c !== null)
                c.close();
        }, () => { });
        for (const c of this.#idle.splice(0))
            c.sock.destroy();
        for (const w of this.#waiting.splice(0))
            w();
    }
    /** An idle connection, a new one, or (at the limit) the next one freed; null when no host answers. */
    async #take() {
        for (;;) {
            const now = Date.now();
            while (this.#idle.length > 0) {
                const c = this.#idle.pop();
                if (c.reusable && !c.sock.destroyed && now - c.idleSince < CHANNEL_IDLE_MS) {
                    c.sock.ref();
                    return c;
                }
                c.sock.destroy();
            }
            if (this.#closed)
                throw new VaultError('VLT-3005');
            if (this.#open < CHANNEL_MAX)
                return this.#connect();
            await new Promise((r) => this.#waiting.push(r));
        }
    }
    #connect() {
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
            sock.once('error', (err) => {
                if (connected)
                    return;
                if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')
                    resolve(null);
                else
                    reject(new VaultError('VLT-3005', undefined, { cause: err }));
            });
        });
    }
    #give(c) {
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
function channelHead(op, length) {
    return (`POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${length}\r\n\r\n`);
}
