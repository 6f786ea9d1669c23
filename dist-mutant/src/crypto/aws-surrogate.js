/**
 * The AWS credentials an agent holds instead of an entry's key pair
 * (docs/proxy.md, AWS SigV4): a surrogate access key id that names the entry
 * and is bound to one caller token, a fixed public secret and a fixed public
 * session token. None of them is a secret: the surrogate key id is the entry's
 * name in base32 and a tag, HMAC-SHA256 under the caller's token, so a
 * surrogate minted for one session or agent is refused when another presents
 * it (the host checks the tag with the token the request carries). The
 * proxy recognises requests signed with a surrogate and the host re-signs
 * them with the real key, which never leaves it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
/** Marks a surrogate access key id; `0` is outside base32, so it also ends the entry part. */
export const SURROGATE_PREFIX = 'VLT0';
/** The secret access key the agent gets: public, the same for everyone, never a key. */
export const SURROGATE_SECRET = 'vault-cli-surrogate-secret-not-a-key';
/** The session token the agent gets: replaced by the entry's real one when it has one. */
export const SURROGATE_SESSION_TOKEN = 'vault-cli-surrogate-session-token';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const TAG_BYTES = 10;
const SHAPE = /^VLT0([A-Z2-7]+)0([A-Z2-7]{16})$/;
/** RFC 4648 base32 without padding. */
function base32(bytes) {
    let out = '';
    let bits = 0;
    let acc = 0;
    for (const b of bytes) {
        acc = (acc << 8) | b;
        bits += 8;
        while (bits >= 5) {
            out += ALPHABET[(acc >>> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out += ALPHABET[(acc << (5 - bits)) & 31];
    return out;
}
/** The bytes of unpadded base32, or null when it is not canonical (stray bits, impossible length). */
function unbase32(text) {
    const out = [];
    let bits = 0;
    let acc = 0;
    for (const c of text) {
        acc = ((acc << 5) | ALPHABET.indexOf(c)) & 0xfff;
        bits += 5;
        if (bits >= 8) {
            out.push((acc >>> (bits - 8)) & 0xff);
            bits -= 8;
        }
    }
    const bytes = Buffer.from(out);
    return base32(bytes) === text ? bytes : null;
}
const tagOf = (token, entry) => createHmac('sha256', token)
    .update(`vault-cli aws surrogate v1\0${entry}`)
    .digest()
    .subarray(0, TAG_BYTES);
/** The surrogate access key id for `entry`, bound to the caller `token`. */
export function mintSurrogate(token, entry) {
    return `${SURROGATE_PREFIX}${base32(Buffer.from(entry, 'utf8'))}0${base32(tagOf(token, entry))}`;
}
/** A surrogate's parts, before its tag is checked; null when it is not one. */
export function parseSurrogate(id) {
    const m = SHAPE.exec(id);
    if (m === null)
        return null;
    const name = unbase32(m[1]);
    if (name === null || name.length === 0)
        return null;
    const entry = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
        return { entry: entry.decode(name), tag: m[2] };
    }
    catch {
        return null;
    }
}
/** The entry a surrogate names when it was minted for `token`, else null (constant-time tag compare). */
export function surrogateEntry(token, id) {
    const p = parseSurrogate(id);
    if (p === null)
        return null;
    const want = tagOf(token, p.entry);
    const got = unbase32(p.tag);
    return got !== null && got.length === want.length && timingSafeEqual(got, want) ? p.entry : null;
}
/**
 * The AWS variables of an agent whose requests go through the proxy as the
 * caller `token`, for `entry`: the surrogate key id, the public surrogate
 * secret and session token (the host drops the token when the entry has
 * none). AWS_CA_BUNDLE and HTTPS_PROXY come with the proxy block (env.ts).
 */
export function awsEnv(token, entry) {
    return [
        ['AWS_ACCESS_KEY_ID', mintSurrogate(token, entry)],
        ['AWS_SECRET_ACCESS_KEY', SURROGATE_SECRET],
        ['AWS_SESSION_TOKEN', SURROGATE_SESSION_TOKEN],
    ];
}
