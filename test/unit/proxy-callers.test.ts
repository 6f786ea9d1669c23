// The caller's token in the proxy URL: proxyUrl writes it as user-info, a
// client turns that into Basic Proxy-Authorization, credentials() reads it
// back; anything else that claims to be credentials is "malformed", not "none".
// And a session's CA: key in memory only, certificate and bundle 0600.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { credentials, proxyUrl } from '../../src/proxy/caller.js';
import { Authority } from '../../src/proxy/ca.js';

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 200);

test('proxyUrl -> URL user-info -> Basic -> credentials gives the token back, for any printable token', () => {
  fc.assert(
    fc.property(
      fc.stringMatching(/^[\x21-\x7e]{1,200}$/),
      fc.integer({ min: 1, max: 65535 }),
      (token, port) => {
        const u = new URL(proxyUrl(port, token));
        assert.equal(u.hostname, '127.0.0.1');
        assert.equal(u.port === '' ? 80 : Number(u.port), port);
        // What curl, Python and undici do with user-info: percent-decode, then Basic.
        const header = basic(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`);
        assert.deepEqual(credentials(['Proxy-Authorization', header]), { kind: 'token', token });
      },
    ),
    { numRuns: runs },
  );
});

test('credentials: the password is the token, the user is ignored; absent is none', () => {
  assert.deepEqual(credentials(['Host', 'x']), { kind: 'none' });
  assert.deepEqual(credentials(['proxy-authorization', basic('anyone:vlt_a:b')]), {
    kind: 'token',
    token: 'vlt_a:b',
  });
  assert.deepEqual(credentials(['PROXY-AUTHORIZATION', `basic  ${basic(':t0k').slice(6)}`]), {
    kind: 'token',
    token: 't0k',
  });
});

test('credentials: anything else is malformed', () => {
  const bad = [
    ['Proxy-Authorization', 'Bearer abc'],
    ['Proxy-Authorization', 'Basic'],
    ['Proxy-Authorization', 'Basic ***'],
    ['Proxy-Authorization', basic('no-colon')],
    ['Proxy-Authorization', basic('vault:')],
    ['Proxy-Authorization', basic('vault:has space')],
    ['Proxy-Authorization', basic('vault:tab\there')],
    ['Proxy-Authorization', basic(`vault:${'x'.repeat(600)}`)],
    ['Proxy-Authorization', basic('vault:a'), 'Proxy-Authorization', basic('vault:a')],
  ];
  for (const raw of bad) assert.deepEqual(credentials(raw), { kind: 'malformed' }, raw.join(' '));
});

test('credentials never throws, whatever the header holds', () => {
  fc.assert(
    fc.property(fc.string(), (v) => {
      const c = credentials(['Proxy-Authorization', v]);
      assert.ok(['none', 'token', 'malformed'].includes(c.kind));
    }),
    { numRuns: runs },
  );
});

const dir = mkdtempSync(join(tmpdir(), 'vault-cli-eph-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('Authority.ephemeral: writes only the certificate and bundle, 0600 in a 0700 directory', () => {
  const home = join(dir, 'session');
  const files = {
    cert: join(home, 'ca.pem'),
    bundle: join(home, 'bundle.pem'),
    systemRoots: '/etc/ssl/certs/ca-certificates.crt',
  };
  const a = Authority.ephemeral(files);
  assert.deepEqual(readdirSync(home).sort(), ['bundle.pem', 'ca.pem']);
  assert.equal(statSync(home).mode & 0o777, 0o700);
  for (const f of [files.cert, files.bundle]) {
    assert.equal(statSync(f).mode & 0o777, 0o600, f);
    assert.doesNotMatch(readFileSync(f, 'utf8'), /PRIVATE KEY/);
  }
  const pem = readFileSync(files.cert, 'utf8');
  assert.equal(pem, a.certificatePem);
  assert.ok(readFileSync(files.bundle, 'utf8').endsWith(pem));
  assert.ok(new X509Certificate(pem).ca);
  // A second session is a second CA.
  const b = Authority.ephemeral({
    ...files,
    cert: join(dir, 'b.pem'),
    bundle: join(dir, 'bb.pem'),
  });
  assert.notEqual(b.certificatePem, a.certificatePem);
});
