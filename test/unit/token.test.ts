// Token and recovery-key strings: prefix, base62 body, checksum.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import {
  AGENT_ID_BYTES,
  RECOVERY_PREFIX,
  SECRET_BYTES,
  TOKEN_PREFIX,
  base62,
  decodeKeyString,
  encodeKeyString,
  formatToken,
  parseToken,
  unbase62,
} from '../../src/crypto/token.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters a typo or a copy-paste accident could bring in, beside the alphabet. */
const STRANGERS = ['_', '-', ' ', '.', '/', '+', '=', '\n', '\u0000', 'é', 'Ł', 'Ａ', '\u{1F511}'];
/** Characters needed to write n bytes in base62. */
const width = (n: number): number => Math.ceil((n * 8) / Math.log2(62));

const bytes = (n: number): fc.Arbitrary<Buffer> =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b));

function newToken(): { id: Buffer; secret: Buffer; token: string } {
  const id = randomBytes(AGENT_ID_BYTES);
  const secret = randomBytes(SECRET_BYTES);
  return { id, secret, token: formatToken(id, secret) };
}

test('a token is vlt_ and 71 base62 characters', () => {
  const { token } = newToken();
  assert.match(token, /^vlt_[0-9A-Za-z]{71}$/);
  assert.equal(TOKEN_PREFIX, 'vlt_');
});

test('property: parseToken(formatToken(id, secret)) gives back the id (hex) and the secret', () => {
  fc.assert(
    fc.property(bytes(AGENT_ID_BYTES), bytes(SECRET_BYTES), (id, secret) => {
      const token = formatToken(id, secret);
      assert.equal(token.length, TOKEN_PREFIX.length + width(48) + 6);
      const parsed = parseToken(token);
      assert.ok(parsed !== null);
      assert.equal(parsed.agentId, id.toString('hex'));
      assert.ok(parsed.secret.equals(secret));
    }),
    { numRuns: RUNS },
  );
});

test('the extreme tokens round-trip: all zero and all 0xff bytes', () => {
  for (const fill of [0x00, 0xff]) {
    const id = Buffer.alloc(AGENT_ID_BYTES, fill);
    const secret = Buffer.alloc(SECRET_BYTES, fill);
    const parsed = parseToken(formatToken(id, secret));
    assert.ok(parsed !== null);
    assert.equal(parsed.agentId, id.toString('hex'));
    assert.ok(parsed.secret.equals(secret));
  }
});

test('surrounding whitespace (a pasted line) is tolerated', () => {
  const { id, token } = newToken();
  assert.equal(parseToken(`  ${token}\n`)?.agentId, id.toString('hex'));
});

test('every single-character substitution of a valid token is rejected', () => {
  const tokens = [
    newToken().token,
    formatToken(Buffer.alloc(AGENT_ID_BYTES), Buffer.alloc(SECRET_BYTES)),
    formatToken(Buffer.alloc(AGENT_ID_BYTES, 0xff), Buffer.alloc(SECRET_BYTES, 0xff)),
  ];
  const replacements = [...ALPHABET, ...STRANGERS];
  let tried = 0;
  for (const token of tokens) {
    assert.ok(parseToken(token) !== null);
    for (let i = 0; i < token.length; i++) {
      for (const ch of replacements) {
        if (ch === token[i]) continue;
        const typo = token.slice(0, i) + ch + token.slice(i + 1);
        assert.equal(parseToken(typo), null, `substitution at ${i} with ${JSON.stringify(ch)}`);
        tried++;
      }
    }
  }
  assert.ok(tried > 3 * 75 * 60);
});

test('insertions, deletions and swapped neighbours are rejected too', () => {
  const { token } = newToken();
  for (let i = 0; i < token.length; i++) {
    assert.equal(parseToken(token.slice(0, i) + token.slice(i + 1)), null, `deletion at ${i}`);
    assert.equal(parseToken(token.slice(0, i) + 'x' + token.slice(i)), null, `insert at ${i}`);
    const a = token[i] as string;
    const b = token[i + 1];
    if (b !== undefined && a !== b) {
      const swapped = token.slice(0, i) + b + a + token.slice(i + 2);
      assert.equal(parseToken(swapped), null, `swap at ${i}`);
    }
  }
});

test('a recovery key is not a token, and a token is not a recovery key', () => {
  const raw = randomBytes(AGENT_ID_BYTES + SECRET_BYTES);
  const asRecovery = encodeKeyString(RECOVERY_PREFIX, raw);
  assert.equal(parseToken(asRecovery), null);
  const token = formatToken(raw.subarray(0, AGENT_ID_BYTES), raw.subarray(AGENT_ID_BYTES));
  assert.equal(decodeKeyString(RECOVERY_PREFIX, token, raw.length), null);
});

