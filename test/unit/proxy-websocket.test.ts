// WebSocket frames: the parser round-trips any frame sequence however it is
// chunked, never throws anything but a FrameError on random bytes, and the
// server-frame scrubber puts references back wherever a value falls (across
// fragments, frames and chunks), re-framing with the new lengths.
// VAULT_PROPERTY_RUNS asks for heavier runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  FrameError,
  FrameParser,
  OP,
  ServerFrameScrubber,
  encodeFrame,
  type Frame,
} from '../../src/proxy/websocket.js';

const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 150);

/** Lengths around every encoding boundary (7-bit, 16-bit, 64-bit), and small ones. */
const length = fc.oneof(
  fc.integer({ min: 0, max: 130 }),
  fc.constantFrom(125, 126, 127, 65535, 65536, 65537),
  fc.integer({ min: 0, max: 70_000 }),
);

const dataFrame: fc.Arbitrary<Frame> = fc
  .record({
    fin: fc.boolean(),
    rsv: fc.integer({ min: 0, max: 7 }),
    opcode: fc.constantFrom(OP.continuation, OP.text, OP.binary),
    mask: fc.option(fc.uint8Array({ minLength: 4, maxLength: 4 }), { nil: null }),
    n: length,
    seed: fc.integer({ min: 0, max: 255 }),
  })
  .map(({ n, seed, mask, ...f }) => ({
    ...f,
    mask: mask === null ? null : Buffer.from(mask),
    payload: Buffer.alloc(n, seed).map((b, i) => (b + i * 31) & 0xff) as Buffer,
  }));

const controlFrame: fc.Arbitrary<Frame> = fc
  .record({
    opcode: fc.constantFrom(OP.close, OP.ping, OP.pong),
    mask: fc.option(fc.uint8Array({ minLength: 4, maxLength: 4 }), { nil: null }),
    payload: fc.uint8Array({ maxLength: 125 }),
  })
  .map(({ mask, payload, opcode }) => ({
    fin: true,
    rsv: 0,
    opcode,
    mask: mask === null ? null : Buffer.from(mask),
    payload: Buffer.from(payload),
  }));

/** `buf` cut at the given (sorted, deduplicated) fractions of its length. */
function chunked(buf: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * buf.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, buf.length]) {
    if (c > from) out.push(buf.subarray(from, c));
    from = Math.max(from, c);
  }
  return out;
}

const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

test('parse(encode(frames)) gives the frames back, however the bytes are chunked', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(dataFrame, controlFrame), { maxLength: 8 }),
      cuts,
      (frames, c) => {
        const wire = Buffer.concat(frames.map(encodeFrame));
        const p = new FrameParser();
        const got = chunked(wire, c).flatMap((chunk) => p.push(chunk));
        assert.deepEqual(got, frames);
        assert.equal(p.pending, 0);
      },
    ),
    { numRuns: runs },
  );
});

test('byte by byte, a frame comes out only when its last byte arrives', () => {
  const f: Frame = {
    fin: true,
    rsv: 0,
    opcode: OP.text,
    mask: null,
    payload: Buffer.alloc(300, 7),
  };
  const wire = encodeFrame(f);
  const p = new FrameParser();
  for (let i = 0; i < wire.length - 1; i++) assert.deepEqual(p.push(wire.subarray(i, i + 1)), []);
  assert.deepEqual(p.push(wire.subarray(-1)), [f]);
});

test('random bytes: frames or a FrameError, nothing else, and never more held than sent', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2000 }), cuts, (bytes, c) => {
      const p = new FrameParser(4096);
      try {
        for (const chunk of chunked(Buffer.from(bytes), c)) p.push(chunk);
        assert.ok(p.pending <= bytes.length);
      } catch (err) {
        assert.ok(err instanceof FrameError, String(err));
        assert.ok(err.close === 1002 || err.close === 1009);
      }
    }),
    { numRuns: runs * 4 },
  );
});

test('the parser refuses what a client must fail on', () => {
  const bad: [string, Buffer, 1002 | 1009][] = [
    ['64-bit length, top bit set', Buffer.from([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]), 1002],
    ['fragmented ping', Buffer.from([0x09, 0]), 1002],
    ['long close', Buffer.from([0x88, 126, 0, 126]), 1002],
    ['reserved opcode 3', Buffer.from([0x83, 0]), 1002],
    ['reserved opcode 0xb', Buffer.from([0x8b, 0]), 1002],
    ['above the cap', Buffer.from([0x82, 127, 0, 0, 0, 1, 0, 0, 0, 0]), 1009],
  ];
  for (const [what, wire, close] of bad) {
    assert.throws(
      () => new FrameParser(1 << 20).push(wire),
      (e: unknown) => e instanceof FrameError && e.close === close,
      what,
    );
  }
});

