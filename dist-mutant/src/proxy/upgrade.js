import { pipeline } from 'node:stream';
import { VaultError } from '../core/errors.js';
import { responseHeaders } from './forward.js';
import { UnsafeHead, serializeHead, statusLine } from './head.js';
import { RawHeaders } from './raw-headers.js';
import { rawError, upstreamFailure } from './refusal.js';
import { Scrubber, scrubStream } from './scrub.js';
import { ServerFrameScrubber } from './websocket.js';
/** Is this Upgrade header value a WebSocket handshake (`websocket`, any case)? */
export function isWebSocket(upgrade) {
    return upgrade !== undefined && upgrade.trim().toLowerCase() === 'websocket';
}
const unrelayable = () => new VaultError('VLT-3008', 'The upstream sent a response head that cannot be relayed.');
/**
 * The upstream's answer head as the client gets it, or null when it cannot
 * be written as it says (a header line break llhttp let through).
 */
function answerHead(res, headers) {
    try {
        return serializeHead(statusLine(res.statusCode ?? 502, res.statusMessage ?? ''), headers);
    }
    catch (err) {
        if (err instanceof UnsafeHead)
            return null;
        throw err;
    }
}
/**
 * Relays the answer to `up`, the handshake sent on: `client` is the client's
 * socket, `head` what it sent past its request; `report` hears of a refusal
 * (`carried`: whether the handshake carried a value, as refusal.ts says).
 */
export function relayUpgrade(client, head, up, dest, replacements, report, carried = true) {
    const refuse = (err) => rawError(client, err, report, carried);
    up.on('upgrade', (upRes, upSocket, upHead) => upgraded(client, head, upRes, upSocket, upHead, dest, replacements, refuse));
    up.on('response', (upRes) => {
        // The server declined the upgrade: an ordinary response, then close.
        const headers = responseHeaders(new RawHeaders(upRes.rawHeaders), replacements, false)
            .delete('content-length')
            .set('Connection', 'close');
        const answer = answerHead(upRes, headers);
        if (answer === null) {
            upRes.destroy();
            return refuse(unrelayable());
        }
        client.write(answer);
        pipeline(upRes, scrubStream(replacements), client, () => client.destroy());
    });
    up.on('error', (err) => refuse(upstreamFailure(dest, err.code ?? 'connection failed')));
}
/** The upstream switched protocols: WebSocket only, its answer relayed, then the two sides joined. */
function upgraded(client, head, upRes, upSocket, upHead, dest, replacements, refuse) {
    if (!isWebSocket(upRes.headers.upgrade)) {
        upSocket.destroy();
        const message = `Upstream ${dest.host}:${dest.port} switched to another protocol.`;
        return refuse(new VaultError('VLT-3008', message));
    }
    const raw = new RawHeaders(upRes.rawHeaders);
    const answer = answerHead(upRes, responseHeaders(raw, replacements, false, true));
    if (answer === null) {
        upSocket.destroy();
        return refuse(unrelayable());
    }
    client.write(answer);
    join(client, head, upSocket, upHead, replacements);
}
/** The two sides of an upgraded connection joined, the server's frames scrubbed when a value went in. */
function join(client, head, upSocket, upHead, replacements) {
    if (head.length > 0)
        upSocket.write(head);
    upSocket.on('error', () => client.destroy());
    client.on('error', () => upSocket.destroy());
    client.pipe(upSocket);
    // The server closed: what the client still sends (its close frame) has
    // nowhere to go. Writing it to the ended connection would fail and tear
    // down the client's side before it reads the server's last frames.
    upSocket.once('end', () => client.unpipe(upSocket));
    if (!new Scrubber(replacements).active) {
        if (upHead.length > 0)
            client.write(upHead);
        upSocket.pipe(client);
        return;
    }
    const frames = new ServerFrameScrubber(replacements);
    // A frame it cannot read or hold: the client got a close frame; the server is dropped.
    frames.once('refused', () => upSocket.destroy());
    frames.on('error', () => client.destroy());
    if (upHead.length > 0)
        frames.write(upHead);
    upSocket.pipe(frames).pipe(client);
}
