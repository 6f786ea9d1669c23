// The WebAuthn verifier (fido2-lib behind src/webauthn/verify.ts), fed by a
// software key: valid input verifies, and any mutation of clientDataJSON,
// authenticatorData, the signature or the attestation's CBOR is refused with
// WebauthnRefused and nothing else. FUZZ_RUNS raises the number of cases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { counterAdvanced } from '../../src/core/webauthn.js';
import { WebauthnRefused, verifyAssertion, verifyRegistration } from '../../src/webauthn/verify.js';
import { SoftKey } from '../support/soft-key.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const CHALLENGE = Buffer.alloc(32, 7).toString('base64url');

async function enrolled() {
  const key = new SoftKey();
  const reg = await verifyRegistration(key.registration(CHALLENGE), {
    challenge: CHALLENGE,
    origin: key.origin,
  });
  return { key, reg };
}

/** Resolves to 'accepted' or 'refused'; anything else thrown fails the test. */
async function outcome(p: Promise<unknown>): Promise<'accepted' | 'refused'> {
  try {
    await p;
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof WebauthnRefused, `unexpected ${String(err)}`);
    return 'refused';
  }
}

test('a software key enrols and asserts (the fuzz below starts from valid input)', async () => {
  const { key, reg } = await enrolled();
  assert.equal(reg.credentialId, key.id.toString('base64url'));
  assert.match(reg.publicKeyPem, /BEGIN PUBLIC KEY/);
  const parts = key.assertionParts(CHALLENGE);
  const out = await verifyAssertion(SoftKey.assertionJSON(key.id, parts), {
    challenge: CHALLENGE,
    origin: key.origin,
    publicKeyPem: reg.publicKeyPem,
    prevCounter: 0,
  });
  assert.equal(out.counter, 1);
});

test('each check refuses with its reason', async () => {
  const { key, reg } = await enrolled();
  const expected = {
    challenge: CHALLENGE,
    origin: key.origin,
    publicKeyPem: reg.publicKeyPem,
    prevCounter: 5,
  };
  const reason = async (raw: unknown, exp = expected) => {
    try {
      await verifyAssertion(raw, exp);
      return 'accepted';
    } catch (err) {
      assert.ok(err instanceof WebauthnRefused);
      return err.reason;
    }
  };
  const good = () => key.assertionParts(CHALLENGE, { counter: 9 });
  assert.equal(await reason(SoftKey.assertionJSON(key.id, good())), 'accepted');
  assert.equal(
    await reason(SoftKey.assertionJSON(key.id, good()), { ...expected, challenge: 'AAAA' }),
    'challenge',
  );
  assert.equal(
    await reason(SoftKey.assertionJSON(key.id, good()), {
      ...expected,
      origin: 'http://localhost:1',
    }),
    'origin',
  );
  const noTouch = key.assertionParts(CHALLENGE, { counter: 10, flags: 0 });
  assert.equal(await reason(SoftKey.assertionJSON(key.id, noTouch)), 'presence');
  const old = key.assertionParts(CHALLENGE, { counter: 5 });
  assert.equal(await reason(SoftKey.assertionJSON(key.id, old)), 'counter');
  const other = new SoftKey();
  const forged = other.assertionParts(CHALLENGE, { counter: 11 });
  assert.equal(await reason(SoftKey.assertionJSON(key.id, forged)), 'signature');
  for (const junk of [null, 42, 'x', [], {}, { rawId: '!!', response: {} }]) {
    assert.equal(await reason(junk), 'malformed');
  }
});

test('the counter rule: up is fine, same or down is not, 0 then 0 is a key without one', () => {
  assert.equal(counterAdvanced(4, 5), true);
  assert.equal(counterAdvanced(5, 5), false);
  assert.equal(counterAdvanced(5, 1), false);
  assert.equal(counterAdvanced(0, 0), true);
  assert.equal(counterAdvanced(0, 1), true);
});

