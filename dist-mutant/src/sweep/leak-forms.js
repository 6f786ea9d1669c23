/**
 * The shapes a released value takes in a transcript: as written, base64 (at
 * each of its three alignments, standard and URL-safe alphabets), URL-encoded,
 * and as a JSON string's contents (escaped once, or twice for JSON inside a
 * JSON string, as tool results in agents' JSONL often are). The sweep looks
 * for all of them at once (multi-match.ts). Pure.
 */
/**
 * Values shorter than this are not swept: a short value is found everywhere by
 * chance (a 4-digit PIN), and its encodings' stable parts shrink to nothing.
 */
export const MIN_SWEEP_BYTES = 8;
/**
 * The distinct forms of `value`, each at least MIN_SWEEP_BYTES long (a form
 * equal to another is listed once, under the first name). For base64 only the
 * characters that depend on the value alone are kept: the first and last
 * characters of an encoded value also carry bits of its neighbours.
 */
export function leakForms(value) {
    const v = Buffer.from(value);
    const out = [];
    const seen = new Set();
    const add = (form, bytes) => {
        if (bytes.length < MIN_SWEEP_BYTES)
            return;
        const key = bytes.toString('latin1');
        if (seen.has(key))
            return;
        seen.add(key);
        out.push({ form, bytes });
    };
    add('plain', v);
    for (let align = 0; align < 3; align++) {
        const core = base64Core(v, align);
        add('base64', Buffer.from(core, 'latin1'));
        add('base64url', Buffer.from(core.replace(/\+/g, '-').replace(/\//g, '_'), 'latin1'));
    }
    add('url', percentEncode(v, URI_COMPONENT_SAFE, HEX_UPPER));
    add('url', percentEncode(v, URI_COMPONENT_SAFE, HEX_LOWER));
    add('url', percentEncode(v, UNRESERVED, HEX_UPPER));
    // application/x-www-form-urlencoded: a space is `+`.
    add('url', percentEncode(v, FORM_SAFE, HEX_UPPER, 0x20));
    const text = utf8(v);
    if (text !== null) {
        for (const once of jsonEscapes(text)) {
            add('json', Buffer.from(once, 'utf8'));
            add('json2', Buffer.from(JSON.stringify(once).slice(1, -1), 'utf8'));
        }
    }
    return out;
}
/**
 * The base64 characters that encode `value` alone when it starts `align` bytes
 * into a 3-byte group: character i covers bits [6i, 6i + 6) of the stream, and
 * the value's bits are [8 align, 8 (align + n)).
 */
export function base64Core(value, align) {
    const enc = Buffer.concat([Buffer.alloc(align), value])
        .toString('base64')
        .replace(/=+$/, '');
    const first = Math.ceil((8 * align) / 6);
    const last = Math.floor((8 * (align + value.length)) / 6);
    return enc.slice(first, Math.max(first, last));
}
/** Bytes as a table: 1 where the set leaves the byte as it is. */
function byteSet(chars) {
    const t = new Uint8Array(256);
    for (const c of chars)
        t[c.charCodeAt(0)] = 1;
    return t;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** encodeURIComponent's own unescaped set. */
const URI_COMPONENT_SAFE = byteSet(ALNUM + "-_.!~*'()");
/** RFC 3986's unreserved set. */
const UNRESERVED = byteSet(ALNUM + '-_.~');
/** application/x-www-form-urlencoded's (WHATWG URLSearchParams). */
const FORM_SAFE = byteSet(ALNUM + '*-._');
const HEX_UPPER = '0123456789ABCDEF';
const HEX_LOWER = '0123456789abcdef';
/**
 * Per-cent encoded: the bytes in `safe` as they are, a space as `space` when
 * given, the rest as %XX. A value with nothing to encode comes back as it is
 * (a table, not a regular expression a byte: the sweep builds these for
 * every released value before it can start).
 */
function percentEncode(v, safe, hex, space) {
    let extra = 0;
    for (const b of v)
        if (safe[b] === 0 && b !== space)
            extra += 2;
    if (extra === 0)
        return v;
    const out = Buffer.allocUnsafe(v.length + extra);
    let o = 0;
    for (const b of v) {
        if (safe[b] === 1)
            out[o++] = b;
        else if (b === space)
            out[o++] = 0x2b;
        else {
            out[o++] = 0x25;
            out[o++] = hex.charCodeAt(b >> 4);
            out[o++] = hex.charCodeAt(b & 15);
        }
    }
    return out;
}
/** The value as text, or null when it is not valid UTF-8 (then it has no JSON form). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
function utf8(v) {
    try {
        return strictUtf8.decode(v);
    }
    catch {
        return null;
    }
}
/**
 * A string's contents as JSON writers put them: JSON.stringify's, with `/`
 * escaped (PHP, some loggers), and with everything past ASCII as \uXXXX
 * (Python's json.dumps by default).
 */
function jsonEscapes(text) {
    const plain = JSON.stringify(text).slice(1, -1);
    const slash = plain.replace(/\//g, '\\/');
    const ascii = plain.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
    return [plain, slash, ascii];
}
