// The proxy's CA: sealed on disk under the token, reopened by the same token
// only, and leaves for exactly one name, short-lived, that openssl verifies
// against the CA.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createServer, connect, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { formatToken } from '../../src/crypto/token.js';
import { Authority, type CaFiles } from '../../src/proxy/ca.js';

const dir = mkdtempSync(join(tmpdir(), 'vault-cli-ca-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const token = () => formatToken(randomBytes(16), randomBytes(32));
const files = (name: string): CaFiles => ({
  config: join(dir, name, 'proxy.sealed'),
  cert: join(dir, name, 'ca.pem'),
  bundle: join(dir, name, 'bundle.pem'),
  systemRoots: '/etc/ssl/certs/ca-certificates.crt',
});

/** The certificate a TLS server presents for `servername`, from an authority's leaf. */
async function leafFor(a: Authority, host: string): Promise<X509Certificate> {
  const server = createServer({ SNICallback: (_n, cb) => cb(null, a.contextFor(host)) });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    return await new Promise((resolve, reject) => {
      const s: TLSSocket = connect(
        { port, host: '127.0.0.1', servername: 'sni.invalid', rejectUnauthorized: false },
        () => {
          const cert = s.getPeerX509Certificate();
          s.destroy();
          if (cert) resolve(cert);
          else reject(new Error('no certificate'));
        },
      );
      s.on('error', reject);
    });
  } finally {
    server.close();
  }
}

describe('the proxy CA', () => {
  test('sealed on disk: no key in clear; the same token reopens the same CA, another makes a new one', () => {
    const t = token();
    const f = files('a');
    const a = Authority.loadOrCreate(f, t);
    const sealed = readFileSync(f.config);
    assert.ok(!sealed.includes('PRIVATE KEY'));
    assert.ok(!sealed.toString('latin1').includes('"key"'));
    assert.equal(statSync(f.config).mode & 0o777, 0o600);
    assert.equal(Authority.loadOrCreate(f, t).certificatePem, a.certificatePem);
    const other = Authority.loadOrCreate(f, token());
    assert.notEqual(other.certificatePem, a.certificatePem);
    assert.equal(readFileSync(f.cert, 'utf8'), other.certificatePem);
    assert.ok(readFileSync(f.bundle, 'utf8').endsWith(other.certificatePem));
  });

  test('a tampered configuration is replaced, not trusted', () => {
    const t = token();
    const f = files('b');
    const a = Authority.loadOrCreate(f, t);
    const sealed = readFileSync(f.config);
    sealed[sealed.length - 1] = (sealed[sealed.length - 1] ?? 0) ^ 1;
    writeFileSync(f.config, sealed);
    assert.notEqual(Authority.loadOrCreate(f, t).certificatePem, a.certificatePem);
  });

  test('the CA certificate: a CA, P-256, self-signed', () => {
    const a = Authority.loadOrCreate(files('c'), token());
    const ca = new X509Certificate(a.certificatePem);
    assert.equal(ca.ca, true);
    assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(ca.verify(ca.publicKey));
  });

  for (const host of ['api.example.com', '127.0.0.1', '::1']) {
    test(`a leaf for ${host}: that name only, 24 hours, signed by the CA, verified by openssl`, async () => {
      const f = files(`leaf-${host.replaceAll(':', '_')}`);
      const a = Authority.loadOrCreate(f, token());
      const leaf = await leafFor(a, host);
      const ca = new X509Certificate(a.certificatePem);
      assert.equal(leaf.ca, false);
      assert.ok(leaf.verify(ca.publicKey));
      assert.ok(leaf.checkIssued(ca));
      const san = leaf.subjectAltName ?? '';
      assert.ok(!san.includes('*'));
      if (host.includes(':') || /^[0-9.]+$/.test(host)) {
        assert.equal(leaf.checkIP(host), host);
        assert.equal(leaf.checkHost('api.example.com'), undefined);
      } else {
        assert.equal(leaf.checkHost(host), host);
        assert.equal(leaf.checkHost(`x.${host}`), undefined);
        assert.equal(leaf.checkHost('example.com'), undefined);
      }
      const life = Date.parse(leaf.validTo) - Date.now();
      assert.ok(life > 23 * 3600_000 && life <= 24 * 3600_000 + 1000, `${life} ms`);
      const leafFile = join(dir, `leaf-${randomBytes(4).toString('hex')}.pem`);
      writeFileSync(leafFile, leaf.toString());
      const out = execFileSync(
        'openssl',
        ['verify', '-CAfile', f.cert, '-purpose', 'sslserver', leafFile],
        {
          encoding: 'utf8',
        },
      );
      assert.match(out, /: OK\n$/);
    });
  }

  test('leaves are cached per host', () => {
    const a = Authority.loadOrCreate(files('cache'), token());
    assert.equal(a.contextFor('a.example'), a.contextFor('a.example'));
    assert.notEqual(a.contextFor('a.example'), a.contextFor('b.example'));
  });
});
