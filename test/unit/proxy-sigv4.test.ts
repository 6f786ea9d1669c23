// The pure pieces of AWS SigV4 re-signing (docs/proxy.md, AWS SigV4): the
// surrogate key id (minted, parsed, bound to a token) and the proxy's reader
// of a surrogate-signed request, fuzzed: whatever a header or a URL holds, a
// surrogate in it is either read as a well-formed signature or refused with
// VLT-2056/2057 (never null, which would forward it), and nothing throws.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import {
  mintSurrogate,
  parseSurrogate,
  SURROGATE_SESSION_TOKEN,
  surrogateEntry,
} from '../../src/crypto/aws-surrogate.js';
import { RawHeaders } from '../../src/proxy/raw-headers.js';
import { applySigned, signPieces, surrogateSigned } from '../../src/proxy/sigv4.js';

const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 200);
const code = (x: unknown) => (x instanceof VaultError ? x.code : null);
const TOKEN = 'vlt_test-token';
const S = mintSurrogate(TOKEN, 'AWS');
const SIG = '0123456789abcdef'.repeat(4);
const auth = (cred: string, signed = 'host;x-amz-date') =>
  `AWS4-HMAC-SHA256 Credential=${cred}, SignedHeaders=${signed}, Signature=${SIG}`;
const req = (...more: string[]) =>
  new RawHeaders(['Host', 's3.amazonaws.com', 'X-Amz-Date', '20260101T120000Z', ...more]);

describe('the surrogate key id', () => {
  test('names its entry, in the characters an AWS key id has, and only its own token finds it', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme' }),
        fc.string({ minLength: 1 }),
        (entry, other) => {
          const s = mintSurrogate(TOKEN, entry);
          assert.match(s, /^[A-Z0-9]+$/);
          assert.equal(parseSurrogate(s)?.entry, entry);
          assert.equal(surrogateEntry(TOKEN, s), entry);
          if (other !== TOKEN) assert.equal(surrogateEntry(other, s), null);
        },
      ),
      { numRuns: runs },
    );
  });

  test('a changed character is no surrogate of this token', () => {
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'), (at, c) => {
        const i = 4 + (at % (S.length - 4));
        const changed = S.slice(0, i) + c + S.slice(i + 1);
        if (changed !== S) assert.equal(surrogateEntry(TOKEN, changed), null);
      }),
      { numRuns: runs },
    );
  });
});

