/**
 * Token format: `vlt_` + base62(agent id || secret) + base62(crc32), fixed
 * width. The prefix lets secret scanners spot a leaked token; the checksum lets
 * a typo fail before any lookup. Parsing is pure and cheap (the client checks a
 * token before it ever reaches the host); no sodium here.
 */
import { crc32 } from 'node:zlib';
export const AGENT_ID_BYTES = 16;
export const SECRET_BYTES = 32;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECK_CHARS = 6;
function widthFor(bytes) {
    return Math.ceil((bytes * 8) / Math.log2(62));
}
export function base62(bytes, width) {
    let n = 0n;
    for (const b of bytes)
        n = (n << 8n) | BigInt(b);
    let out = '';
    while (n > 0n) {
        out = ALPHABET[Number(n % 62n)] + out;
        n /= 62n;
    }
    return out.padStart(width, '0');
}
/** Null for any character outside the alphabet or a value too large for `bytes`. */
export function unbase62(text, bytes) {
    let n = 0n;
    for (const ch of text) {
        const d = ALPHABET.indexOf(ch);
        if (d < 0)
            return null;
        n = n * 62n + BigInt(d);
    }
    if (n >> BigInt(bytes * 8) !== 0n)
        return null;
    const out = Buffer.alloc(bytes);
    for (let i = bytes - 1; i >= 0; i--) {
        out[i] = Number(n & 0xffn);
        n >>= 8n;
    }
    return out;
}
function checksum(body) {
    const c = crc32(Buffer.from(body, 'ascii'));
    const b = Buffer.alloc(4);
    b.writeUInt32BE(c >>> 0);
    return base62(b, CHECK_CHARS);
}
/** A string of `prefix`, the bytes in base62 and a checksum. */
export function encodeKeyString(prefix, bytes) {
    const body = prefix + base62(bytes, widthFor(bytes.length));
    return body + checksum(body);
}
/** The bytes, or null when the prefix, length, alphabet or checksum is wrong. */
export function decodeKeyString(prefix, text, bytes) {
    const width = widthFor(bytes);
    if (text.length !== prefix.length + width + CHECK_CHARS || !text.startsWith(prefix))
        return null;
    const body = text.slice(0, prefix.length + width);
    if (checksum(body) !== text.slice(prefix.length + width))
        return null;
    return unbase62(body.slice(prefix.length), bytes);
}
export const TOKEN_PREFIX = 'vlt_';
export const RECOVERY_PREFIX = 'vltr_';
/** Builds a token from a fresh agent id and secret (both random, from the caller). */
export function formatToken(agentId, secret) {
    return encodeKeyString(TOKEN_PREFIX, Buffer.concat([agentId, secret]));
}
/** The agent id and secret, or null when the text is not a well-formed token. */
export function parseToken(text) {
    const raw = decodeKeyString(TOKEN_PREFIX, text.trim(), AGENT_ID_BYTES + SECRET_BYTES);
    if (raw === null)
        return null;
    return {
        agentId: raw.subarray(0, AGENT_ID_BYTES).toString('hex'),
        secret: raw.subarray(AGENT_ID_BYTES),
    };
}
