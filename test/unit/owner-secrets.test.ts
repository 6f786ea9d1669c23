// The owner's secrets leave a request's bytes as Buffers before the body is
// parsed (src/host/owner/secrets.ts): whatever the passphrase holds (quotes,
// backslashes, control characters, any Unicode, lone surrogates), the Buffer is
// the bytes Buffer.from(passphrase) would give, and the rest of the body parses
// as it did, with the field left empty.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { OwnerSecrets, liftOwnerSecrets } from '../../src/host/owner/secrets.js';

test('a lifted secret is the bytes of the string; the body still parses, the field empty', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary' }),
      fc.option(fc.string({ unit: 'binary' }), { nil: undefined }),
      fc.string(),
      (passphrase, recoveryKey, entry) => {
        const body = { entry, passphrase, recoveryKey, n: 3 };
        const raw = Buffer.from(JSON.stringify(body));
        const before = raw.length;
        const lifted = liftOwnerSecrets(raw);
        assert.equal(raw.length, before);
        assert.deepEqual(lifted.get('passphrase')?.expose(), Buffer.from(passphrase));
        assert.deepEqual(
          lifted.get('recoveryKey')?.expose(),
          recoveryKey === undefined ? undefined : Buffer.from(recoveryKey),
        );
        const parsed = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        assert.deepEqual(parsed, {
          entry,
          passphrase: '',
          ...(recoveryKey === undefined ? {} : { recoveryKey: '' }),
          n: 3,
        });
      },
    ),
    { numRuns: Number(process.env.FC_RUNS ?? 2000) },
  );
});

test('a key that only appears inside another value is not taken', () => {
  const body = { entry: '{"passphrase":"not-me"}', passphrase: 'me' };
  const raw = Buffer.from(JSON.stringify(body));
  const lifted = liftOwnerSecrets(raw);
  assert.equal(lifted.get('passphrase')?.expose().toString(), 'me');
  assert.equal((JSON.parse(raw.toString()) as { entry: string }).entry, body.entry);
});

test('a request’s secrets: the lifted one first, else one made from the body; all wiped after', () => {
  const raw = Buffer.from(JSON.stringify({ passphrase: 'lifted-pass', entry: 'e' }));
  const secrets = new OwnerSecrets(liftOwnerSecrets(raw));
  const body = JSON.parse(raw.toString()) as { passphrase: string };
  const pass = secrets.get('passphrase', body.passphrase);
  assert.equal(pass?.expose().toString(), 'lifted-pass');
  // Not lifted (another JSON layout): made from the body's string, and held for the wipe.
  const made = secrets.get('newPassphrase', 'spaced out');
  assert.equal(made?.expose().toString(), 'spaced out');
  assert.equal(secrets.get('newPassphrase', 'other'), made, 'one Secret per field');
  assert.equal(secrets.get('recoveryKey', undefined), undefined);
  secrets.wipe();
  assert.ok(pass?.expose().every((b) => b === 0));
  assert.ok(made?.expose().every((b) => b === 0));
});
