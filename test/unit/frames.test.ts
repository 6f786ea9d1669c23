// The host channel's framing (src/core/frames.ts): a stream cut anywhere
// (whole, in random chunks, byte by byte) yields the same frames; a frame its
// owner does not keep is dropped without being held; what is copied is zeroed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  FRAME_HEAD,
  FrameReader,
  replyFrame,
  requestFrame,
  splitRequest,
  type FrameSink,
} from '../../src/core/frames.js';
import type { Op } from '../../src/core/protocol.js';

type Seen = ['frame', number, string] | ['dropped', number];

/** Feeds `chunks` to a reader whose sink keeps frames up to `keepUpTo` bytes; what it heard. */
function read(chunks: readonly Buffer[], keepUpTo = Infinity): Seen[] {
  const seen: Seen[] = [];
  const sink: FrameSink = {
    head: (_id, length) => length <= keepUpTo,
    frame: (id, payload) => {
      const r = splitRequest(payload);
      seen.push(['frame', id, r === null ? '?' : `${r.op} ${r.body.toString()}`]);
    },
    dropped: (id) => seen.push(['dropped', id]),
  };
  const reader = new FrameReader(sink);
  for (const c of chunks) reader.push(Buffer.from(c));
  assert.equal(reader.partial, false);
  return seen;
}

/** `wire` cut at `cuts` (offsets, any order). */
function cut(wire: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, wire.length]) {
    out.push(wire.subarray(from, c));
    from = c;
  }
  return out;
}

const request = fc.record({
  id: fc.integer({ min: 1, max: 0xffffffff }),
  op: fc.constantFrom<Op>('resolve', 'whoami', 'read', 'report'),
  body: fc.string({ maxLength: 300 }),
});

test('frames read whole, in chunks and byte by byte are the same', () => {
  fc.assert(
    fc.property(
      fc.array(request, { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      (reqs, cuts) => {
        const wire = Buffer.concat(reqs.map((r) => requestFrame(r.id, r.op, Buffer.from(r.body))));
        const want: Seen[] = reqs.map((r) => ['frame', r.id, `${r.op} ${r.body}`]);
        assert.deepEqual(read([wire]), want);
        assert.deepEqual(read(cut(wire, cuts)), want);
        assert.deepEqual(read([...wire].map((b) => Buffer.from([b]))), want);
      },
    ),
  );
});

test('a frame not kept is dropped as it comes, and the next one read as before', () => {
  const big = requestFrame(5, 'resolve', Buffer.alloc(1000, 0x61));
  const small = requestFrame(6, 'whoami', Buffer.from('{}'));
  const wire = Buffer.concat([big, small]);
  const want: Seen[] = [
    ['dropped', 5],
    ['frame', 6, 'whoami {}'],
  ];
  assert.deepEqual(read([wire], 100), want);
  assert.deepEqual(read(cut(wire, [3, 9, 500, 1010]), 100), want);
});

test('a payload copied out of several chunks leaves them zeroed; a partial frame is wiped', () => {
  const wire = requestFrame(1, 'resolve', Buffer.from('{"token":"secret-token"}'));
  const chunks = cut(Buffer.from(wire), [12, 20]).map((c) => Buffer.from(c));
  let payload: Buffer | null = null;
  const reader = new FrameReader({
    head: () => true,
    frame: (_id, p) => (payload = p),
    dropped: () => {},
  });
  for (const c of chunks) reader.push(c);
  assert.ok(payload !== null);
  // The chunks' payload bytes (past the 8-byte head) were copied out and zeroed.
  assert.ok(!Buffer.concat(chunks).toString('latin1').includes('secret'));
  const half = new FrameReader({ head: () => true, frame: () => {}, dropped: () => {} });
  const part = Buffer.from(wire.subarray(0, 20));
  half.push(part);
  assert.equal(half.partial, true);
  half.wipe();
  assert.equal(half.partial, false);
  assert.ok(part.subarray(8).every((b) => b === 0));
});

test('a request payload that names no operation is not split', () => {
  assert.equal(splitRequest(Buffer.alloc(0)), null);
  assert.equal(splitRequest(Buffer.from([0])), null);
  assert.equal(splitRequest(Buffer.from([9, 0x61])), null);
  assert.deepEqual(splitRequest(Buffer.from([1, 0x61, 0x7b, 0x7d])), {
    op: 'a',
    body: Buffer.from('{}'),
  });
});

test('a reply frame of JSON text is its UTF-8 bytes under its id, as read back', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 0xffffffff }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      (id, text) => {
        const json = JSON.stringify({ ok: true, result: { values: [text] } });
        const frame = replyFrame(id, json);
        assert.deepEqual(frame, replyFrame(id, Buffer.from(json)));
        assert.equal(frame.readUInt32BE(0), frame.length - FRAME_HEAD);
        const got: [number, string][] = [];
        new FrameReader({
          head: () => true,
          frame: (i, payload) => got.push([i, payload.toString('utf8')]),
          dropped: () => {},
        }).push(frame);
        assert.deepEqual(got, [[id, Buffer.from(json).toString('utf8')]]);
      },
    ),
  );
});
