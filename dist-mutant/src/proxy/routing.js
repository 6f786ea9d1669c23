/**
 * Where a request goes, decided from what the client wrote and nothing else:
 * a CONNECT target opens a tunnel, an absolute-form request names its own
 * destination, an origin-form request goes where its tunnel goes. Pure: the
 * refusals are returned as data for the server to send.
 *
 * Invariant it guards: nothing odd reaches DNS, SNI or a certificate (every
 * authority is checked), and nothing addressed to the proxy itself is
 * relayed (it serves no API and no page).
 */
import { isIP } from 'node:net';
import { VaultError } from '../core/errors.js';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);
const isLoopback = (host) => LOOPBACK.has(host) || /^127\./.test(host);
/** Is this authority the proxy listening on `ownPort`? */
export const isSelf = (a, ownPort) => isLoopback(a.host) && a.port === ownPort;
const HOST_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
/**
 * A CONNECT target or absolute-form authority, checked: a DNS name of valid
 * labels or an IP address, and a port 1-65535. Anything else is refused, so
 * nothing odd reaches DNS, SNI or a certificate.
 */
export function parseAuthority(authority, defaultPort) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/@]+))(?::([0-9]{1,5}))?$/.exec(authority);
    if (m === null)
        return null;
    const port = m[3] === undefined ? defaultPort : Number(m[3]);
    if (port === null || !Number.isInteger(port) || port < 1 || port > 65535)
        return null;
    if (m[1] !== undefined)
        return isIP(m[1]) === 6 ? { host: m[1].toLowerCase(), port } : null;
    const host = m[2].toLowerCase().replace(/\.$/, '');
    if (isIP(host) === 4)
        return { host, port };
    if (host.length > 253 || /^[0-9.]+$/.test(host))
        return null;
    return host.split('.').every((l) => HOST_LABEL.test(l)) ? { host, port } : null;
}
/**
 * A CONNECT's target, or the refusal: an invalid authority, or the proxy itself.
 */
export function routeConnect(target, ownPort) {
    const a = parseAuthority(target, null);
    if (a === null)
        return new VaultError('VLT-2048', 'Invalid CONNECT target.');
    if (isSelf(a, ownPort))
        return new VaultError('VLT-2049');
    return a;
}
/**
 * Where a request goes and for whom: inside a tunnel, its target and caller
 * (the request must be in origin form); outside, its absolute-form URL and
 * the caller `callerOf` reads from its own Proxy-Authorization (asked only
 * once the URL is known good).
 */
export function routeRequest(url, tunnel, ownPort, callerOf) {
    if (tunnel !== undefined) {
        if (url.startsWith('/') || url === '*')
            return { dest: tunnel, path: url, caller: tunnel.caller };
        return new VaultError('VLT-2048', 'Inside a tunnel, requests are in origin form.');
    }
    const m = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
    if (m === null)
        return new VaultError('VLT-2049');
    const tls = m[1].toLowerCase() === 'https';
    const a = parseAuthority(m[2], tls ? 443 : 80);
    if (a === null)
        return new VaultError('VLT-2048', 'Invalid host in the request URL.');
    if (isSelf(a, ownPort))
        return new VaultError('VLT-2049');
    const caller = callerOf();
    if (caller instanceof VaultError)
        return caller;
    const rest = m[3];
    return {
        dest: { tls, ...a },
        path: rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`,
        caller,
    };
}
