// One-time codes against RFC 6238 appendix B, and the seed parser.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import { parseSeed, totpCode, type TotpParams } from '../../src/host/entries/totp.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

/** RFC 4648 base32, no padding. */
function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 6238 with node:crypto, as an independent reference. */
function reference(
  key: Uint8Array,
  alg: string,
  digits: number,
  period: number,
  ms: number,
): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / period)));
  const mac = createHmac(alg, key).update(counter).digest();
  const offset = (mac[mac.length - 1] as number) & 15;
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(code).padStart(digits, '0');
}

function expectBadSeed(seed: string): void {
  assert.throws(
    () => parseSeed(seed),
    (err: unknown) => err instanceof VaultError && err.code === 'VLT-1002',
    JSON.stringify(seed),
  );
}

const SEEDS = {
  SHA1: '12345678901234567890',
  SHA256: '12345678901234567890123456789012',
  SHA512: '1234567890123456789012345678901234567890123456789012345678901234',
} as const;

// RFC 6238 appendix B: time (s), then the 8-digit codes for SHA1, SHA256, SHA512.
const VECTORS: readonly [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

test('RFC 6238 appendix B: all 18 vectors', () => {
  let checked = 0;
  for (const [seconds, ...codes] of VECTORS) {
    (['SHA1', 'SHA256', 'SHA512'] as const).forEach((alg, i) => {
      const secret = base32(Buffer.from(SEEDS[alg], 'ascii'));
      const params = parseSeed(`otpauth://totp/x?secret=${secret}&algorithm=${alg}&digits=8`);
      assert.equal(params.algorithm, alg.toLowerCase());
      assert.equal(params.digits, 8);
      assert.equal(params.period, 30);
      assert.equal(totpCode(params, seconds * 1000), codes[i], `${alg} at ${seconds}`);
      checked++;
    });
  }
  assert.equal(checked, 18);
});

test('the code depends on the second, not the millisecond, and changes at the period', () => {
  const p = parseSeed('JBSWY3DPEHPK3PXP');
  assert.equal(totpCode(p, 1_700_000_010_000), totpCode(p, 1_700_000_010_999));
  assert.equal(totpCode(p, 1_699_999_980_000), totpCode(p, 1_700_000_009_999));
  assert.notEqual(totpCode(p, 1_700_000_009_999), totpCode(p, 1_700_000_010_000));
});

test('a plain base32 seed: SHA1, 6 digits, 30 s; JBSWY3DPEHPK3PXP at fixed times', () => {
  const p = parseSeed('JBSWY3DPEHPK3PXP');
  assert.deepEqual(p, { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'sha1', digits: 6, period: 30 });
  assert.equal(totpCode(p, 59_000), '996554');
  assert.equal(totpCode(p, 1_700_000_000_000), '324550');
});

test('an 80-bit secret (10 bytes, 16 base32 characters) works', () => {
  const key = Buffer.from('0123456789', 'ascii');
  const secret = base32(key);
  assert.equal(secret.length, 16);
  const p = parseSeed(secret);
  for (const ms of [0, 59_000, 1_111_111_109_000, 2_000_000_000_000]) {
    assert.equal(totpCode(p, ms), reference(key, 'sha1', 6, 30, ms));
  }
});

test('otpauth parameters: digits 6/7/8, period, issuer and label are honoured', () => {
  const key = Buffer.from('12345678901234567890', 'ascii');
  const secret = base32(key);
  const p = parseSeed(
    `otpauth://totp/ACME%20Co:alice@example.com?secret=${secret}&issuer=ACME%20Co&digits=7&period=60`,
  );
  assert.deepEqual(p, { secret, algorithm: 'sha1', digits: 7, period: 60 });
  assert.equal(totpCode(p, 1_234_567_890_000), reference(key, 'sha1', 7, 60, 1_234_567_890_000));
  assert.equal(parseSeed(`otpauth://totp/x?secret=${secret}`).digits, 6);
  assert.equal(parseSeed(`otpauth://totp/x?secret=${secret}&algorithm=sha512`).algorithm, 'sha512');
});

test('parseSeed accepts lower case, spaces, dashes, padding and a surrounding newline', () => {
  const canonical = parseSeed('JBSWY3DPEHPK3PXP');
  for (const seed of [
    'jbswy3dpehpk3pxp',
    'JBSW Y3DP EHPK 3PXP',
    'jbsw y3dp ehpk 3pxp',
    'JBSW-Y3DP-EHPK-3PXP',
    '  JBSWY3DPEHPK3PXP\n',
    'JBSWY3DPEHPK3PXP======',
  ]) {
    assert.deepEqual(parseSeed(seed), canonical, JSON.stringify(seed));
  }
  assert.deepEqual(parseSeed('otpauth://totp/x?secret=jbsw%20y3dp%20ehpk%203pxp'), canonical);
});

test('parseSeed rejects what is not a TOTP seed with VLT-1002', () => {
  const ok = 'JBSWY3DPEHPK3PXP';
  for (const seed of [
    '',
    '   ',
    'JBSWY3DPEHPK3PX1', // 1 is not base32
    'JBSWY3DPEHPK3PX0',
    'JBSWY3DPEHPK3PX8',
    'JBSWY3DPEHPK3PX!',
    'JBSWY3DPEHPK3PX', // 15 characters: under 80 bits
    'JBSWY3DP',
    'A'.repeat(129),
    'JBSW=Y3DPEHPK3PXP',
    `otpauth://hotp/x?secret=${ok}&counter=1`,
    `otpauth://totp/x`,
    `otpauth://totp/x?secret=`,
    `otpauth://totp/x?secret=${ok.slice(0, 8)}`,
    `otpauth://totp/x?secret=${ok}&digits=5`,
    `otpauth://totp/x?secret=${ok}&digits=9`,
    `otpauth://totp/x?secret=${ok}&digits=abc`,
    `otpauth://totp/x?secret=${ok}&digits=`,
    `otpauth://totp/x?secret=${ok}&period=0`,
    `otpauth://totp/x?secret=${ok}&period=-30`,
    `otpauth://totp/x?secret=${ok}&period=1.5`,
    `otpauth://totp/x?secret=${ok}&period=3601`,
    `otpauth://totp/x?secret=${ok}&period=thirty`,
    `otpauth://totp/x?secret=${ok}&algorithm=MD5`,
    'otpauth://',
    'otpauth://[::1',
    `https://totp/x?secret=${ok}`,
  ]) {
    expectBadSeed(seed);
  }
});

const BASE32_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'];

test('property: for random secrets, algorithms, digits and times, the code matches RFC 6238', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 10, maxLength: 64 }),
      fc.constantFrom('sha1', 'sha256', 'sha512'),
      fc.constantFrom(6, 7, 8),
      fc.integer({ min: 1, max: 3600 }),
      fc.integer({ min: 0, max: 2 ** 45 }),
      (key, alg, digits, period, ms) => {
        const seed = `otpauth://totp/x?secret=${base32(key)}&algorithm=${alg}&digits=${digits}&period=${period}`;
        const p = parseSeed(seed);
        assert.equal(totpCode(p, ms), reference(key, alg, digits, period, ms));
      },
    ),
    { numRuns: RUNS },
  );
});

