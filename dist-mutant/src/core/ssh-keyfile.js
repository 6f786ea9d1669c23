/**
 * OpenSSH private key files (the `openssh-key-v1` format, PROTOCOL.key in
 * OpenSSH) read into a JSON Web Key that node:crypto takes, and SSH public
 * key blobs made from a public JWK. Pure: the caller reads the file and
 * builds the key object.
 *
 * Encrypted files (bcrypt-pbkdf + aes256-ctr) are refused with a reason:
 * node:crypto has no bcrypt_pbkdf (docs/ssh.md says how to import a
 * decrypted copy). The reasons never quote the file's bytes.
 */
import { WireReader, WireWriter } from './ssh-wire.js';
const MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
const ARMOR = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/;
export const CURVES = {
    'ecdsa-sha2-nistp256': { ssh: 'nistp256', jwk: 'P-256', bytes: 32, hash: 'sha256' },
    'ecdsa-sha2-nistp384': { ssh: 'nistp384', jwk: 'P-384', bytes: 48, hash: 'sha384' },
    'ecdsa-sha2-nistp521': { ssh: 'nistp521', jwk: 'P-521', bytes: 66, hash: 'sha512' },
};
const b64u = (b) => Buffer.from(b).toString('base64url');
/** An mpint's magnitude without leading zero bytes. */
function magnitude(m) {
    let i = 0;
    while (i < m.length && m[i] === 0)
        i += 1;
    return m.subarray(i);
}
function toBig(m) {
    const hex = Buffer.from(m).toString('hex');
    return hex === '' ? 0n : BigInt(`0x${hex}`);
}
function fromBig(n) {
    let hex = n.toString(16);
    if (hex.length % 2 === 1)
        hex = `0${hex}`;
    return Buffer.from(hex, 'hex');
}
/** The private section's key, as a JWK; null when it is malformed. */
function readPrivate(r, type) {
    if (type === 'ssh-ed25519') {
        const pk = r.string();
        const sk = r.string();
        if (pk === null || sk === null || pk.length !== 32 || sk.length !== 64)
            return null;
        if (!Buffer.from(sk.subarray(32)).equals(Buffer.from(pk)))
            return null;
        return { type, jwk: { kty: 'OKP', crv: 'Ed25519', x: b64u(pk), d: b64u(sk.subarray(0, 32)) } };
    }
    if (type in CURVES) {
        const c = CURVES[type];
        const curve = r.text();
        const q = r.string();
        const d = r.string();
        if (curve !== c.ssh || q === null || d === null || q.length !== 1 + 2 * c.bytes)
            return null;
        if (q[0] !== 4 || magnitude(d).length > c.bytes)
            return null;
        const pad = (b) => Buffer.concat([Buffer.alloc(c.bytes - b.length), Buffer.from(b)]);
        return {
            type: type,
            jwk: {
                kty: 'EC',
                crv: c.jwk,
                x: b64u(q.subarray(1, 1 + c.bytes)),
                y: b64u(q.subarray(1 + c.bytes)),
                d: b64u(pad(magnitude(d))),
            },
        };
    }
    if (type === 'ssh-rsa') {
        const parts = [r.string(), r.string(), r.string(), r.string(), r.string(), r.string()];
        if (parts.some((p) => p === null))
            return null;
        const [n, e, d, iqmp, p, q] = parts.map((x) => magnitude(x));
        if (n === undefined || e === undefined || d === undefined)
            return null;
        if (iqmp === undefined || p === undefined || q === undefined)
            return null;
        if (n.length < 256 || n.length > 2048)
            return null;
        const bp = toBig(p);
        const bq = toBig(q);
        const bd = toBig(d);
        if (bp < 2n || bq < 2n)
            return null;
        return {
            type,
            jwk: {
                kty: 'RSA',
                n: b64u(n),
                e: b64u(e),
                d: b64u(d),
                p: b64u(p),
                q: b64u(q),
                dp: b64u(fromBig(bd % (bp - 1n))),
                dq: b64u(fromBig(bd % (bq - 1n))),
                qi: b64u(iqmp),
            },
        };
    }
    return null;
}
/**
 * Reads an OpenSSH private key file's text.
 * @returns the key, or why it cannot be taken (not one, encrypted, several
 *   keys, an algorithm not served, malformed).
 */
