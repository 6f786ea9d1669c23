import { VaultError } from '../core/errors.js';
import { serializeHead, statusLine } from './head.js';
/** No usable caller token: answered 407 with a challenge, so clients know to send one. */
export class Unauthenticated extends VaultError {
    constructor() {
        super('VLT-2040', "The proxy needs a token as the proxy URL's user-info (http://vault:<token>@127.0.0.1:<port>); nothing was sent.");
    }
}
const CHALLENGE = 'Basic realm="vault-cli"';
/** HTTP status of each refusal. */
const STATUS = {
    'VLT-2040': 403,
    'VLT-2041': 403,
    'VLT-2042': 429,
    'VLT-2043': 423,
    'VLT-2044': 400,
    'VLT-2045': 403,
    'VLT-2046': 400,
    'VLT-2047': 422,
    'VLT-2048': 400,
    'VLT-2049': 400,
    'VLT-2052': 403,
    'VLT-2053': 403,
    'VLT-2056': 400,
    'VLT-2057': 400,
    'VLT-2058': 403,
    'VLT-2059': 413,
    'VLT-2063': 502,
    'VLT-3008': 502,
};
export function statusOf(err) {
    if (err instanceof Unauthenticated)
        return 407;
    return STATUS[err.code] ?? (err.code.startsWith('VLT-3') ? 502 : 403);
}
function errorBody(err) {
    return Buffer.from(err.line() + '\n');
}
/** Anything thrown where a refusal was due: ours as it is, anything else VLT-3007. */
export const asRefusal = (err) => err instanceof VaultError ? err : new VaultError('VLT-3007', undefined, { cause: err });
export const upstreamFailure = (dest, reason) => new VaultError('VLT-3008', `Upstream ${dest.host}:${dest.port}: ${reason}.`);
/** RFC 9209 error types: what kind of failure each code is, for a client that reads Proxy-Status. */
const PROXY_ERROR = {
    'VLT-2048': 'http_request_error',
    'VLT-2049': 'http_request_error',
    'VLT-2053': 'destination_ip_prohibited',
    'VLT-3007': 'proxy_internal_error',
    'VLT-3008': 'destination_unavailable',
};
/** The longest reason phrase sent: the code and the start of the message. */
const MAX_REASON = 200;
/**
 * Printable ASCII only: a reason phrase and an RFC 8941 string may hold
 * nothing else (the messages are ours, but may quote what a caller wrote).
 */
const printable = (text) => text.replace(/[^\x20-\x7e]/g, '?');
/** The status line's reason phrase: `VLT-2053 Destination is on this machine...`. */
export function reasonOf(err) {
    const reason = printable(`${err.code} ${err.message}`);
    return reason.length <= MAX_REASON ? reason : `${reason.slice(0, MAX_REASON - 3)}...`;
}
/** `Proxy-Status` (RFC 9209): this proxy, the error type, the code and message as details. */
export function proxyStatusOf(err) {
    const type = PROXY_ERROR[err.code] ?? 'http_request_denied';
    const details = printable(`${err.code} ${err.message}`).replace(/[\\"]/g, '\\$&');
    return `vault-cli; error=${type}; details="${details}"`;
}
/** The headers of a refusal, with its body's length. */
function refusalHeaders(err, length) {
    return [
        ['Content-Type', 'text/plain; charset=utf-8'],
        ...(err instanceof Unauthenticated
            ? [['Proxy-Authenticate', CHALLENGE]]
            : []),
        ['Proxy-Status', proxyStatusOf(err)],
        ['X-Vault-Error', err.code],
        ['Content-Length', String(length)],
        ['Connection', 'close'],
    ];
}
/**
 * An error reply on a socket that is not (or no longer) an HTTP response
 * object; `report` hears of it. `carried`: false for an upstream's failure
 * of a request that carried no reference.
 */
export function rawError(socket, err, report, carried = true) {
    report?.(err.code, err.message, carried && !(err instanceof Unauthenticated));
    const body = errorBody(err);
    const head = serializeHead(statusLine(statusOf(err), reasonOf(err)), refusalHeaders(err, body.length));
    socket.end(Buffer.concat([head, body]));
}
/**
 * An error reply as the response to `res`'s request, or a cut connection
 * once a head went out; `report` hears of it either way (`carried` as for
 * rawError).
 */
export function reply(res, err, report, carried = true) {
    report?.(err.code, err.message, carried && !(err instanceof Unauthenticated));
    if (res.headersSent) {
        res.destroy();
        return;
    }
    const body = errorBody(err);
    res.writeHead(statusOf(err), reasonOf(err), refusalHeaders(err, body.length).flat());
    res.end(body);
}
