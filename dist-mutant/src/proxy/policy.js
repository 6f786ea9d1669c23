/**
 * The reference policy, as decisions over plain data: who the caller is,
 * which requests get values filled and where they may go, which values may
 * go in a header, and what of a response is scrubbed. Nothing here does I/O;
 * server.ts carries the decisions out (the host resolves, DNS answers,
 * bytes move).
 *
 * Invariants it states:
 * - A value goes only to the host the request is addressed to (one Host,
 *   naming the destination), over HTTPS or to this machine over plain HTTP.
 * - Credentials that cannot be read are never taken for "none".
 * - A response to a filled request is scrubbed of the values, or refused
 *   when it cannot be read to be scrubbed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { VaultError } from '../core/errors.js';
import { MAX_REFS } from '../core/requests.js';
import { basicEchoes, contentEncoding, relayableHead, template, fill, unsafeInHeader, } from './headers.js';
import { basicReferenceIn } from './basic.js';
import { credentials } from './caller.js';
import { RawHeaders } from './raw-headers.js';
import { Unauthenticated } from './refusal.js';
import { parseAuthority } from './routing.js';
import { Scrubber } from './scrub.js';
/**
 * Whether `given` is `expected`, in time that does not depend on where they
 * differ or on either length: both are hashed to one size first, so not
 * even the session token's length is probed.
 */
export function sameToken(given, expected) {
    const digest = (t) => createHash('sha256').update(t, 'utf8').digest();
    return timingSafeEqual(digest(given), digest(expected));
}
/** A token other than the session's, at a session's proxy. */
export const notThisSession = () => new VaultError('VLT-2051', 'This proxy serves one `vault-cli run` session and admits only its token; nothing was sent.');
/**
 * The caller a CONNECT or absolute-form request names, or the refusal: a
 * malformed Proxy-Authorization, none where one is required (always, at a
 * session's proxy), or at a session's proxy (`session`: its token) any
 * other token, judged here, before the host is asked anything.
 */
export function callerOf(raw, requireCaller, session) {
    const c = credentials(raw);
    if (c.kind === 'token') {
        return session === undefined || sameToken(c.token, session) ? c.token : notThisSession();
    }
    if (c.kind === 'malformed' || requireCaller || session !== undefined) {
        return new Unauthenticated();
    }
    return null;
}
/**
 * Whether a connection to `dest` must not lead to this machine: a sandboxed
 * session's (`confine` set) unless the owner allowed that `host:port`.
 */
export const isConfined = (dest, confine) => confine !== undefined && !confine.has(`${dest.host}:${dest.port}`);
/** The refusal of a confined destination found to be on this machine. */
export const onThisMachine = (dest) => new VaultError('VLT-2053', `${dest.host}:${dest.port} is on this machine; from a sandbox the proxy goes there only when \`vault-cli run --allow-net ${dest.host}:${dest.port}\` allows it.`);
/**
 * Why a request's Host does not name where it goes, or null: exactly one
 * Host, naming the CONNECT target (or the absolute-form URL's host), with the
 * same port when it gives one. A value bound to one host must not go out
 * addressed to another (domain fronting on a shared CDN or load balancer).
 */
export function hostMismatch(raw, dest) {
    const hosts = RawHeaders.of(raw).all('host');
    if (hosts.length > 1)
        return 'more than one Host header';
    const host = hosts[0];
    if (host === undefined)
        return 'no Host header';
    const a = parseAuthority(host.trim(), dest.port);
    if (a === null)
        return 'an invalid Host header';
    if (a.host !== dest.host || a.port !== dest.port) {
        return `Host ${JSON.stringify(host.slice(0, 100))} is not the destination ${dest.host}:${dest.port}`;
    }
    return null;
}
/**
 * The plan for a request's headers: `forward` is what would go upstream,
 * `received` the client's own list (its Host is judged).
 */
