/**
 * The owner's secrets (passphrase, new passphrase, recovery key) are taken out
 * of a request's raw JSON bytes into wipeable Buffers before the body is
 * parsed, and blanked in those bytes, so the host never holds them as
 * JavaScript strings: a string cannot be wiped and stays in the heap until the
 * collector reuses its memory (issue 16 found 15 copies of the passphrase in
 * the host's heap after owner requests had ended).
 *
 * It reads the client's compact JSON (`JSON.stringify`, no whitespace): a key
 * counts only right after `{` or `,`, where no string value can put it (a `"`
 * inside a string is always escaped). A body in another layout keeps its
 * secret as a string; it still works, it is only not wiped.
 */
import { OWNER_SECRET_FIELDS } from '../../core/protocol.js';
import { Secret } from '../../crypto/secret.js';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const SIMPLE = {
    0x22: 0x22,
    0x5c: 0x5c,
    0x2f: 0x2f,
    0x62: 0x08,
    0x66: 0x0c,
    0x6e: 0x0a,
    0x72: 0x0d,
    0x74: 0x09,
};
function hex4(raw, at) {
    const text = raw.toString('latin1', at, at + 4);
    return /^[0-9a-fA-F]{4}$/.test(text) ? parseInt(text, 16) : null;
}
/** The bytes of a JSON string's content (`raw`, escapes and all) as UTF-8; null when malformed. */
function unescape(raw) {
    const out = Buffer.alloc(raw.length);
    let n = 0;
    for (let i = 0; i < raw.length; i++) {
        const c = raw[i];
        if (c !== BACKSLASH) {
            out[n++] = c;
            continue;
        }
        const e = raw[++i];
        if (e === undefined)
            return null;
        const simple = SIMPLE[e];
        if (simple !== undefined) {
            out[n++] = simple;
            continue;
        }
        if (e !== 0x75)
            return null;
        let cp = hex4(raw, i + 1);
        if (cp === null)
            return null;
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && raw[i + 1] === BACKSLASH && raw[i + 2] === 0x75) {
            const low = hex4(raw, i + 3);
            if (low !== null && low >= 0xdc00 && low <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                i += 6;
            }
        }
        // A lone surrogate becomes U+FFFD, as Buffer.from(string) would make it.
        if (cp >= 0xd800 && cp <= 0xdfff)
            cp = 0xfffd;
        n += out.write(String.fromCodePoint(cp), n, 'utf8');
    }
    const value = Buffer.from(out.subarray(0, n));
    out.fill(0);
    return value;
}
/**
 * Moves each owner secret field of the compact JSON in `raw` into a Secret and
 * leaves `""` plus spaces in its place (still valid JSON, same length).
 */
export function liftOwnerSecrets(raw) {
    const lifted = new Map();
    for (const key of OWNER_SECRET_FIELDS) {
        const needle = Buffer.from(`"${key}":"`);
        let at = raw.indexOf(needle);
        while (at > 0 && raw[at - 1] !== 0x7b && raw[at - 1] !== 0x2c) {
            at = raw.indexOf(needle, at + 1);
        }
        if (at <= 0)
            continue;
        const start = at + needle.length;
        let end = start;
        while (end < raw.length && raw[end] !== QUOTE)
            end += raw[end] === BACKSLASH ? 2 : 1;
        if (end >= raw.length)
            continue;
        const value = unescape(raw.subarray(start, end));
        if (value === null)
            continue;
        lifted.set(key, new Secret(value));
        raw[start] = QUOTE;
        raw.fill(SPACE, start + 1, end + 1);
    }
    return lifted;
}
/**
 * The owner's secrets of one request, handed to its handler with the body:
 * those lifted from the bytes, and any made from the body's own strings (a
 * body in another JSON layout). The server wipes them all once the request is
 * answered, used or not.
 */
export class OwnerSecrets {
    #held;
    constructor(lifted = new Map()) {
        this.#held = lifted;
    }
    /**
     * `field` as a Secret: the lifted one, else one made from `sent` (the body's
     * value, blank when it was lifted); undefined when the body has none.
     */
    get(field, sent) {
        const held = this.#held.get(field);
        if (held !== undefined || sent === undefined)
            return held;
        const made = new Secret(Buffer.from(sent, 'utf8'));
        this.#held.set(field, made);
        return made;
    }
    /** Zeroes every secret of the request (best effort: JavaScript may have copied them). */
    wipe() {
        for (const s of this.#held.values())
            s.wipe();
        this.#held.clear();
    }
}
