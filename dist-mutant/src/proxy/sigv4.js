/**
 * AWS SigV4 at the proxy (docs/proxy.md, AWS SigV4): a request signed with a
 * surrogate access key id (src/crypto/aws-surrogate.ts) is recognised here,
 * its signature read strictly, and the pieces the signature covers (method,
 * path, query, the signed headers, the payload hash, date and scope) sent to
 * the host, which checks the surrogate is the caller's, releases the entry's
 * key pair like any fill (scope, limits, lockdown, host binding, `fill`
 * audit record) and signs with it. The secret key never leaves the host:
 * the proxy gets back the Authorization value, the date and the real session
 * token (it goes upstream in a header anyway) and puts them over the
 * surrogate's.
 *
 * What cannot be re-signed is refused before any byte goes upstream, never
 * forwarded with the surrogate: a presigned URL (the signature is in the
 * query the client already handed out), SigV4A (`AWS4-ECDSA-P256-SHA256`)
 * and aws-chunked streaming payloads (each chunk is signed by the client
 * with the key it holds) are VLT-2057; a surrogate signature the proxy
 * cannot read is VLT-2056. A request whose credential is not a surrogate
 * (a key the agent holds itself) is none of this file's business.
 */
import { createHash } from 'node:crypto';
import { VaultError } from '../core/errors.js';
import { SURROGATE_PREFIX, SURROGATE_SESSION_TOKEN, parseSurrogate, } from '../crypto/aws-surrogate.js';
import { hostMismatch } from './policy.js';
/** The longest body hashed to sign a request that sent no x-amz-content-sha256. */
export const MAX_HASHED_BODY = 8 * 1024 * 1024;
const malformed = (why) => new VaultError('VLT-2056', `Cannot read the request's AWS signature: ${why}; nothing was sent.`);
const cannot = (what) => new VaultError('VLT-2057', `${what} signed with a vault-cli surrogate key cannot be re-signed; nothing was sent.`);
const AUTH = /^AWS4-HMAC-SHA256 Credential=([^,\s]+), ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]{64})$/;
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
const SCOPE_PART = /^[a-z0-9-]{1,64}$/;
const AMZ_DATE = /^(\d{8})T\d{6}Z$/;
const HASH = /^[0-9a-f]{64}$/;
/** Anything shaped like a surrogate key id (crypto/aws-surrogate.ts), wherever it stands. */
const SURROGATE_SHAPE = new RegExp(`${SURROGATE_PREFIX}[A-Z2-7]+0[A-Z2-7]{16}`);
/** Whether a header value or query names a surrogate credential. */
const names = (text) => SURROGATE_SHAPE.test(text);
/**
 * The surrogate signature of a request, null when it carries none (no
 * surrogate in its Authorization or query), or the refusal (VLT-2056,
 * VLT-2057). `target` is the request target (path and query).
 */
export function surrogateSigned(h, target) {
    if (presignedWithSurrogate(target))
        return cannot('A presigned URL');
    const auths = h.all('authorization');
    const ours = auths.filter((v) => names(v));
    if (ours.length === 0)
        return null;
    if (auths.length > 1)
        return malformed('more than one Authorization header');
    const value = ours[0].trim();
    if (/^AWS4-ECDSA-P256-SHA256\b/i.test(value))
        return cannot('A SigV4A request');
    const m = AUTH.exec(value);
    if (m === null)
        return malformed('the Authorization header is not AWS4-HMAC-SHA256 as AWS writes it');
    const scope = m[1].split('/');
    const [surrogate, day, region, service, end] = scope;
    if (scope.length !== 5 || end !== 'aws4_request')
        return malformed('a bad credential scope');
    if (parseSurrogate(surrogate) === null)
        return malformed('not a surrogate key id');
    if (!/^\d{8}$/.test(day))
        return malformed('a bad date in the credential scope');
    if (!SCOPE_PART.test(region) || !SCOPE_PART.test(service))
        return malformed('a bad region or service in the credential scope');
    const signedHeaders = m[2].split(';');
    if (!signedHeaders.every((n) => HEADER_NAME.test(n)))
        return malformed('bad SignedHeaders');
    if (!signedHeaders.includes('host'))
        return malformed('the Host header is not signed');
    for (const n of signedHeaders) {
        if (n === 'authorization')
            return malformed('Authorization cannot be signed');
        if (!h.has(n))
            return malformed(`signed header ${n} is not in the request`);
    }
    const dates = h.all('x-amz-date');
    const d = dates.length === 1 ? AMZ_DATE.exec(dates[0].trim()) : null;
    if (d === null || d[1] !== day)
        return malformed('no X-Amz-Date of the credential scope day');
    const tokens = h.all('x-amz-security-token');
    if (tokens.length > 1 || (tokens.length === 1 && tokens[0] !== SURROGATE_SESSION_TOKEN))
        return malformed('X-Amz-Security-Token is not the surrogate session token');
    const payloadHash = payloadOf(h);
    if (payloadHash instanceof VaultError)
        return payloadHash;
    return {
        surrogate: surrogate,
        day: day,
        region: region,
        service: service,
        signedHeaders,
        date: d[0].trim(),
        payloadHash,
    };
}
/** The client's x-amz-content-sha256: a hash, UNSIGNED-PAYLOAD, none (null), or a refusal. */
function payloadOf(h) {
    const all = h.all('x-amz-content-sha256');
    if (all.length === 0)
        return null;
    const v = all[0].trim();
    if (all.length > 1)
        return malformed('more than one x-amz-content-sha256');
    if (v.startsWith('STREAMING-'))
        return cannot('An aws-chunked streaming upload');
    if (v === 'UNSIGNED-PAYLOAD' || HASH.test(v))
        return v;
    return malformed('x-amz-content-sha256 is not a hash or UNSIGNED-PAYLOAD');
}
/**
 * Whether the query names a surrogate (as written or decoded): a presigned
 * URL's X-Amz-Credential, or anywhere else, it is never sent on.
 */
