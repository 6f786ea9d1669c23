/**
 * Who is asking: the token a tool sends as the proxy URL's user-info
 * (`http://vault:<token>@127.0.0.1:<port>`). Every client that honours
 * HTTPS_PROXY turns that user-info into `Proxy-Authorization: Basic
 * base64(vault:<token>)` on its CONNECT and on absolute-form requests, so one
 * proxy can serve several supervised agents and tie each fill to its caller.
 *
 * The token is only carried here, never checked: the vault host decides
 * whether it is valid when a reference is resolved. It never goes upstream
 * (Proxy-Authorization is dropped as hop-by-hop) and never into a message.
 */
import { RawHeaders } from './raw-headers.js';
/** The user part of the URL; ignored when reading, since only the password is the token. */
const USER = 'vault';
/** Longer than any token the host mints; a larger value is refused unread. */
const MAX_TOKEN = 512;
/**
 * The proxy URL a tool is given, with `token` as its user-info password
 * (percent-encoded, so a token of any characters survives URL parsing).
 */
export function proxyUrl(port, token) {
    return `http://${USER}:${encodeURIComponent(token)}@127.0.0.1:${port}`;
}
const NONE = { kind: 'none' };
const MALFORMED = { kind: 'malformed' };
/**
 * The caller's token from a raw header list: the password of a Basic
 * `Proxy-Authorization` (the user part is ignored). Terse by design: a
 * malformed header is reported as such, never quoted.
 */
export function credentials(raw) {
    const all = RawHeaders.of(raw).all('proxy-authorization');
    if (all.length > 1)
        return MALFORMED;
    const value = all[0];
    if (value === undefined)
        return NONE;
    const m = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(value);
    if (m === null || m[1].length > ((MAX_TOKEN + 256) * 4) / 3)
        return MALFORMED;
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1)
        return MALFORMED;
    const token = decoded.slice(colon + 1);
    // A token is printable ASCII; anything else cannot be one and is not passed on.
    if (token === '' || token.length > MAX_TOKEN || !/^[\x21-\x7e]+$/.test(token)) {
        return MALFORMED;
    }
    return { kind: 'token', token };
}
