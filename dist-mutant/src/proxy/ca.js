/**
 * The proxy's local certificate authority and the leaves it mints.
 *
 * On disk: one sealed configuration file (the CA's private key and
 * certificate, sealed under a key derived from the agent's token) and the CA
 * certificate in PEM for clients to trust, with a bundle of the system roots
 * plus it. No private key is ever written in clear. A configuration that does
 * not open for this token (another agent ran `init` here) is replaced by a new
 * CA: clients then need the new certificate, which `proxy env` points at.
 *
 * A session's CA (`Authority.ephemeral`, for `vault-cli run`) keeps its key
 * in memory only, never on disk, not even sealed: the child trusts a CA that
 * dies with its session. Only its certificate and bundle are written, 0600.
 *
 * Leaves: one ECDSA P-256 key and certificate per host, for exactly that name
 * (never a wildcard), valid 24 hours, cached in memory only.
 */
import { X509Certificate, createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { openConfig, sealConfig } from '../crypto/config-seal.js';
import { VaultError } from '../core/errors.js';
import { certificate, name, pem, tbsCertificate } from './der.js';
const PURPOSE = 'proxy-ca';
const HOUR = 3_600_000;
const CA_LIFETIME = 5 * 365 * 24 * HOUR;
const LEAF_LIFETIME = 24 * HOUR;
const MAX_LEAVES = 1000;
function writePrivate(path, data, mode = 0o600) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, data, { mode });
    renameSync(tmp, path);
}
const keyId = (spki) => createHash('sha1').update(spki).digest();
export class Authority {
    key;
    certDer;
    subject;
    keyId;
    now;
    leaves = new Map();
    constructor(key, certDer, subject, keyId, now) {
        this.key = key;
        this.certDer = certDer;
        this.subject = subject;
        this.keyId = keyId;
        this.now = now;
    }
    /**
     * Opens the CA sealed for `token`, or creates one, and (re)writes the
     * certificate and the bundle beside it.
     * @throws VaultError VLT-2040 when the token is malformed.
     */
    static loadOrCreate(files, token, now = Date.now) {
        let auth = null;
        try {
            const plain = openConfig(token, PURPOSE, readFileSync(files.config));
            if (plain !== null) {
                const cfg = JSON.parse(plain.toString('utf8'));
                plain.fill(0);
                const key = createPrivateKey({
                    key: Buffer.from(cfg.key, 'base64'),
                    format: 'der',
                    type: 'pkcs8',
                });
                const der = Buffer.from(cfg.cert, 'base64');
                const x = new X509Certificate(der);
                // A CA within a month of its end is replaced rather than left to expire mid-use.
                if (Date.parse(x.validTo) - now() > 30 * 24 * HOUR) {
                    const spki = x.publicKey.export({ type: 'spki', format: 'der' });
                    auth = new Authority(key, der, Buffer.from(cfg.subject, 'base64'), keyId(spki), now);
                }
            }
        }
        catch {
            // Missing, unreadable or not ours: a new CA below.
        }
        if (auth === null)
            auth = Authority.create(files, token, now);
        auth.writePublic(files);
        return auth;
    }
    /**
     * A new CA whose private key is never written anywhere; its certificate and
     * the bundle (system roots plus it) go to `files`, mode 0600, in a directory
     * created 0700 (an existing directory is left as it is: the caller made it).
     */
    static ephemeral(files, now = Date.now) {
        const auth = Authority.mint(now);
        auth.writePublic(files, 0o600);
        return auth;
    }
    static create(files, token, now) {
        const auth = Authority.mint(now);
        const pkcs8 = auth.key.export({ type: 'pkcs8', format: 'der' });
        const plain = Buffer.from(JSON.stringify({
            key: pkcs8.toString('base64'),
            cert: auth.certDer.toString('base64'),
            subject: auth.subject.toString('base64'),
        }));
        pkcs8.fill(0);
        const sealed = sealConfig(token, PURPOSE, plain);
        plain.fill(0);
        if (sealed === null)
            throw new VaultError('VLT-2040');
        writePrivate(files.config, sealed);
        return auth;
    }
    /** A fresh self-signed CA, in memory. */
    static mint(now) {
        const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        const spki = publicKey.export({ type: 'spki', format: 'der' });
        const t = now();
        const subject = name(`vault-cli proxy CA ${randomBytes(4).toString('hex')}`, 'vault-cli');
        const tbs = tbsCertificate({
            serial: randomBytes(16),
            issuer: subject,
            subject,
            notBefore: t - HOUR,
            notAfter: t + CA_LIFETIME,
            spki,
            subjectKeyId: keyId(spki),
            authorityKeyId: keyId(spki),
            role: { ca: true },
        });
        const der = certificate(tbs, sign('sha256', tbs, privateKey));
        return new Authority(privateKey, der, subject, keyId(spki), now);
    }
    writePublic(files, mode = 0o644) {
        const caPem = pem(this.certDer);
        writePrivate(files.cert, caPem, mode);
        let roots = '';
        try {
            roots = readFileSync(files.systemRoots, 'utf8');
        }
        catch {
            // No system bundle at the usual place: the bundle holds our CA alone.
        }
        writePrivate(files.bundle, roots + (roots.endsWith('\n') || roots === '' ? '' : '\n') + caPem, mode);
    }
    get certificatePem() {
        return pem(this.certDer);
    }
    /** A TLS context for exactly `host` (a DNS name or an IP address), minted or from the cache. */
    contextFor(host) {
        const t = this.now();
        const cached = this.leaves.get(host);
        if (cached !== undefined && cached.notAfter - t > HOUR)
            return cached.context;
        const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        const spki = publicKey.export({ type: 'spki', format: 'der' });
        const notAfter = t + LEAF_LIFETIME;
        const tbs = tbsCertificate({
            serial: randomBytes(16),
            issuer: this.subject,
            subject: name(host),
            notBefore: t - HOUR,
            notAfter,
            spki,
            subjectKeyId: keyId(spki),
            authorityKeyId: this.keyId,
            role: { ca: false, host },
        });
        const der = certificate(tbs, sign('sha256', tbs, this.key));
        const context = createSecureContext({
            key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
            cert: pem(der),
        });
        this.leaves.delete(host);
        if (this.leaves.size >= MAX_LEAVES) {
            const oldest = this.leaves.keys().next().value;
            if (oldest !== undefined)
                this.leaves.delete(oldest);
        }
        this.leaves.set(host, { context, notAfter });
        return context;
    }
}
