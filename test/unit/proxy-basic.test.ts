// The pure pieces behind issue 23's and 24's proxy changes, each alone:
// references inside Basic credentials (template, fill, the user-part rule,
// the echo scrubbed back), the refusal's reason phrase and Proxy-Status, and
// a session's proxy judging the caller's token before anything else.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import { basicWithReference } from '../../src/proxy/basic.js';
import { fill, template } from '../../src/proxy/headers.js';
import {
  callerOf,
  planFill,
  replacementsFor,
  sameToken,
  unsafeValueRefusal,
} from '../../src/proxy/policy.js';
import { RawHeaders } from '../../src/proxy/raw-headers.js';
import { Unauthenticated, proxyStatusOf, reasonOf } from '../../src/proxy/refusal.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const code = (x: unknown) => (x instanceof VaultError ? x.code : null);
const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 200);

describe('references inside Basic credentials', () => {
  test('decoded, filled in either part, encoded again under the scheme as written', () => {
    const t = template([
      'Host',
      'git.example',
      'authorization',
      `basic  ${b64('vault://Robot/user:vault://GitHub/token')}`,
    ]);
    assert.deepEqual(
      t.refs.map((r) => r.written),
      ['vault://Robot/user', 'vault://GitHub/token'],
    );
    assert.deepEqual([...t.inBasicUser], [0]);
    assert.deepEqual(fill(t, [Buffer.from('robot'), Buffer.from('ghp_123')]), [
      'Host',
      'git.example',
      'authorization',
      `basic  ${b64('robot:ghp_123')}`,
    ]);
  });

  test('Basic credentials without a reference, or not canonical base64, are not touched', () => {
    fc.assert(
      fc.property(fc.string(), (creds) => {
        fc.pre(!creds.includes('vault://'));
        const raw = ['Authorization', `Basic ${b64(creds)}`];
        assert.equal(basicWithReference('Authorization', raw[1] as string), null);
        const plan = planFill(new RawHeaders(raw), new RawHeaders(raw), {
          tls: true,
          host: 'h',
          port: 443,
        });
        assert.equal(plan.kind, 'pass');
      }),
      { numRuns: runs },
    );
    // 'x:vault://a/b' with its last base64 character's spare bits set: not canonical.
    const canonical = b64('x:vault://a/bc');
    const bent = canonical.slice(0, -2) + 'd=';
    assert.notEqual(Buffer.from(bent, 'base64').toString('base64'), bent);
    assert.equal(basicWithReference('Authorization', `Basic ${bent}`), null);
    // Only Authorization: a Basic value elsewhere is an opaque string.
    assert.equal(basicWithReference('X-Basic', `Basic ${b64('x:vault://a/b')}`), null);
  });

  test('a value with a colon may not be the user part; in the password part it may', () => {
    const t = template(['Authorization', `Basic ${b64('vault://A/u:vault://B/p')}`]);
    const colon = Buffer.from('a:b');
    const plain = Buffer.from('ab');
    assert.equal(code(unsafeValueRefusal([colon, plain], t.refs, t.inBasicUser)), 'VLT-2047');
    assert.equal(unsafeValueRefusal([plain, colon], t.refs, t.inBasicUser), null);
  });

  test('an echo of the filled credentials is scrubbed back to what the client wrote', () => {
    const written = b64('x-access-token:vault://GitHub/token');
    const t = template(['Authorization', `Basic ${written}`]);
    const values = [Buffer.from('ghp_secret_value')];
    const echoes = replacementsFor(t, values).map((r) => [
      r.value.toString(),
      r.reference.toString(),
    ]);
    assert.deepEqual(echoes, [
      ['ghp_secret_value', 'vault://GitHub/token'],
      [b64('x-access-token:ghp_secret_value'), written],
    ]);
  });
});

describe('refusals a client shows', () => {
  test('the reason phrase starts with the code; anything unprintable is replaced; long ones are cut', () => {
    assert.equal(
      reasonOf(new VaultError('VLT-2045', 'Not to “there”.')),
      'VLT-2045 Not to ?there?.',
    );
    const long = reasonOf(new VaultError('VLT-2048', 'x'.repeat(500)));
    assert.equal(long.length, 200);
    assert.ok(long.startsWith('VLT-2048 xxx') && long.endsWith('...'));
    assert.doesNotMatch(reasonOf(new VaultError('VLT-2046', 'a\r\nB: c')), /[\r\n]/);
  });

  test('Proxy-Status: an RFC 9209 error type per code, the details an escaped string', () => {
    assert.equal(
      proxyStatusOf(new VaultError('VLT-2053', 'h:1 is "here" \\ now')),
      'vault-cli; error=destination_ip_prohibited; details="VLT-2053 h:1 is \\"here\\" \\\\ now"',
    );
    assert.match(proxyStatusOf(new VaultError('VLT-2041')), /; error=http_request_denied; /);
    assert.match(proxyStatusOf(new VaultError('VLT-3008')), /; error=destination_unavailable; /);
  });
});

describe('a session’s proxy judges the caller token first', () => {
  const auth = (token: string) =>
    new RawHeaders(['Proxy-Authorization', `Basic ${b64(`vault:${token}`)}`]);

  test('its own token passes, any other is VLT-2051, none is 407', () => {
    assert.equal(callerOf(auth('vlt_session'), true, 'vlt_session'), 'vlt_session');
    assert.equal(code(callerOf(auth('vlt_other'), true, 'vlt_session')), 'VLT-2051');
    assert.equal(code(callerOf(auth('vlt_session2'), true, 'vlt_session')), 'VLT-2051');
    assert.ok(callerOf(new RawHeaders([]), false, 'vlt_session') instanceof Unauthenticated);
    // Without a session, any token goes on to the host to judge.
    assert.equal(callerOf(auth('vlt_other'), false), 'vlt_other');
  });

  test('sameToken: equal only when equal, whatever the lengths', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => assert.equal(sameToken(a, b), a === b)),
      { numRuns: runs },
    );
  });
});
