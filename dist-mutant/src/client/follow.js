/**
 * Streamed replies: `audit --follow`, a render's `watch` and `run`'s session
 * hold, each on a connection of its own that lasts as long as the stream.
 */
import { VaultError, isErrorCode } from '../core/errors.js';
import { open, parseReply, requestHead, socketPathOf } from './request.js';
/**
 * `audit --follow`: sends the request and hands every line of the streamed
 * reply to `onLine` until the host closes the connection, or until `signal`
 * aborts: then the socket is destroyed and the promise resolves (the
 * dashboard stops its feed this way). An error reply (a normal JSON reply with
 * a Content-Length) is thrown as its VaultError.
 */
export function follow(opts, op, body, onLine, signal) {
    const socketPath = socketPathOf(opts);
    if (signal?.aborted === true)
        return Promise.resolve();
    return new Promise((resolve, reject) => {
        const payload = Buffer.from(JSON.stringify(body));
        const head = requestHead(op, payload.length);
        let buffered = Buffer.alloc(0);
        let streaming = false;
        let pending = '';
        const sock = open(opts, socketPath, op, body, (s) => s.write(Buffer.concat([Buffer.from(head), payload]), () => payload.fill(0)), (err) => {
            payload.fill(0);
            reject(err);
        });
        const stop = () => {
            payload.fill(0);
            sock.destroy();
            resolve();
        };
        signal?.addEventListener('abort', stop, { once: true });
        sock.on('close', () => signal?.removeEventListener('abort', stop));
        sock.on('error', (err) => {
            reject(new VaultError('VLT-3005', undefined, { cause: err }));
        });
        sock.on('data', (c) => {
            if (signal?.aborted === true)
                return;
            if (!streaming) {
                buffered = Buffer.concat([buffered, c]);
                const split = buffered.indexOf('\r\n\r\n');
                if (split < 0)
                    return;
                // A reply with a length is a whole JSON reply: an error before streaming began.
                if (/\r\ncontent-length:/i.test(buffered.subarray(0, split).toString('latin1')))
                    return;
                streaming = true;
                c = buffered.subarray(split + 4);
            }
            pending += c.toString('utf8');
            const lines = pending.split('\n');
            pending = lines.pop() ?? '';
            for (const line of lines)
                if (line !== '')
                    onLine(line);
        });
        sock.on('end', () => {
            if (streaming)
                return resolve();
            try {
                const reply = parseReply(buffered);
                if (reply.ok)
                    resolve();
                else
                    reject(new VaultError(isErrorCode(reply.code) ? reply.code : 'VLT-3007', reply.message));
            }
            catch (err) {
                reject(err);
            }
        });
    });
}
/**
 * Holds a `run` session on a connection of its own: the host ends the session
 * when this connection ends, so the session cannot outlive this process, even
 * one killed by SIGKILL. Resolves once the host says the hold is in place.
 * @throws VaultError the host's refusal (VLT-2040 for a token it does not know).
 */
export async function hold(opts, token) {
    const stop = new AbortController();
    let ready = () => { };
    const isHeld = new Promise((resolve) => (ready = resolve));
    const ended = follow(opts, 'session.hold', { token }, () => ready(), stop.signal);
    // A host that goes away later ends the hold; `ended` reports it, never as an unhandled rejection.
    ended.catch(() => { });
    await Promise.race([isHeld, ended]);
    return { ended, release: () => stop.abort() };
}