describe('reading a surrogate-signed request', () => {
  test('a well-formed signature is read into its parts', () => {
    const s = surrogateSigned(
      req(`Authorization`, auth(`${S}/20260101/eu-west-1/s3/aws4_request`)),
      '/b/k?x=1',
    );
    assert.ok(!(s instanceof VaultError) && s !== null);
    assert.deepEqual(
      [s.surrogate, s.day, s.region, s.service, s.signedHeaders, s.date, s.payloadHash],
      [S, '20260101', 'eu-west-1', 's3', ['host', 'x-amz-date'], '20260101T120000Z', null],
    );
  });

  test('no surrogate anywhere: none of its business (null), whatever else the headers hold', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 6 }),
        fc.string(),
        (hs, path) => {
          const raw = new RawHeaders(hs.flat());
          fc.pre(!/VLT0/.test(hs.flat().join('') + path));
          assert.equal(surrogateSigned(raw, `/${path}`), null);
        },
      ),
      { numRuns: runs },
    );
  });

  test('fuzz: any Authorization holding a surrogate is read or refused (VLT-2056/2057), never passed, never a throw', () => {
    const piece = fc.oneof(
      fc.string(),
      fc.constantFrom(
        'AWS4-HMAC-SHA256 ',
        'AWS4-ECDSA-P256-SHA256 ',
        'Credential=',
        `${S}/20260101/us-east-1/s3/aws4_request`,
        ', SignedHeaders=',
        'host;x-amz-date',
        ', Signature=',
        SIG,
        '/',
        ',',
        ' ',
      ),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 10 }),
        fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 3 }),
        (parts, extra) => {
          const value = `${parts.join('')} ${S}`;
          const r = surrogateSigned(req('Authorization', value, ...extra.flat()), '/');
          assert.notEqual(r, null);
          if (r instanceof VaultError) assert.ok(['VLT-2056', 'VLT-2057'].includes(r.code), r.code);
          else assert.equal(r?.surrogate, S);
        },
      ),
      { numRuns: runs * 5 },
    );
  });

  test('fuzz: a surrogate in the query (a presigned URL, or anywhere) is VLT-2057', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.boolean(), (before, after, encode) => {
        const cred = `${S}/20260101/us-east-1/s3/aws4_request`;
        const v = encode ? encodeURIComponent(cred) : cred;
        const target = `/k?${encodeURIComponent(before)}&X-Amz-Credential=${v}&${encodeURIComponent(after)}`;
        assert.equal(code(surrogateSigned(req(), target)), 'VLT-2057');
      }),
      { numRuns: runs },
    );
  });

  test('each way a signature can be unreadable has its refusal', () => {
    const cred = `${S}/20260101/us-east-1/s3/aws4_request`;
    const cases: [RawHeaders, string][] = [
      [req('Authorization', auth(cred), 'Authorization', 'Bearer x'), 'VLT-2056'],
      [req('Authorization', auth(`${S}/20260101/us-east-1/s3/aws4_reques`)), 'VLT-2056'],
      [req('Authorization', auth(`${S}/2026010/us-east-1/s3/aws4_request`)), 'VLT-2056'],
      [req('Authorization', auth(`${S}/20260101/US/s3/aws4_request`)), 'VLT-2056'],
      [req('Authorization', auth(cred, 'x-amz-date')), 'VLT-2056'],
      [req('Authorization', auth(cred, 'host;x-amz-date;authorization')), 'VLT-2056'],
      [req('Authorization', auth(cred), 'X-Amz-Date', '20260101T120000Z'), 'VLT-2056'],
      [req('Authorization', auth(cred), 'X-Amz-Security-Token', 'real-looking'), 'VLT-2056'],
      [req('Authorization', auth(cred), 'x-amz-content-sha256', 'abc'), 'VLT-2056'],
      [req('Authorization', auth(cred).replace('HMAC-SHA256', 'HMAC-SHA512')), 'VLT-2056'],
      [req('Authorization', auth(cred).replace('HMAC-SHA256', 'ECDSA-P256-SHA256')), 'VLT-2057'],
      [
        req(
          'Authorization',
          auth(cred),
          'x-amz-content-sha256',
          'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        ),
        'VLT-2057',
      ],
      [
        req(
          'Authorization',
          auth(cred),
          'x-amz-content-sha256',
          'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
        ),
        'VLT-2057',
      ],
    ];
    for (const [h, want] of cases)
      assert.equal(code(surrogateSigned(h, '/')), want, h.toArray().join(' '));
  });

  test('the pieces sent to the host hold the signed headers less the surrogate token; the answer goes over the client’s', () => {
    const cred = `${S}/20260101/us-east-1/sts/aws4_request`;
    const h = req(
      'Authorization',
      auth(cred, 'host;x-amz-date;x-amz-security-token'),
      'X-Amz-Security-Token',
      SURROGATE_SESSION_TOKEN,
      'User-Agent',
      'aws-cli',
    );
    const s = surrogateSigned(h, '/?a=b');
    assert.ok(!(s instanceof VaultError) && s !== null);
    const body = Buffer.from('Action=GetCallerIdentity&Version=2011-06-15');
    const p = signPieces(s, 'POST', '/?a=b', h, body);
    assert.deepEqual(p.headers, ['host', 's3.amazonaws.com']);
    assert.equal(p.query, 'a=b');
    assert.equal(p.payloadHash.length, 64);
    const out = applySigned(h, p, {
      authorization: 'AWS4-HMAC-SHA256 real',
      date: s.date,
      sessionToken: null,
    });
    assert.equal(out.get('authorization'), 'AWS4-HMAC-SHA256 real');
    assert.equal(out.has('x-amz-security-token'), false);
    assert.equal(out.get('x-amz-content-sha256'), p.payloadHash);
  });
});
