/**
 * A framed connection to the host (src/core/frames.ts), for HostChannel: one
 * kept connection that carries all of a process's concurrent agent requests,
 * each under an id its reply repeats. Each request is written as it comes:
 * holding requests back while earlier ones were in the host, to send them in
 * one write, measured no cheaper for the host and slower (issue 28; see
 * docs/decisions.md). Requests that arrive while the host is busy are read
 * together anyway, and join one group commit there.
 *
 * What becomes of a request the connection cannot finish is exact: a request
 * the host never read (it said GOODBYE first, or it was never written) fails
 * with Unread and may be sent again; one the host read and did not answer
 * (it was killed) fails with Gone, and is not sent again.
 */
import { connect } from 'node:net';
import { VaultError } from '../core/errors.js';
import { CHANNEL_PATH, CHANNEL_UPGRADE, FrameReader, GOODBYE, MAX_ID, requestFrame, } from '../core/frames.js';
/** The host did not read the request: sending it again is safe. */
export class Unread extends Error {
    name = 'Unread';
}
/** The host read the request and went away without answering. */
export class Gone extends Error {
    name = 'Gone';
}
export class FramedConnection {
    #sock;
    #pending = new Map();
    #nextId = 1;
    #goodbye = false;
    /** No new requests: the host said goodbye, or the connection ended. */
    done = false;
    #onDone;
    constructor(sock, first, onDone) {
        this.#sock = sock;
        this.#onDone = onDone;
        sock.setNoDelay(true);
        sock.unref();
        const reader = new FrameReader({
            head: () => true,
            frame: (id, payload) => this.#reply(id, payload),
            dropped: () => { },
        });
        sock.on('data', (c) => reader.push(c));
        sock.on('error', () => sock.destroy());
        sock.once('close', () => {
            reader.wipe();
            this.#end();
            for (const p of this.#pending.values())
                p.reject(this.#goodbye ? new Unread() : new Gone());
            this.#pending.clear();
        });
        if (first.length > 0)
            reader.push(first);
    }
    /** Sends `op` with its body's JSON bytes (wiped here) and resolves with its reply. */
    send(op, body) {
        if (this.done) {
            body.fill(0);
            return Promise.reject(new Unread());
        }
        const id = this.#nextId;
        this.#nextId = id >= MAX_ID ? 1 : id + 1;
        const frame = requestFrame(id, op, body);
        body.fill(0);
        return new Promise((resolve, reject) => {
            if (this.#sock.destroyed) {
                frame.fill(0);
                reject(new Unread());
                return;
            }
            this.#pending.set(id, { resolve, reject });
            if (this.#pending.size === 1)
                this.#sock.ref();
            // A request may hold a token: zeroed once the socket has taken it.
            this.#sock.write(frame, () => frame.fill(0));
        });
    }
    close() {
        this.#sock.destroy();
    }
    #reply(id, payload) {
        if (id === GOODBYE) {
            // The host reads nothing more here: whatever it has not answered it never read.
            this.#goodbye = true;
            this.#end();
            this.#sock.destroy();
            return;
        }
        const p = this.#pending.get(id);
        if (p === undefined) {
            this.#sock.destroy();
            return;
        }
        this.#pending.delete(id);
        if (this.#pending.size === 0)
            this.#sock.unref();
        try {
            p.resolve(JSON.parse(payload.toString('utf8')));
        }
        catch {
            p.reject(new VaultError('VLT-3007', 'The vault host sent a malformed reply.'));
        }
        finally {
            payload.fill(0);
        }
    }
    #end() {
        if (this.done)
            return;
        this.done = true;
        this.#onDone();
    }
}
const UPGRADE = `GET ${CHANNEL_PATH} HTTP/1.1\r\nHost: vault-host\r\nConnection: Upgrade\r\n` +
    `Upgrade: ${CHANNEL_UPGRADE}\r\n\r\n`;
/**
 * Opens a framed connection to the host at `socketPath`: the connection, or
 * `old` when the host does not know the channel (404: a host of an earlier
 * version; HTTP then), `busy` when it refused it for now (HTTP for this call
 * says why), or null when no host answers.
 * @throws VaultError VLT-3005 when the socket fails otherwise.
 */
export function openFramed(socketPath, onDone) {
    return new Promise((resolve, reject) => {
        const sock = connect(socketPath);
        let head = Buffer.alloc(0);
        let settled = false;
        const settle = (v) => {
            settled = true;
            sock.off('data', onData);
            resolve(v);
        };
        const onData = (c) => {
            head = Buffer.concat([head, c]);
            const split = head.indexOf('\r\n\r\n');
            if (split < 0)
                return;
            const status = /^HTTP\/1\.1 ([0-9]{3}) /.exec(head.toString('latin1', 0, split))?.[1];
            if (status !== '101') {
                sock.destroy();
                return settle(status === '404' ? 'old' : 'busy');
            }
            settle(new FramedConnection(sock, head.subarray(split + 4), onDone));
        };
        sock.on('data', onData);
        sock.once('connect', () => sock.write(UPGRADE));
        sock.once('error', (err) => {
            if (settled)
                return;
            if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET') {
                settle(null);
            }
            else {
                settled = true;
                reject(new VaultError('VLT-3005', undefined, { cause: err }));
            }
        });
        // Closed before it answered: a host stopping as this connected.
        sock.once('close', () => {
            if (!settled)
                settle(null);
        });
    });
}
