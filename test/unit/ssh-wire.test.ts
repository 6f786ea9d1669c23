// The SSH agent protocol parser (src/core/ssh-wire.ts) and the key-file
// reader (src/core/ssh-keyfile.ts): round trips, and fuzzing with malformed,
// truncated and oversized input, which must give null (a FAILURE reply or a
// closed connection), never a throw. FC_RUNS raises the runs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseKeyFile, parsePublicKeyLine, publicKeyLine } from '../../src/core/ssh-keyfile.js';
import {
  encodeRequest,
  MAX_AGENT_MESSAGE,
  parseAgentRequest,
  parseSessionBind,
  takeFrames,
  userauthSession,
  WireWriter,
} from '../../src/core/ssh-wire.js';

const RUNS = Number(process.env.FC_RUNS ?? 300);
const bytes = (max = 200) => fc.uint8Array({ maxLength: max });

test('a sign request round-trips through encode and parse', () => {
  fc.assert(
    fc.property(bytes(), bytes(), fc.nat(), (key, data, flags) => {
      const framed = encodeRequest.sign(key, data, flags);
      const { frames, rest, tooLong } = takeFrames(framed);
      assert.equal(frames.length, 1);
      assert.equal(rest.length, 0);
      assert.equal(tooLong, false);
      const req = parseAgentRequest(frames[0] as Buffer);
      assert.ok(req !== null && req.type === 'sign');
      assert.deepEqual(Buffer.from(req.keyBlob), Buffer.from(key));
      assert.deepEqual(Buffer.from(req.data), Buffer.from(data));
      assert.equal(req.flags, flags >>> 0);
    }),
    { numRuns: RUNS },
  );
});

test('a session-bind round-trips; the same bytes cut short or lengthened do not parse', () => {
  fc.assert(
    fc.property(
      bytes(),
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      bytes(),
      fc.boolean(),
      (hostKey, sessionId, signature, forwarding) => {
        const body = takeFrames(encodeRequest.bind({ hostKey, sessionId, signature, forwarding }))
          .frames[0] as Buffer;
        const req = parseAgentRequest(body);
        assert.ok(req !== null && req.type === 'bind');
        assert.equal(req.bind.forwarding, forwarding);
        assert.deepEqual(Buffer.from(req.bind.sessionId), Buffer.from(sessionId));
        for (let cut = 1; cut < body.length; cut += Math.max(1, body.length >> 3)) {
          const r = parseAgentRequest(body.subarray(0, body.length - cut));
          assert.ok(r === null || r.type === 'unsupported');
        }
        assert.equal(parseAgentRequest(Buffer.concat([body, Buffer.from([0])])), null);
      },
    ),
    { numRuns: RUNS },
  );
});

test('any bytes at all: parse and framing return, never throw', () => {
  fc.assert(
    fc.property(bytes(4096), (b) => {
      const buf = Buffer.from(b);
      parseAgentRequest(buf);
      parseSessionBind(buf);
      userauthSession(buf);
      parsePublicKeyLine(buf.toString('latin1'));
      const { frames, rest } = takeFrames(buf);
      let taken = rest.length;
      for (const f of frames) {
        taken += f.length + 4;
        parseAgentRequest(f);
      }
      assert.ok(taken <= buf.length);
    }),
    { numRuns: RUNS * 3 },
  );
});

test('well-typed messages with lying lengths: null, never a throw or a read past the end', () => {
  const lying = fc.tuple(
    fc.constantFrom(11, 13, 27),
    fc.array(fc.oneof(fc.nat(), fc.constant(0xffffffff)), { maxLength: 5 }),
    bytes(64),
  );
  fc.assert(
    fc.property(lying, ([type, lengths, tail]) => {
      const w = new WireWriter().byte(type);
      if (type === 27) w.string('session-bind@openssh.com');
      for (const n of lengths) w.uint32(n);
      const req = parseAgentRequest(w.raw(tail).bytes());
      if (req !== null && req.type === 'sign') assert.ok(req.data.length <= 64 + 20);
    }),
    { numRuns: RUNS * 3 },
  );
});

test('a message stating more than MAX_AGENT_MESSAGE is refused before it is buffered', () => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(MAX_AGENT_MESSAGE + 1);
  assert.equal(takeFrames(head).tooLong, true);
  head.writeUInt32BE(0xffffffff);
  assert.equal(takeFrames(Buffer.concat([encodeRequest.identities(), head])).tooLong, true);
  // Exactly the bound is taken (once it has all arrived).
  head.writeUInt32BE(MAX_AGENT_MESSAGE);
  const r = takeFrames(head);
  assert.equal(r.tooLong, false);
  assert.equal(r.frames.length, 0);
  assert.equal(parseAgentRequest(Buffer.alloc(MAX_AGENT_MESSAGE + 1, 11)), null);
});

test('a user-authentication request names its session; other data names none', () => {
  const sid = Buffer.alloc(32, 7);
  const data = new WireWriter().string(sid).byte(50).string('git').bytes();
  assert.deepEqual(Buffer.from(userauthSession(data) ?? []), sid);
  assert.equal(userauthSession(Buffer.from('SSHSIG')), null);
  assert.equal(userauthSession(new WireWriter().string(sid).byte(51).bytes()), null);
});

test('key files from ssh-keygen: each type read; encrypted refused; mutations never throw', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ssh-wire-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kinds = [
    ['ed25519', ['-t', 'ed25519']],
    ['ecdsa256', ['-t', 'ecdsa', '-b', '256']],
    ['ecdsa384', ['-t', 'ecdsa', '-b', '384']],
    ['ecdsa521', ['-t', 'ecdsa', '-b', '521']],
    ['rsa', ['-t', 'rsa', '-b', '2048']],
  ] as const;
  const texts: string[] = [];
  for (const [name, args] of kinds) {
    const f = join(dir, name);
    execFileSync('ssh-keygen', ['-q', ...args, '-N', '', '-C', `c-${name}`, '-f', f]);
    const text = readFileSync(f, 'utf8');
    const parsed = parseKeyFile(text);
    assert.ok(parsed.ok, name);
    const pub = readFileSync(`${f}.pub`, 'utf8').trim();
    assert.equal(publicKeyLine(parsed.key.publicBlob, parsed.key.comment), pub);
    texts.push(text);
  }
  const enc = join(dir, 'enc');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'pw', '-f', enc]);
  const refused = parseKeyFile(readFileSync(enc, 'utf8'));
  assert.ok(!refused.ok && /encrypted/.test(refused.reason));
  // Flipped or cut bytes inside the armour: a result (most often a reason), never a throw.
  fc.assert(
    fc.property(
      fc.constantFrom(...texts),
      fc.nat(),
      fc.nat(255),
      fc.boolean(),
      (text, at, to, cut) => {
        const body = Buffer.from(text.split('\n').slice(1, -2).join(''), 'base64');
        const i = at % body.length;
        const changed = cut ? body.subarray(0, i) : Buffer.from(body);
        if (!cut) changed[i] = to;
        const armoured = `-----BEGIN OPENSSH PRIVATE KEY-----\n${changed.toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`;
        const r = parseKeyFile(armoured);
        assert.equal(typeof r.ok, 'boolean');
      },
    ),
    { numRuns: RUNS },
  );
});