test('parseToken rejects the obvious non-tokens', () => {
  const { token } = newToken();
  for (const text of [
    '',
    'vlt_',
    token.slice(0, -1),
    token + '0',
    token.toUpperCase(),
    token.replace('vlt_', 'VLT_'),
    token.replace('vlt_', 'vltr_'),
    'vlt_' + 'z'.repeat(71),
    `${token} ${token}`,
  ]) {
    assert.equal(parseToken(text), null, JSON.stringify(text));
  }
});

test('property: parseToken never throws, whatever the string', () => {
  const nearTokens = fc
    .string({ unit: fc.constantFrom(...ALPHABET), minLength: 71, maxLength: 71 })
    .map((body) => `vlt_${body}`);
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.string({ maxLength: 200 }),
        nearTokens,
      ),
      (text) => {
        const parsed = parseToken(text);
        if (parsed !== null) {
          assert.equal(parsed.agentId.length, AGENT_ID_BYTES * 2);
          assert.equal(parsed.secret.length, SECRET_BYTES);
        }
      },
    ),
    { numRuns: RUNS * 5 },
  );
});

test('property: encodeKeyString / decodeKeyString round-trip with the recovery prefix', () => {
  fc.assert(
    fc.property(bytes(32), (key) => {
      const text = encodeKeyString(RECOVERY_PREFIX, key);
      assert.ok(text.startsWith('vltr_'));
      assert.match(text.slice(RECOVERY_PREFIX.length), /^[0-9A-Za-z]+$/);
      const back = decodeKeyString(RECOVERY_PREFIX, text, 32);
      assert.ok(back !== null);
      assert.ok(back.equals(key));
      // The wrong prefix, the wrong size or a missing character: null.
      assert.equal(decodeKeyString(TOKEN_PREFIX, text, 32), null);
      assert.equal(decodeKeyString(RECOVERY_PREFIX, text, 31), null);
      assert.equal(decodeKeyString(RECOVERY_PREFIX, text, 33), null);
      assert.equal(decodeKeyString(RECOVERY_PREFIX, text.slice(0, -1), 32), null);
    }),
    { numRuns: RUNS },
  );
});

test('decodeKeyString rejects a body too large for its byte count even with a good checksum', () => {
  // 'z' * width(32) is 62^43 - 1, above 2^256; the checksum is made right by hand.
  const body = RECOVERY_PREFIX + 'z'.repeat(width(32));
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.from(body, 'ascii')) >>> 0);
  const bogus = body + base62(crc, 6);
  assert.equal(unbase62(body.slice(RECOVERY_PREFIX.length), 32), null);
  assert.equal(decodeKeyString(RECOVERY_PREFIX, bogus, 32), null);
  // The same construction with an in-range body decodes: the checksum above is right.
  const max = RECOVERY_PREFIX + base62(Buffer.alloc(32, 0xff), width(32));
  crc.writeUInt32BE(crc32(Buffer.from(max, 'ascii')) >>> 0);
  assert.deepEqual(
    decodeKeyString(RECOVERY_PREFIX, max + base62(crc, 6), 32),
    Buffer.alloc(32, 0xff),
  );
});

test('property: unbase62(base62(bytes, width), n) gives back the bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
      const w = width(b.length);
      const text = base62(b, w);
      assert.equal(text.length, w);
      assert.match(text, /^[0-9A-Za-z]*$/);
      const back = unbase62(text, b.length);
      assert.ok(back !== null);
      assert.deepEqual(new Uint8Array(back), b);
    }),
    { numRuns: RUNS },
  );
});

test('base62 orders like the number it writes, and pads with 0', () => {
  assert.equal(base62(Buffer.from([0]), 2), '00');
  assert.equal(base62(Buffer.from([61]), 2), '0z');
  assert.equal(base62(Buffer.from([62]), 2), '10');
  assert.equal(base62(Buffer.from([0xff, 0xff]), 3), 'H31');
  assert.deepEqual(unbase62('H31', 2), Buffer.from([0xff, 0xff]));
});

test('unbase62 rejects characters outside the alphabet and values too large', () => {
  assert.equal(unbase62('12-4', 4), null);
  assert.equal(unbase62('ab_', 4), null);
  assert.equal(unbase62('é', 4), null);
  assert.equal(unbase62('48', 1), null); // 4*62 + 8 = 256
  assert.deepEqual(unbase62('47', 1), Buffer.from([255]));
  assert.deepEqual(unbase62('', 2), Buffer.alloc(2));
});