export function parseKeyFile(text) {
    const m = ARMOR.exec(text);
    if (m === null)
        return { ok: false, reason: 'not an OpenSSH private key file' };
    const body = Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64');
    if (!body.subarray(0, MAGIC.length).equals(MAGIC))
        return { ok: false, reason: 'not an openssh-key-v1 key' };
    const r = new WireReader(body.subarray(MAGIC.length));
    const cipher = r.text();
    const kdf = r.text();
    const kdfOptions = r.string();
    const count = r.uint32();
    if (cipher === null || kdf === null || kdfOptions === null || count === null)
        return { ok: false, reason: 'malformed key file' };
    if (cipher !== 'none' || kdf !== 'none')
        return {
            ok: false,
            reason: 'the key is encrypted; import a decrypted copy (ssh-keygen -p -N "" -f <copy>), then delete the copy',
        };
    if (count !== 1)
        return { ok: false, reason: 'the file holds more than one key' };
    const publicBlob = r.string();
    const section = r.string();
    if (publicBlob === null || section === null || !r.done)
        return { ok: false, reason: 'malformed key file' };
    const p = new WireReader(section);
    const check1 = p.uint32();
    const check2 = p.uint32();
    const type = p.text();
    if (check1 === null || check1 !== check2 || type === null)
        return { ok: false, reason: 'malformed key file' };
    const key = readPrivate(p, type);
    if (key === null)
        return { ok: false, reason: `not a key type served here (${oneWord(type)})` };
    const comment = p.text() ?? '';
    const made = publicBlobOf(key.type, key.jwk);
    if (made === null || !made.equals(Buffer.from(publicBlob)))
        return { ok: false, reason: 'the public key does not match the private key' };
    return { ok: true, key: { type: key.type, publicBlob: made, jwk: key.jwk, comment } };
}
/** An algorithm name fit to quote: printable, short. */
function oneWord(s) {
    return /^[a-z0-9@.-]{1,40}$/.test(s) ? s : 'unknown';
}
/**
 * The SSH public key blob of a key given as a JWK (private or public: only
 * its public members are read).
 * @returns null for a JWK that is not one of the served types.
 */
export function publicBlobOf(type, jwk) {
    const get = (k) => typeof jwk[k] === 'string' ? Buffer.from(jwk[k], 'base64url') : null;
    const w = new WireWriter().string(type);
    if (type === 'ssh-ed25519') {
        const x = get('x');
        return x === null || x.length !== 32 ? null : w.string(x).bytes();
    }
    if (type === 'ssh-rsa') {
        const e = get('e');
        const n = get('n');
        return e === null || n === null ? null : w.mpint(e).mpint(n).bytes();
    }
    const c = CURVES[type];
    const x = get('x');
    const y = get('y');
    if (x === null || y === null || x.length !== c.bytes || y.length !== c.bytes)
        return null;
    return w
        .string(c.ssh)
        .string(Buffer.concat([Buffer.from([4]), x, y]))
        .bytes();
}
/** The type a JWK's public members make, as SSH names it; null when not served. */
export function sshTypeOf(jwk) {
    if (jwk['kty'] === 'OKP' && jwk['crv'] === 'Ed25519')
        return 'ssh-ed25519';
    if (jwk['kty'] === 'RSA')
        return 'ssh-rsa';
    if (jwk['kty'] === 'EC') {
        for (const [t, c] of Object.entries(CURVES))
            if (c.jwk === jwk['crv'])
                return t;
    }
    return null;
}
/** An authorized_keys line: type, base64 blob, comment. */
export function publicKeyLine(blob, comment) {
    const type = new WireReader(blob).text() ?? 'unknown';
    const safe = comment.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
    return `${type} ${Buffer.from(blob).toString('base64')}${safe === '' ? '' : ` ${safe}`}`;
}
/** The blob of an authorized_keys line; null when the line is not one. */
export function parsePublicKeyLine(line) {
    const [type, b64] = line.trim().split(/\s+/);
    if (type === undefined || b64 === undefined || !/^[A-Za-z0-9+/]+=*$/.test(b64))
        return null;
    const blob = Buffer.from(b64, 'base64');
    return new WireReader(blob).text() === type ? blob : null;
}