function presignedWithSurrogate(target) {
    const q = target.indexOf('?');
    if (q < 0)
        return false;
    const query = target.slice(q + 1);
    return names(query) || names(safeDecode(query.replaceAll('+', ' ')) ?? '');
}
function safeDecode(text) {
    try {
        return decodeURIComponent(text);
    }
    catch {
        return null;
    }
}
/**
 * The pieces the host signs: the signed headers as they go upstream (the
 * surrogate session token left out: the host signs the real one), with the
 * payload hash the client gave or the body's.
 */
export function signPieces(s, method, target, headers, body) {
    const q = target.indexOf('?');
    const flat = [];
    for (const n of s.signedHeaders) {
        if (n === 'x-amz-security-token' || n === 'x-amz-date')
            continue;
        flat.push(n, headers.all(n).join(','));
    }
    const payloadHash = s.payloadHash ??
        createHash('sha256')
            .update(body ?? Buffer.alloc(0))
            .digest('hex');
    return {
        surrogate: s.surrogate,
        method,
        path: q < 0 ? target : target.slice(0, q),
        query: q < 0 ? '' : target.slice(q + 1),
        headers: flat,
        date: s.date,
        region: s.region,
        service: s.service,
        payloadHash,
    };
}
/** The request's headers with the host's signature over the surrogate's. */
export function applySigned(headers, p, signed) {
    const h = headers
        .set('Authorization', signed.authorization)
        .set('X-Amz-Date', signed.date)
        .set('X-Amz-Content-Sha256', p.payloadHash);
    const t = signed.sessionToken;
    return t === null ? h.delete('x-amz-security-token') : h.set('X-Amz-Security-Token', t);
}
/**
 * Echoes of what the host filled, scrubbed back to what the agent holds:
 * the real access key id (S3 names it in some errors) and session token.
 */
export function signedEchoes(s, signed) {
    const real = /Credential=([^/]+)\//.exec(signed.authorization)?.[1];
    const out = [];
    if (real !== undefined && real.length >= 4)
        out.push({ value: Buffer.from(real), reference: Buffer.from(s.surrogate) });
    if (signed.sessionToken !== null && signed.sessionToken.length >= 4)
        out.push({
            value: Buffer.from(signed.sessionToken),
            reference: Buffer.from(SURROGATE_SESSION_TOKEN),
        });
    return out;
}
/**
 * The request body, whole, to hash (a request that sent no
 * x-amz-content-sha256 signs its body's hash: STS, most JSON and query
 * APIs); VLT-2059 past MAX_HASHED_BODY. Null for a bodyless request.
 */
export async function wholeBody(req) {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))
        return null;
    if (length !== undefined && Number(length) > MAX_HASHED_BODY)
        throw tooLarge();
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
        size += chunk.length;
        if (size > MAX_HASHED_BODY)
            throw tooLarge();
        chunks.push(chunk);
    }
    return Buffer.concat(chunks);
}
const tooLarge = () => new VaultError('VLT-2059', `A body over ${MAX_HASHED_BODY} bytes signed by its hash (no x-amz-content-sha256) is not buffered to re-sign; send x-amz-content-sha256 (a hash or UNSIGNED-PAYLOAD); nothing was sent.`);
/**
 * A filled request (`p`) signed with a surrogate, re-signed by the host
 * through `sign`: the Host it was written with must be its destination (the
 * signature covers Host; a value goes only where the request goes, VLT-2048),
 * over TLS only, and a body signed by its hash is read whole to hash it (and
 * sent from the buffer).
 * @throws VaultError VLT-2048, VLT-2057, VLT-2059, the host's refusal.
 */
export async function resign(req, { dest, path, caller }, s, p, sign) {
    if (sign === undefined || !dest.tls)
        return Promise.reject(cannot('A plain-HTTP request'));
    const pin = hostMismatch(p.headers, dest);
    if (pin !== null) {
        throw new VaultError('VLT-2048', `${pin}: a signature goes only to the host the request is addressed to; nothing was sent.`);
    }
    const body = s.payloadHash === null ? await wholeBody(req) : null;
    const pieces = signPieces(s, req.method ?? 'GET', path, p.headers, body);
    const signed = await sign(pieces, dest.host, caller);
    return {
        headers: applySigned(p.headers, pieces, signed),
        replacements: [...p.replacements, ...signedEchoes(s, signed)],
        address: p.address,
        ...(body === null ? {} : { body }),
    };
}
