// The OAuth token endpoint's answer, read strictly (src/host/entries/oauth.ts
// parseAnswer): by example and by property. Whatever the endpoint sends, the
// reading either yields a printable bearer token of bounded size, or fails
// with one of a fixed set of messages that hold nothing it sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseAnswer } from '../../src/host/entries/oauth.js';

const MESSAGES = new Set([
  'an answer that is not JSON',
  'no usable access_token in the answer',
  'a token type other than bearer',
  'an unusable refresh_token in the answer',
]);

const failure = (text: string): string => {
  try {
    parseAnswer(text);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

test('token answers by example', () => {
  assert.deepEqual(
    parseAnswer(
      '{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-2"}',
    ),
    { accessToken: 'at-1', refreshToken: 'rt-2', expiresInMs: 3_600_000 },
  );
  assert.deepEqual(parseAnswer('{"access_token":"x"}'), {
    accessToken: 'x',
    refreshToken: null,
    expiresInMs: null,
  });
  assert.equal(parseAnswer('{"access_token":"x","expires_in":1e9}').expiresInMs, 86_400_000);
  assert.equal(failure('<html>'), 'an answer that is not JSON');
  assert.equal(failure('null'), 'an answer that is not JSON');
  assert.equal(
    failure('{"access_token":"a\\r\\nX-Evil: 1"}'),
    'no usable access_token in the answer',
  );
  assert.equal(failure('{"access_token":""}'), 'no usable access_token in the answer');
  assert.equal(
    failure(`{"access_token":"${'a'.repeat(8193)}"}`),
    'no usable access_token in the answer',
  );
  assert.equal(
    failure('{"access_token":"a","token_type":"mac"}'),
    'a token type other than bearer',
  );
  assert.equal(
    failure('{"access_token":"a","refresh_token":7}'),
    'an unusable refresh_token in the answer',
  );
});

test('property: any answer is a usable token or a fixed message', () => {
  const answers = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.json({ maxDepth: 3 }),
    fc
      .record(
        {
          access_token: fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null)),
          token_type: fc.oneof(fc.constantFrom('bearer', 'Bearer', 'mac'), fc.integer()),
          expires_in: fc.oneof(fc.double(), fc.string(), fc.integer()),
          refresh_token: fc.oneof(fc.string({ maxLength: 40 }), fc.integer()),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  );
  fc.assert(
    fc.property(answers, (text) => {
      let got: ReturnType<typeof parseAnswer>;
      try {
        got = parseAnswer(text);
      } catch (err) {
        assert.ok(MESSAGES.has((err as Error).message), (err as Error).message);
        return;
      }
      assert.match(got.accessToken, /^[\x21-\x7e]{1,8192}$/);
      if (got.refreshToken !== null) assert.match(got.refreshToken, /^[\x21-\x7e]{1,8192}$/);
      if (got.expiresInMs !== null) assert.ok(got.expiresInMs > 0 && got.expiresInMs <= 86_400_000);
    }),
    { numRuns: 3000 },
  );
});