test('property: every seed parseSeed accepts yields a code (never a stray exception)', () => {
  // parseSeed is the gate `entry set` uses for a totp field; a seed it lets in
  // must later give a code, not an error from the OTP library.
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom(...BASE32_CHARS), minLength: 16, maxLength: 128 }),
      (seed) => {
        let p: TotpParams;
        try {
          p = parseSeed(seed);
        } catch (err) {
          assert.ok(err instanceof VaultError && err.code === 'VLT-1002');
          return;
        }
        assert.match(totpCode(p, 1_700_000_000_000), /^[0-9]{6}$/);
      },
    ),
    { numRuns: RUNS },
  );
});

test('secrets up to 64 bytes yield a code; longer ones are refused at parse time', () => {
  const longest = Buffer.alloc(64, 0x5a);
  const p = parseSeed(base32(longest));
  assert.equal(totpCode(p, 59_000), reference(longest, 'sha1', 6, 30, 59_000));
  assert.throws(
    () => parseSeed(base32(Buffer.alloc(65, 0x5a))),
    (err: unknown) => err instanceof VaultError && err.code === 'VLT-1002',
  );
});

test('property: parseSeed throws only VLT-1002 on arbitrary text', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string().map((s) => `otpauth://totp/x?${s}`),
        fc.string().map((s) => `otpauth://${s}`),
      ),
      (seed) => {
        try {
          parseSeed(seed);
        } catch (err) {
          assert.ok(err instanceof VaultError && err.code === 'VLT-1002', String(err));
        }
      },
    ),
    { numRuns: RUNS * 5 },
  );
});