export function planFill(forward, received, dest) {
    // Most requests hold no reference: their headers go on as they are, unsplit.
    if (!forward.someValue((v) => v.includes('vault://')) && !basicReferenceIn(forward)) {
        return { kind: 'pass', headers: forward };
    }
    const t = template(forward);
    const m = t.malformed[0];
    if (m !== undefined) {
        const message = `Malformed reference in header ${m.header}: ${JSON.stringify(m.written)}.`;
        return { kind: 'refuse', error: new VaultError('VLT-2046', message) };
    }
    if (t.refs.length === 0)
        return { kind: 'pass', headers: new RawHeaders(fill(t, [])) };
    const pin = hostMismatch(received, dest);
    if (pin !== null) {
        const message = `${pin}: a value goes only to the host the request is addressed to; nothing was sent.`;
        // At most what one host request takes: more must not make the report fail uncounted.
        const refs = t.refs.slice(0, MAX_REFS).map((r) => ({ entry: r.entry, field: r.field }));
        const signal = { kind: 'host_mismatch', host: dest.host, refs };
        return { kind: 'refuse', error: new VaultError('VLT-2048', message), signal };
    }
    return { kind: 'fill', template: t, plainHttp: !dest.tls };
}
const SIGNAL_TEXT = {
    host_mismatch: 'a reference sent with a Host that is not its destination',
};
/**
 * The answer to a refused request whose signal the host counted: the
 * refusal, saying it was recorded; or VLT-2043 when the agent is locked, by
 * this signal or before it.
 */
export function countedRefusal(refusal, signal, counted) {
    if (counted === 'locked')
        return new VaultError('VLT-2043');
    if (counted === 'lockdown') {
        return new VaultError('VLT-2043', `Second violation (${SIGNAL_TEXT[signal.kind]}): agent locked; the owner must unlock it with the hardware key.`);
    }
    return new VaultError(refusal.code, `${refusal.message} Violation recorded (${SIGNAL_TEXT[signal.kind]}); a second within two hours locks the agent.`);
}
/**
 * Plain HTTP carrying a value: refused unless the name resolved only to this
 * machine's loopback (`address`, null when not), and never to the proxy itself.
 */
export function plainHttpRefusal(dest, address, ownPort) {
    if (address === null) {
        return new VaultError('VLT-2045', 'Credentials go only over HTTPS (or plain HTTP to this machine, judged by what the name resolves to); nothing was sent.');
    }
    return dest.port === ownPort ? new VaultError('VLT-2049') : null;
}
/**
 * A resolved value that would split a header line, or (in the user part of
 * Basic credentials) move where the password starts, refused by the
 * reference that asked for it.
 */
export function unsafeValueRefusal(values, refs, inBasicUser = new Set()) {
    const bad = values.findIndex((v) => unsafeInHeader(v));
    if (bad !== -1) {
        return new VaultError('VLT-2047', `The value of ${refs[bad]?.written} holds CR, LF or NUL and cannot go in a header; nothing was sent.`);
    }
    const colon = values.findIndex((v, i) => inBasicUser.has(i) && v.includes(0x3a));
    if (colon === -1)
        return null;
    return new VaultError('VLT-2047', `The value of ${refs[colon]?.written} holds a colon and cannot be the user part of Basic credentials; nothing was sent.`);
}
/** A refusal of several references names each bad one by what the caller wrote, never a value. */
export function withRefs(err, refs) {
    if (err.problems.length === 0)
        return err;
    const named = err.problems.map((p) => `${refs[p.index]?.written}: ${p.code}`).join('; ');
    return new VaultError(err.code, `${err.message} ${named}`, {
        cause: err,
        problems: err.problems,
    });
}
/** What is echoed back in place of each filled value (and of filled Basic credentials). */
export const replacementsFor = (t, values) => [
    ...t.refs.map((r, i) => ({
        value: values[i],
        reference: Buffer.from(r.written, 'latin1'),
    })),
    ...basicEchoes(t, values),
];
/** Content encodings the proxy can undo to scrub a body. */
const DECODABLE = new Set(['gzip', 'x-gzip', 'deflate', 'br']);
/**
 * The plan for a response: refused when its head cannot be written as read
 * (node:http refuses some heads its parser reads), or when a body to scrub
 * is in an encoding the proxy cannot undo.
 */
export function planResponse(method, status, message, raw, replacements) {
    if (!relayableHead(message, raw)) {
        const error = new VaultError('VLT-3008', 'The upstream sent a response head that cannot be relayed.');
        return { kind: 'refuse', error };
    }
    const noBody = method === 'HEAD' || status === 204 || status === 304;
    const scrubBody = !noBody && new Scrubber(replacements).active;
    const encoding = scrubBody ? contentEncoding(raw) : null;
    if (encoding !== null && !DECODABLE.has(encoding)) {
        const error = new VaultError('VLT-3008', `Response in an encoding the proxy cannot check for echoed values (${encoding}).`);
        return { kind: 'refuse', error };
    }
    return { kind: 'relay', scrubBody, decode: encoding };
}
/**
 * Headers a WebSocket handshake must not carry upstream: with a value
 * injected the server's frames are read and scrubbed, so no extension is
 * offered that could compress them.
 */
export const upgradeDrops = (replacements) => new Scrubber(replacements).active ? ['sec-websocket-extensions'] : [];
