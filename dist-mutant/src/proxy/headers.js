/**
 * What the proxy reads in header lists (raw-headers.ts views, or Node's flat
 * raw arrays): the references in their values (and inside Basic credentials,
 * basic.ts), lifted out as a template and filled in place with the resolved
 * values (every other byte, header, order, case and duplicate kept); the
 * request framing it refuses; what encodings and heads it can relay.
 */
import { ReferenceScanner } from '../core/reference.js';
import { basicWithReference, encodeBasic } from './basic.js';
import { RawHeaders } from './raw-headers.js';
/**
 * The headers that go on to the next hop, from a flat raw list (the view's
 * `withoutHopByHop`, in array form). `keepUpgrade` keeps `Upgrade` and sends `Connection: Upgrade` (a WebSocket handshake).
 */
export function forwardable(raw, keepUpgrade = false) {
    return [...new RawHeaders(raw).withoutHopByHop(keepUpgrade).toArray()];
}
/**
 * Why a request's framing is refused, or null: both Content-Length and
 * Transfer-Encoding, more than one Content-Length (even equal), a length that
 * is not digits, or a Transfer-Encoding that is not exactly `chunked`.
 * Two readings of one request's length are how requests are smuggled.
 */
export function framingProblem(raw) {
    const h = RawHeaders.of(raw);
    const lengths = h.all('content-length');
    const encodings = h.all('transfer-encoding');
    if (lengths.length > 0 && encodings.length > 0) {
        return 'both Content-Length and Transfer-Encoding';
    }
    if (lengths.length > 1)
        return 'more than one Content-Length';
    if (lengths.length === 1 && !/^[0-9]{1,15}$/.test(lengths[0].trim())) {
        return 'Content-Length is not a number';
    }
    if (encodings.length > 1)
        return 'more than one Transfer-Encoding';
    if (encodings.length === 1 && encodings[0].trim().toLowerCase() !== 'chunked') {
        return 'Transfer-Encoding other than chunked';
    }
    return null;
}
/** Lifts the references out of a (forwardable) raw header list. Values are latin1 on the wire. */
export function template(raw) {
    const headers = [];
    const refs = [];
    const byKey = new Map();
    const malformed = [];
    const inBasicUser = new Set();
    for (const [name, value] of RawHeaders.of(raw)) {
        const parts = [];
        const basic = basicWithReference(name, value);
        if (basic === null && !value.includes('vault://')) {
            headers.push({ name, parts: [Buffer.from(value, 'latin1')] });
            continue;
        }
        // In Basic credentials, the user part ends at the first colon.
        let inUser = basic !== null;
        const sink = {
            text: (b) => {
                if (inUser && b.includes(0x3a))
                    inUser = false;
                parts.push(Buffer.from(b));
            },
            reference: (r) => {
                const key = JSON.stringify([r.entry, r.field]);
                let index = byKey.get(key);
                if (index === undefined) {
                    index = refs.length;
                    byKey.set(key, index);
                    refs.push({ entry: r.entry, field: r.field, written: r.written });
                }
                if (inUser)
                    inBasicUser.add(index);
                parts.push(index);
            },
            malformed: (m) => malformed.push({ header: name, written: m.written }),
        };
        const scanner = new ReferenceScanner();
        scanner.write(basic?.decoded ?? Buffer.from(value, 'latin1'), sink);
        scanner.end(sink);
        headers.push(basic === null ? { name, parts } : { name, parts, basic });
    }
    return { headers, refs, malformed, inBasicUser };
}
/** CR, LF or NUL: a value that would split or end a header line. */
export function unsafeInHeader(value) {
    return value.includes(0x0d) || value.includes(0x0a) || value.includes(0x00);
}
const filled = (h, values) => Buffer.concat(h.parts.map((p) => (typeof p === 'number' ? values[p] : p)));
/** The raw header list with every reference replaced by its value (`values[i]` for `refs[i]`). */
export function fill(t, values) {
    const out = [];
    for (const h of t.headers) {
        const bytes = filled(h, values);
        out.push(h.name, h.basic ? encodeBasic(h.basic.scheme, bytes) : bytes.toString('latin1'));
    }
    return out;
}
/**
 * What an echo of filled Basic credentials is scrubbed back to: the base64 as
 * the client wrote it. (Each value alone is scrubbed too; this is the one
 * encoding of it the proxy made, so the one it can recognise.)
 */
export function basicEchoes(t, values) {
    return t.headers.flatMap((h) => h.basic
        ? [
            {
                value: Buffer.from(filled(h, values).toString('base64')),
                reference: Buffer.from(h.basic.written),
            },
        ]
        : []);
}
/** Whether a header list says the body may be decoded (an encoding the proxy can undo). */
export function contentEncoding(raw) {
    const all = RawHeaders.of(raw).all('content-encoding');
    const enc = all.length === 0 ? null : all.map((v) => v.trim().toLowerCase()).join(', ');
    return enc === null || enc === 'identity' ? null : enc;
}
/** Characters node:http refuses in a header value or a reason phrase. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** An RFC 9110 token, what node:http requires of a header name. */
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/**
 * Whether a response head can be written to the client as it was read: its
 * reason phrase and every header are what node:http accepts. Node's parser
 * reads some heads its writer refuses (found by fuzzing); relaying one
 * would throw out of the response path.
 */
export function relayableHead(message, raw) {
    if (BAD_VALUE.test(message))
        return false;
    for (const [name, value] of RawHeaders.of(raw)) {
        if (!TOKEN.test(name) || BAD_VALUE.test(value))
            return false;
    }
    return true;
}
