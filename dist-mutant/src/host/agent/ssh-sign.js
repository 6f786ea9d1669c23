/**
 * SSH signatures with node:crypto, in the host: signing with a private key
 * released to the host alone (ssh.ts), and verifying a server's
 * session-bind signature. The key formats are src/core/ssh-keyfile.ts's;
 * the signature encodings are RFC 8709 (ed25519), RFC 5656 section 3.1.2
 * (ECDSA: mpint r, mpint s) and RFC 8332 (rsa-sha2-256/512).
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, } from 'node:crypto';
import { CURVES, publicBlobOf, sshTypeOf } from '../../core/ssh-keyfile.js';
import { fingerprintText, SSH_AGENT_RSA_SHA2_256, SSH_AGENT_RSA_SHA2_512, WireReader, WireWriter, } from '../../core/ssh-wire.js';
/** The largest RSA modulus taken (16384 bits, OpenSSH's own limit). */
const RSA_MAX_BYTES = 2048;
/** OpenSSH's name for a key: SHA256 of its public blob. */
export function fingerprint(blob) {
    return fingerprintText(createHash('sha256').update(blob).digest());
}
/** The RSA signature algorithm the request's flags ask for; null: SHA-1 (`ssh-rsa`), not served. */
export function rsaAlgorithm(flags) {
    if ((flags & SSH_AGENT_RSA_SHA2_512) !== 0)
        return 'rsa-sha2-512';
    if ((flags & SSH_AGENT_RSA_SHA2_256) !== 0)
        return 'rsa-sha2-256';
    return null;
}
/** A private key from its stored form (PKCS#8 DER), with its SSH type and public blob. */
export function loadPrivateKey(der) {
    let key;
    try {
        key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    }
    catch {
        return null;
    }
    const jwk = createPublicKey(key).export({ format: 'jwk' });
    const type = sshTypeOf(jwk);
    const blob = type === null ? null : publicBlobOf(type, jwk);
    return type === null || blob === null ? null : { key, type, blob };
}
function mpintPad(m, bytes) {
    let i = 0;
    while (i < m.length && m[i] === 0)
        i += 1;
    const mag = m.subarray(i);
    if (mag.length > bytes)
        return null;
    return Buffer.concat([Buffer.alloc(bytes - mag.length), Buffer.from(mag)]);
}
/**
 * Signs `data` as an SSH agent does, with the key's own algorithm (for RSA,
 * the SHA-2 one the flags ask for).
 * @returns the SSH signature blob; null for RSA asked for SHA-1.
 */
export function sshSign(loaded, data, flags) {
    const w = new WireWriter();
    if (loaded.type === 'ssh-ed25519')
        return w
            .string('ssh-ed25519')
            .string(sign(null, data, loaded.key))
            .bytes();
    if (loaded.type === 'ssh-rsa') {
        const alg = rsaAlgorithm(flags);
        if (alg === null)
            return null;
        const hash = alg === 'rsa-sha2-512' ? 'sha512' : 'sha256';
        return w
            .string(alg)
            .string(sign(hash, data, loaded.key))
            .bytes();
    }
    const c = CURVES[loaded.type];
    const rs = sign(c.hash, data, { key: loaded.key, dsaEncoding: 'ieee-p1363' });
    const inner = new WireWriter().mpint(rs.subarray(0, c.bytes)).mpint(rs.subarray(c.bytes)).bytes();
    return w.string(loaded.type).string(inner).bytes();
}
/** A public key from its SSH blob; null when the blob is not a served type. */
export function publicKeyOf(blob) {
    const r = new WireReader(blob);
    const type = r.text();
    const b64u = (b) => Buffer.from(b).toString('base64url');
    try {
        if (type === 'ssh-ed25519') {
            const x = r.string();
            if (x === null || x.length !== 32 || !r.done)
                return null;
            const jwk = { kty: 'OKP', crv: 'Ed25519', x: b64u(x) };
            return { key: createPublicKey({ key: jwk, format: 'jwk' }), type };
        }
        if (type === 'ssh-rsa') {
            const e = r.string();
            const n = r.string();
            if (e === null || n === null || !r.done)
                return null;
            const strip = (m) => (m[0] === 0 ? m.subarray(1) : m);
            // At most 16384-bit moduli and 64-bit exponents: what a bind may make the host verify is bounded.
            if (strip(n).length > RSA_MAX_BYTES || strip(e).length > 8)
                return null;
            const jwk = { kty: 'RSA', e: b64u(strip(e)), n: b64u(strip(n)) };
            return { key: createPublicKey({ key: jwk, format: 'jwk' }), type };
        }
        if (type !== null && type in CURVES) {
            const c = CURVES[type];
            const curve = r.text();
            const q = r.string();
            if (curve !== c.ssh || q === null || q.length !== 1 + 2 * c.bytes || q[0] !== 4)
                return null;
            if (!r.done)
                return null;
            const jwk = {
                kty: 'EC',
                crv: c.jwk,
                x: b64u(q.subarray(1, 1 + c.bytes)),
                y: b64u(q.subarray(1 + c.bytes)),
            };
            return { key: createPublicKey({ key: jwk, format: 'jwk' }), type: type };
        }
    }
    catch {
        return null;
    }
    return null;
}
/** Whether `signature` (an SSH signature blob) is `blob`'s key's signature over `data`. */
export function sshVerify(blob, data, signature) {
    const pub = publicKeyOf(blob);
    if (pub === null)
        return false;
    const r = new WireReader(signature);
    const alg = r.text();
    const sig = r.string();
    if (alg === null || sig === null || !r.done)
        return false;
    try {
        if (pub.type === 'ssh-ed25519')
            return alg === 'ssh-ed25519' && verify(null, data, pub.key, sig);
        if (pub.type === 'ssh-rsa') {
            if (alg !== 'rsa-sha2-256' && alg !== 'rsa-sha2-512')
                return false;
            return verify(alg === 'rsa-sha2-512' ? 'sha512' : 'sha256', data, pub.key, sig);
        }
        const c = CURVES[pub.type];
        if (alg !== pub.type)
            return false;
        const inner = new WireReader(sig);
        const rr = inner.string();
        const ss = inner.string();
        if (rr === null || ss === null || !inner.done)
            return false;
        const pr = mpintPad(rr, c.bytes);
        const ps = mpintPad(ss, c.bytes);
        if (pr === null || ps === null)
            return false;
        return verify(c.hash, data, { key: pub.key, dsaEncoding: 'ieee-p1363' }, Buffer.concat([pr, ps]));
    }
    catch {
        return false;
    }
}
/** Whether a session-bind's signature is its host key's over its session identifier. */
export function bindVerifies(b) {
    return sshVerify(b.hostKey, b.sessionId, b.signature);
}
