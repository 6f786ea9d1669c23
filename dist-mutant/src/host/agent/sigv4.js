/**
 * AWS SigV4 re-signing for the proxy (docs/proxy.md, AWS SigV4), in the
 * host, so the secret access key never leaves it: the proxy sends the pieces
 * a request's signature covers; the host checks that the surrogate key id
 * was minted for the caller's own token (another session's or agent's is
 * VLT-2058, audited), releases the entry's `access_key_id`,
 * `secret_access_key` and `session_token` (optional) exactly as a fill
 * (access.ts release: scope, limits, lockdown, host binding, one `fill`
 * record with the destination host), and signs with @smithy/signature-v4,
 * the only importer of that package (loaded on the first signature, so a
 * host that never signs never loads it).
 */
import { createHash, createHmac } from 'node:crypto';
import { agentActor } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { surrogateEntry } from '../../crypto/aws-surrogate.js';
import { accessEvent } from '../audit/event.js';
import { release } from './access.js';
import { refuse } from './authenticate.js';
/** The fields of an AWS key pair entry. */
export const AWS_FIELDS = {
    id: 'access_key_id',
    secret: 'secret_access_key',
    token: 'session_token',
};
const bytes = (d) => typeof d === 'string'
    ? Buffer.from(d, 'utf8')
    : ArrayBuffer.isView(d)
        ? Buffer.from(d.buffer, d.byteOffset, d.byteLength)
        : Buffer.from(d);
/** SHA-256 and HMAC-SHA256 for the signer, from node:crypto. */
class Sha256 {
    #h;
    constructor(secret) {
        this.#h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
    }
    update(data) {
        this.#h.update(bytes(data));
    }
    digest() {
        return Promise.resolve(new Uint8Array(this.#h.digest()));
    }
    reset() { }
}
let smithy = null;
/** The query string as the signer takes it: each name to its decoded value(s). */
function queryOf(text) {
    const out = Object.create(null);
    if (text === '')
        return out;
    for (const part of text.split('&')) {
        const eq = part.indexOf('=');
        let key;
        let value;
        try {
            key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
            value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
        }
        catch {
            throw new VaultError('VLT-2056', 'The request query is not percent-encoded; nothing was sent.');
        }
        const had = out[key];
        out[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
    }
    return out;
}
/** `YYYYMMDDTHHMMSSZ` as a Date. */
function dateOf(amz) {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amz);
    const d = m === null ? new Date(NaN) : new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
    if (Number.isNaN(d.getTime()))
        throw new VaultError('VLT-2056', 'Bad X-Amz-Date; nothing was sent.');
    return d;
}
/**
 * Signs `r` with the key pair of the entry its surrogate names, for the
 * caller whose `token` the request carried, as a fill to `host`.
 * @throws VaultError VLT-2058 (audited), those of release(), VLT-2056.
 */
export async function signForProxy(ctx, session, token, r, host, source) {
    const entry = surrogateEntry(token, r.surrogate);
    if (entry === null) {
        refuse(ctx, ctx.store().read((tx) => ctx.header(tx)), accessEvent(ctx, 'denied', 'VLT-2058', agentActor(session.agent.name), source, {
            ...(host === null ? {} : { host }),
        }), new VaultError('VLT-2058'));
    }
    // Read before anything is released: a request the signer cannot take costs no fill.
    const query = queryOf(r.query);
    const signingDate = dateOf(r.date);
    const refs = [
        { entry, field: AWS_FIELDS.id },
        { entry, field: AWS_FIELDS.secret },
        { entry, field: AWS_FIELDS.token, optional: true },
    ];
    // The request it signs, for the entry's caveats (core/caveats.ts), as a fill's.
    const request = { method: r.method, target: r.query === '' ? r.path : `${r.path}?${r.query}` };
    const values = await release(ctx, session, refs, { kind: 'fill', host, request }, source);
    const [id, secret, sessionToken] = values;
    try {
        const credentials = {
            accessKeyId: id.expose().toString('utf8'),
            secretAccessKey: secret.expose().toString('utf8'),
            ...(sessionToken === undefined
                ? {}
                : { sessionToken: sessionToken.expose().toString('utf8') }),
        };
        const authorization = await signWith(credentials, r, query, signingDate);
        return { authorization, date: r.date, sessionToken: credentials.sessionToken ?? null };
    }
    finally {
        for (const v of values)
            v?.wipe();
    }
}
/**
 * The Authorization of `r` signed with `credentials` (strings: the signer
 * takes no buffers, so the secret is a JavaScript string for the moment of
 * signing; @smithy/signature-v4 also keeps up to 50 derived signing keys,
 * in this process only).
 */
async function signWith(credentials, r, query, signingDate) {
    const { SignatureV4 } = await (smithy ??= import('@smithy/signature-v4'));
    const signer = new SignatureV4({
        credentials,
        region: r.region,
        service: r.service,
        sha256: Sha256,
        // S3 signs the path as sent; every other service, encoded once more.
        uriEscapePath: r.service !== 's3',
        applyChecksum: false,
    });
    const headers = Object.create(null);
    for (let i = 0; i + 1 < r.headers.length; i += 2)
        headers[r.headers[i]] = r.headers[i + 1];
    // Always signed, as the AWS SDK for JavaScript does for every service: the
    // proxy sends it too (a client that sent none signed its body's hash).
    headers['x-amz-content-sha256'] = r.payloadHash;
    const signed = await signer.sign({
        method: r.method,
        protocol: 'https:',
        hostname: headers.host ?? '',
        path: r.path,
        query,
        headers,
    }, { signingDate, signableHeaders: new Set(Object.keys(headers)) });
    const authorization = signed.headers.authorization;
    if (authorization === undefined)
        throw new VaultError('VLT-3007');
    return authorization;
}