const value = Buffer.from('abcdefgh');
const reference = Buffer.from('vault://API/token');
const replacements = [{ value, reference }];

/** Runs server bytes through the scrubber; what the client would receive. */
async function throughScrubber(
  chunks: Buffer[],
  max?: number,
): Promise<{ out: Buffer; refused: number | null }> {
  const s = new ServerFrameScrubber(replacements, max);
  let refused: number | null = null;
  s.on('refused', (c: number) => (refused = c));
  const out: Buffer[] = [];
  s.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((r) => s.on('end', r));
  for (const c of chunks) s.write(c);
  s.end();
  await ended;
  return { out: Buffer.concat(out), refused };
}

/** A message's text: filler around copies of the value, near-misses included. */
const messageText = fc
  .array(
    fc.oneof(
      fc.constant('abcdefgh'),
      fc.constant('abcdefg'),
      fc.stringMatching(/^[a-hxy ]{0,20}$/),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

test('server messages: every echoed value becomes the reference, across fragments, frames and chunks', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          text: messageText,
          binary: fc.boolean(),
          cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
          ping: fc.boolean(),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      cuts,
      async (messages, c) => {
        // Each message fragmented at its cuts, a ping between its first two fragments.
        const frames: Frame[] = [];
        for (const m of messages) {
          const parts = chunked(Buffer.from(m.text), m.cuts);
          if (parts.length === 0) parts.push(Buffer.alloc(0));
          parts.forEach((payload, i) => {
            frames.push({
              fin: i === parts.length - 1,
              rsv: 0,
              opcode: i === 0 ? (m.binary ? OP.binary : OP.text) : OP.continuation,
              mask: null,
              payload,
            });
            if (i === 0 && m.ping) {
              frames.push({ fin: true, rsv: 0, opcode: OP.ping, mask: null, payload: value });
            }
          });
        }
        const { out, refused } = await throughScrubber(
          chunked(Buffer.concat(frames.map(encodeFrame)), c),
        );
        assert.equal(refused, null);
        // Read back as a client would: messages reassembled, pings apart.
        const got = new FrameParser().push(out);
        const texts: string[] = [];
        let current = '';
        let pings = 0;
        for (const f of got) {
          assert.equal(f.mask, null);
          if (f.opcode === OP.ping) {
            assert.deepEqual(f.payload, reference);
            pings++;
            continue;
          }
          current += f.payload.toString();
          if (f.fin) {
            texts.push(current);
            current = '';
          }
        }
        assert.deepEqual(
          texts,
          messages.map((m) => m.text.replaceAll('abcdefgh', reference.toString())),
        );
        assert.equal(pings, messages.filter((m) => m.ping).length);
        assert.ok(!out.includes(value));
      },
    ),
    { numRuns: runs },
  );
});

test('a frame above the cap: close 1009 to the client, nothing of it passed on', async () => {
  const big = encodeFrame({
    fin: true,
    rsv: 0,
    opcode: OP.binary,
    mask: null,
    payload: Buffer.alloc(5000, 1),
  });
  const hello = encodeFrame({
    fin: true,
    rsv: 0,
    opcode: OP.text,
    mask: null,
    payload: Buffer.from('hi'),
  });
  const { out, refused } = await throughScrubber(
    [hello, big.subarray(0, 100), big.subarray(100)],
    4096,
  );
  assert.equal(refused, 1009);
  assert.deepEqual(new FrameParser().push(out), [
    { fin: true, rsv: 0, opcode: OP.text, mask: null, payload: Buffer.from('hi') },
    { fin: true, rsv: 0, opcode: OP.close, mask: null, payload: Buffer.from([0x03, 0xf1]) },
  ]);
});

test('a masked server frame, RSV bits, or a stray continuation: close 1002', async () => {
  const cases: Frame[] = [
    {
      fin: true,
      rsv: 0,
      opcode: OP.text,
      mask: Buffer.from([1, 2, 3, 4]),
      payload: Buffer.from('x'),
    },
    { fin: true, rsv: 4, opcode: OP.text, mask: null, payload: Buffer.from('x') },
    { fin: true, rsv: 0, opcode: OP.continuation, mask: null, payload: Buffer.from('x') },
  ];
  for (const f of cases) {
    const { out, refused } = await throughScrubber([encodeFrame(f)]);
    assert.equal(refused, 1002);
    assert.deepEqual(new FrameParser().push(out), [
      { fin: true, rsv: 0, opcode: OP.close, mask: null, payload: Buffer.from([0x03, 0xea]) },
    ]);
  }
});
