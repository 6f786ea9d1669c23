// The sealed digest's HMAC written in JavaScript (crypto/hmac-sha256.ts, issue
// 37) against Node's createHmac: every message length across the padding
// edges of one to seven blocks (55/56 bytes from a block's end is where a
// second padding block begins), keys shorter than, equal to and longer than
// a block (hashed first), the same instance reused for many messages, and a
// message written after a longer one (the pad must not keep its bytes).
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { HmacSha256 } from '../../src/crypto/hmac-sha256.js';

function macOf(h: HmacSha256, msg: Buffer): Buffer {
  h.room(msg.length, 0);
  msg.copy(h.msg);
  return Buffer.from(h.mac(msg.length));
}

test('equals createHmac for every message length up to 450 bytes and key lengths around the block', () => {
  for (const size of [0, 1, 31, 32, 63, 64, 65, 128, 200]) {
    const key = randomBytes(size);
    const h = new HmacSha256(key);
    for (let len = 0; len <= 450; len++) {
      const msg = randomBytes(len);
      assert.deepEqual(
        macOf(h, msg),
        createHmac('sha256', key).update(msg).digest(),
        `key ${size} bytes, message ${len} bytes`,
      );
    }
  }
});

test('equals createHmac for any key and messages in any order (a long message, then short ones)', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 150 }),
      fc.array(fc.uint8Array({ maxLength: 3000 }), { minLength: 1, maxLength: 8 }),
      (key, msgs) => {
        const h = new HmacSha256(key);
        for (const m of msgs) {
          const msg = Buffer.from(m);
          assert.deepEqual(macOf(h, msg), createHmac('sha256', key).update(msg).digest());
        }
      },
    ),
    { numRuns: 300 },
  );
});