/** A changed copy of `b`: one byte xored, bytes cut off the end, or bytes appended. */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('xor' as const),
    at: fc.nat(),
    bits: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({ kind: fc.constant('cut' as const), n: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    kind: fc.constant('add' as const),
    extra: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(b: Buffer, m: Mutation): Buffer {
  const out = Buffer.from(b);
  if (m.kind === 'xor') {
    const i = m.at % out.length;
    out[i] = (out[i] ?? 0) ^ m.bits;
    return out;
  }
  if (m.kind === 'cut') return out.subarray(0, Math.max(0, out.length - m.n));
  return Buffer.concat([out, Buffer.from(m.extra)]);
}

test('fuzz: a mutated assertion is always refused, with WebauthnRefused only', async () => {
  const { key, reg } = await enrolled();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('clientDataJSON', 'authData', 'signature', 'resign-authData'),
      mutation,
      async (part, m) => {
        const parts = key.assertionParts(CHALLENGE);
        const changed = { ...parts };
        if (part === 'clientDataJSON') changed.clientDataJSON = mutate(parts.clientDataJSON, m);
        else if (part === 'signature') changed.signature = mutate(parts.signature, m);
        else changed.authData = mutate(parts.authData, m);
        // Re-signed by the real key: the RP id hash changed, so only its check can refuse.
        if (part === 'resign-authData') {
          changed.authData = Buffer.from(parts.authData);
          const i = m.kind === 'xor' ? m.at % 32 : 0;
          changed.authData[i] = (changed.authData[i] ?? 0) ^ (m.kind === 'xor' ? m.bits : 1);
          changed.signature = key.sign(changed.authData, changed.clientDataJSON);
        }
        const result = await outcome(
          verifyAssertion(SoftKey.assertionJSON(key.id, changed), {
            challenge: CHALLENGE,
            origin: key.origin,
            publicKeyPem: reg.publicKeyPem,
            prevCounter: key.counter - 1,
          }),
        );
        assert.equal(result, 'refused', `${part} ${JSON.stringify(m)}`);
      },
    ),
    { numRuns: RUNS },
  );
});

test('fuzz: mutated registrations (CBOR, clientDataJSON) throw WebauthnRefused or verify consistently', async () => {
  const key = new SoftKey();
  const reg = key.registration(CHALLENGE);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('attestationObject', 'clientDataJSON'),
      mutation,
      async (field, m) => {
        const raw = Buffer.from(reg.response[field], 'base64url');
        const changed = {
          ...reg,
          response: { ...reg.response, [field]: mutate(raw, m).toString('base64url') },
        };
        try {
          const out = await verifyRegistration(changed, {
            challenge: CHALLENGE,
            origin: key.origin,
          });
          // Format `none` signs nothing (clientDataJSON whitespace, a changed key still enrol),
          // but only ever as the credential id the browser named.
          assert.equal(out.credentialId, reg.rawId);
        } catch (err) {
          assert.ok(err instanceof WebauthnRefused, `unexpected ${String(err)}`);
        }
      },
    ),
    { numRuns: RUNS },
  );
});

test('fuzz: arbitrary JSON is refused with WebauthnRefused only', async () => {
  const { reg } = await enrolled();
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (v) => {
      const expected = { challenge: CHALLENGE, origin: 'http://localhost:4242' };
      assert.equal(
        await outcome(
          verifyAssertion(v, { ...expected, publicKeyPem: reg.publicKeyPem, prevCounter: 0 }),
        ),
        'refused',
      );
      assert.equal(await outcome(verifyRegistration(v, expected)), 'refused');
    }),
    { numRuns: RUNS },
  );
});

test('a 33-byte INTEGER in the signature must be a sign byte: 0x01 in its place is refused', async () => {
  const { key, reg } = await enrolled();
  // Half of all signatures have r or s with its high bit set, so a 0x00 sign byte: find one.
  for (let tries = 0; tries < 64; tries++) {
    const parts = key.assertionParts(CHALLENGE);
    const sig = parts.signature;
    const rLen = sig[3] ?? 0;
    const at = rLen === 33 ? 4 : sig[4 + rLen + 1] === 33 ? 4 + rLen + 2 : -1;
    if (at < 0) continue;
    const verify = (signature: Buffer) =>
      outcome(
        verifyAssertion(SoftKey.assertionJSON(key.id, { ...parts, signature }), {
          challenge: CHALLENGE,
          origin: key.origin,
          publicKeyPem: reg.publicKeyPem,
          prevCounter: key.counter - 1,
        }),
      );
    assert.equal(await verify(sig), 'accepted');
    const bumped = Buffer.from(sig);
    bumped[at] = 0x01;
    assert.equal(await verify(bumped), 'refused');
    return;
  }
  assert.fail('no signature with a 33-byte integer in 64 tries');
});
