// WebAuthn payload fuzzing against a live vault host. Mutated ceremony results
// are posted where a browser posts them: the one-shot ceremony page (the same
// src/webauthn/ceremony.ts the CLI and the dashboard run), which relays them to
// the host's unlock.finish or key.finish; malformed requests also go straight
// to the host's socket. None unlocks or enrols, each is refused with its code
// and audited, and the same host process answers throughout.
//
// A software key (test/support/soft-key.ts) is enrolled and signs, so a
// mutation can be signed again: the signature then holds, and the check under
// test is the one that must refuse. Each property ends with the unmutated
// payload going through the same path and succeeding, so the refusals are the
// mutations' doing. FUZZ_RUNS raises the number of cases.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { call } from '../../src/client/client.js';
import type { ClientOptions } from '../../src/client/options.js';
import { VaultError, type ErrorCode } from '../../src/core/errors.js';
import { PROTOCOL_VERSION, SOCKET_NAME } from '../../src/core/protocol.js';
import { enrolKey, unlockWithKey, type CeremonyHooks } from '../../src/webauthn/ceremony.js';
import { assertRefused, auditRecords, type AuditLine } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import { SoftKey, UP } from '../support/soft-key.js';
import { ceremony, postResult } from '../support/webauthn.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
/** Every enrolment costs two owner unlocks (Argon2id): fewer of them. */
const ENROL_RUNS = Math.max(5, Math.ceil(RUNS / 8));
/** The enrolled key's counter: a re-signed assertion at or below it is a possible clone. */
const ENROLLED_COUNTER = 10;

const rig = new Rig();
// No autoStart: a host that crashed must fail the test, not be quietly replaced.
const client: ClientOptions = {
  vaultDir: rig.vaultDir,
  daemon: { node: process.execPath, script: CLI, env: rig.env },
  autoStart: false,
};
const key = new SoftKey();
let token = '';
let hostPid = 0;
/** Printed by `vault create`: it stands in for the enrolled key's vouch, so an enrolment is one page. */
let recoveryKey = '';

const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();

/** What `key` posts after `navigator.credentials.create()` on the page at `origin`. */
function registration(k: SoftKey, challenge: string, origin: string) {
  const r = k.registration(challenge);
  return {
    ...r,
    response: {
      ...r.response,
      clientDataJSON: k.clientData('webauthn.create', challenge, origin).toString('base64url'),
    },
  };
}

/** The host process answering now. */
async function pid(): Promise<number> {
  return (await call(client, 'status', {})).pid;
}

async function agentState(name: string): Promise<string> {
  return (JSON.parse(ok(await rig.owner(['agent', 'show', name, '--json']))) as { state: string })
    .state;
}

type Fate<T> = { ok: true; value: T } | { ok: false; err: unknown };

/**
 * Runs one ceremony through the page server to the host: `start` is
 * unlockWithKey or enrolKey; once the page is up, `body` (given the page's
 * challenge and origin) is posted to it as the browser's result, raw. Returns
 * the page's verdict and the ceremony's fate.
 */
async function throughPage<T>(
  start: (hooks: CeremonyHooks) => Promise<T>,
  body: (page: { challenge: string; origin: string }) => string,
): Promise<{ verdict: { ok: boolean; message: string } | null; fate: Fate<T> }> {
  let onUrl: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (onUrl = resolve));
  const fate = start({
    call: (op, b) => call(client, op, b),
    onUrl: (u) => onUrl(u),
    timeoutMs: 20_000,
  }).then(
    (value): Fate<T> => ({ ok: true, value }),
    (err: unknown): Fate<T> => ({ ok: false, err }),
  );
  const first = await Promise.race([url, fate]);
  if (typeof first !== 'string') {
    assert.fail(`the ceremony ended before its page was up: ${JSON.stringify(first)}`);
  }
  const html = await (await fetch(first)).text();
  const m = /const OPTIONS = (.*);\n/.exec(html);
  assert.ok(m?.[1] !== undefined, 'options in the page');
  const { challenge } = JSON.parse(m[1]) as { challenge: string };
  const verdict = await fetch(first + '/result', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body({ challenge, origin: new URL(first).origin }),
  }).then(
    async (r) => (await r.json()) as { ok: boolean; message: string },
    // Past 64 KiB the page server stops reading and drops the connection; it still
    // relays a BadResult to the host, which must refuse it.
    () => null,
  );
  return { verdict, fate: await fate };
}

/** The ceremony's error code, failing the test if it succeeded or threw anything else. */
function refusal<T>(fate: Fate<T>): ErrorCode {
  if (fate.ok) assert.fail(`accepted: ${JSON.stringify(fate.value)}`);
  assert.ok(fate.err instanceof VaultError, `not a VaultError: ${String(fate.err)}`);
  return fate.err.code;
}

// ---- mutations ---------------------------------------------------------------

/** A changed copy of some bytes: one byte xored, cut, extended, emptied, or grown past the limits. */
const bytesMutation = fc.oneof(
  fc.record({
    op: fc.constant('xor' as const),
    at: fc.nat(),
    bits: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({ op: fc.constant('cut' as const), n: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    op: fc.constant('add' as const),
    extra: fc.uint8Array({ minLength: 1, maxLength: 16 }),
  }),
  fc.record({ op: fc.constant('empty' as const) }),
  fc.record({ op: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ op: fc.constant('huge' as const), n: fc.integer({ min: 30_000, max: 45_000 }) }),
);
type BytesMutation = typeof bytesMutation extends fc.Arbitrary<infer M> ? M : never;

function mutateBytes(
  b: Buffer,
  m: BytesMutation,
  xorRange: [number, number] = [0, b.length],
): Buffer {
  switch (m.op) {
    case 'xor': {
      const out = Buffer.from(b);
      const i = xorRange[0] + (m.at % (xorRange[1] - xorRange[0]));
      out[i] = (out[i] ?? 0) ^ m.bits;
      return out;
    }
    case 'cut':
      return b.subarray(0, Math.max(0, b.length - m.n));
    case 'add':
      return Buffer.concat([b, m.extra]);
    case 'empty':
      return Buffer.alloc(0);
    case 'random':
      return Buffer.from(m.bytes);
    case 'huge':
      // Still under the page's 64 KiB once in base64url: the host is what must refuse.
      return Buffer.concat([b, randomBytes(m.n)]);
  }
}

/** Changes to the credential's shape and to the request around it; no signature involved. */
function shapeMutations(fields: readonly string[]) {
  return fc.oneof(
    fc.record({ kind: fc.constant('credential' as const), value: fc.jsonValue() }),
    fc.record({ kind: fc.constant('response' as const), value: fc.jsonValue() }),
    fc.record({
      kind: fc.constant('field' as const),
      field: fc.constantFrom(...fields),
      value: fc.option(fc.jsonValue(), { nil: undefined }),
    }),
    fc.record({
      kind: fc.constant('otherId' as const),
      id: fc.uint8Array({ minLength: 1, maxLength: 64 }),
    }),
    fc.record({ kind: fc.constant('result' as const), value: fc.jsonValue() }),
    fc.record({ kind: fc.constant('text' as const), text: fc.string({ maxLength: 200 }) }),
    fc.record({
      kind: fc.constant('oversized' as const),
      n: fc.integer({ min: 65_537, max: 200_000 }),
    }),
  );
}
type ShapeMutation = ReturnType<typeof shapeMutations> extends fc.Arbitrary<infer M> ? M : never;

/** The posted body for a shape mutation of `credential`; null when `m` is not one. */
function applyShape(credential: Record<string, unknown>, m: { kind: string }): string | null {
  const s = m as ShapeMutation;
  const response = credential.response as Record<string, unknown>;
  switch (s.kind) {
    case 'credential':
      return JSON.stringify({ credential: s.value });
    case 'response':
      return JSON.stringify({ credential: { ...credential, response: s.value } });
    case 'field': {
      const target = s.field === 'rawId' ? { ...credential } : { ...response };
      if (s.value === undefined) delete target[s.field];
      else target[s.field] = s.value;
      const c = s.field === 'rawId' ? target : { ...credential, response: target };
      return JSON.stringify({ credential: c });
    }
    case 'otherId': {
      const id = Buffer.from(s.id).toString('base64url');
      if (id === credential.rawId)
        return JSON.stringify({ credential: { ...credential, rawId: '' } });
      return JSON.stringify({ credential: { ...credential, id, rawId: id } });
    }
    case 'result':
      return JSON.stringify(s.value);
    case 'text':
      return s.text;
    case 'oversized':
      return JSON.stringify({ credential: { ...credential, pad: 'A'.repeat(s.n) } });
    default:
      return null;
  }
}

/** Audit records after `seq`. */
async function auditAfter(seq: number): Promise<AuditLine[]> {
  return (await auditRecords(rig)).filter((r) => r.seq > seq);
}
async function lastSeq(): Promise<number> {
  return (await auditRecords(rig)).at(-1)?.seq ?? 0;
}

before(async () => {
  recoveryKey = (await rig.create()).trim();
  await rig.set('e1', 'value of e1');
  token = await rig.addAgent('bot', ['e1']);
  // The software key's enrolment, through the same page and host path as the fuzz below.
  key.counter = ENROLLED_COUNTER;
  const { fate } = await throughPage(
    (hooks) => enrolKey(PASSPHRASE, 'soft', hooks),
    (p) => JSON.stringify({ credential: registration(key, p.challenge, p.origin) }),
  );
  assert.ok(fate.ok, `the software key enrols: ${String(!fate.ok && fate.err)}`);
  ok(await rig.owner(['agent', 'lock', 'bot']));
  hostPid = await pid();
});
after(() => rig.dispose());

// ---- unlock ------------------------------------------------------------------

const unlockMutation = fc.oneof(
  // Bytes changed after signing: the signature no longer covers them.
  fc.record({
    kind: fc.constant('bytes' as const),
    field: fc.constantFrom('clientDataJSON', 'authenticatorData', 'signature'),
    m: bytesMutation,
  }),
  // Changed and signed again with the enrolled key: each check on its own.
  fc.record({
    kind: fc.constant('clientField' as const),
    field: fc.constantFrom('type', 'challenge', 'origin'),
    value: fc.jsonValue(),
  }),
  fc.record({
    kind: fc.constant('clientBytes' as const),
    bytes: fc.uint8Array({ maxLength: 300 }),
  }),
  fc.record({
    kind: fc.constant('rpIdHash' as const),
    hash: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  }),
  fc.record({ kind: fc.constant('flags' as const), flags: fc.constantFrom(0x00, 0x04) }),
  fc.record({
    kind: fc.constant('counter' as const),
    counter: fc.integer({ min: 0, max: ENROLLED_COUNTER }),
  }),
  shapeMutations(['rawId', 'clientDataJSON', 'authenticatorData', 'signature']),
);
type UnlockMutation = typeof unlockMutation extends fc.Arbitrary<infer M> ? M : never;

/** An assertion signed by `key` for this page, as the page would post it. */
function assertion(
  page: { challenge: string; origin: string },
  parts: { clientData?: Buffer; authData?: Buffer } = {},
) {
  const authData = parts.authData ?? key.authData(UP, 1000, false);
  const clientData =
    parts.clientData ?? key.clientData('webauthn.get', page.challenge, page.origin);
  return SoftKey.assertionJSON(key.id, {
    authData,
    clientDataJSON: clientData,
    signature: key.sign(authData, clientData),
  });
}

/** The body to post, and what the host must answer: its code and, where one check decides, the reason. */
function unlockCase(
  page: { challenge: string; origin: string },
  m: UnlockMutation,
): { body: string; code: ErrorCode; reason: RegExp | null } {
  const good = assertion(page);
  const refused = (body: unknown, reason: RegExp | null = null) => ({
    body: JSON.stringify({ credential: body }),
    code: 'VLT-4007' as ErrorCode,
    reason,
  });
  switch (m.kind) {
    case 'bytes': {
      const res = good.response as Record<string, string>;
      const before = Buffer.from(res[m.field] ?? '', 'base64url');
      const after = mutateBytes(before, m.m);
      return refused(
        { ...good, response: { ...res, [m.field]: after.toString('base64url') } },
        m.field === 'signature' && m.m.op !== 'huge' ? /signature/ : null,
      );
    }
    case 'clientField': {
      const data: Record<string, unknown> = {
        type: 'webauthn.get',
        challenge: page.challenge,
        origin: page.origin,
        crossOrigin: false,
      };
      if (JSON.stringify(m.value) === JSON.stringify(data[m.field])) m.value = null;
      data[m.field] = m.value;
      const clientData = Buffer.from(JSON.stringify(data));
      return refused(
        assertion(page, { clientData }),
        new RegExp(`^${m.field === 'type' ? 'type' : m.field}$`),
      );
    }
    case 'clientBytes':
      return refused(assertion(page, { clientData: Buffer.from(m.bytes) }));
    case 'rpIdHash': {
      const authData = key.authData(UP, 1000, false);
      if (Buffer.from(m.hash).equals(sha256('localhost'))) m.hash[0] = (m.hash[0] ?? 0) ^ 1;
      Buffer.from(m.hash).copy(authData, 0);
      return refused(assertion(page, { authData }), /^rp$/);
    }
    case 'flags':
      return refused(
        assertion(page, { authData: key.authData(m.flags, 1000, false) }),
        /^presence$/,
      );
    case 'counter':
      return {
        ...refused(assertion(page, { authData: key.authData(UP, m.counter, false) }), /^counter$/),
        code: 'VLT-4008',
      };
    default: {
      const body = applyShape(good, m);
      assert.ok(body !== null);
      return {
        body,
        code: 'VLT-4007',
        reason: m.kind === 'otherId' ? /not an enrolled key|malformed/ : null,
      };
    }
  }
}

test(
  'mutated unlock results posted to the ceremony page: refused, audited, the agent still locked, the host up',
  { timeout: 120_000 },
  async () => {
    const from = await lastSeq();
    const expected: { code: ErrorCode; reason: RegExp | null }[] = [];
    await fc.assert(
      fc.asyncProperty(unlockMutation, async (m) => {
        let want: { code: ErrorCode; reason: RegExp | null } | null = null;
        const { verdict, fate } = await throughPage(
          (hooks) => unlockWithKey('bot', PASSPHRASE, hooks),
          (page) => {
            const c = unlockCase(page, m);
            want = c;
            return c.body;
          },
        );
        assert.ok(want !== null);
        const { code, reason } = want as { code: ErrorCode; reason: RegExp | null };
        expected.push({ code, reason });
        if (m.kind !== 'oversized') assert.equal(verdict?.ok, false);
        assert.equal(refusal(fate), code);
        assert.equal(await pid(), hostPid, 'the same host answers');
      }),
      { numRuns: RUNS },
    );

    const records = await auditAfter(from);
    assert.deepEqual(
      records.map((r) => r.action),
      expected.map(() => 'unlock_failed'),
      'one unlock_failed record per refusal, nothing else',
    );
    records.forEach((r, i) => {
      const want = expected[i];
      assert.ok(want !== undefined);
      assert.equal(r.outcome, want.code, `record ${i}`);
      assert.equal(r.subject, 'bot');
      if (want.reason !== null) assert.match(r.field ?? '', want.reason, `record ${i}`);
    });
    assert.equal(await agentState('bot'), 'locked');
    assertRefused(await rig.agent(['get', 'e1'], token), 'VLT-2043');

    // The same path with the payload left alone unlocks: the refusals were the mutations'.
    const { fate } = await throughPage(
      (hooks) => unlockWithKey('bot', PASSPHRASE, hooks),
      (page) => JSON.stringify({ credential: assertion(page) }),
    );
    assert.deepEqual(fate, { ok: true, value: { status: 'unlocked' } });
    assert.equal(ok(await rig.agent(['get', 'e1'], token)), 'value of e1\n');
    ok(await rig.owner(['agent', 'lock', 'bot']));
  },
);

// ---- enrolment ---------------------------------------------------------------

// A `none` attestation is signed by nobody: bytes such as the AAGUID, the
// counter or unrelated clientDataJSON members may change and still make a
// well-formed enrolment of the same key (the owner's passphrase guards it).
// The mutations below are the ones that must always be refused.
const enrolMutation = fc.oneof(
  fc.record({
    kind: fc.constant('clientField' as const),
    field: fc.constantFrom('type', 'challenge', 'origin'),
    value: fc.jsonValue(),
  }),
  fc.record({
    kind: fc.constant('clientBytes' as const),
    bytes: fc.uint8Array({ maxLength: 300 }),
  }),
  // The CBOR: cut short, emptied, replaced, grown, or a byte changed in its
  // envelope, the RP id hash, or the credential id and public key.
  fc.record({
    kind: fc.constant('cbor' as const),
    m: bytesMutation.filter((x) => x.op !== 'add'),
    region: fc.constantFrom('envelope', 'rpIdHash', 'credential'),
  }),
  fc.record({ kind: fc.constant('noPresence' as const) }),
  shapeMutations(['rawId', 'clientDataJSON', 'attestationObject']),
);
type EnrolMutation = typeof enrolMutation extends fc.Arbitrary<infer M> ? M : never;

function enrolCase(
  soft: SoftKey,
  page: { challenge: string; origin: string },
  m: EnrolMutation,
): { body: string; reason: RegExp | null } {
  const good = registration(soft, page.challenge, page.origin);
  const withResponse = (r: Record<string, string>, reason: RegExp | null = null) => ({
    body: JSON.stringify({ credential: { ...good, response: { ...good.response, ...r } } }),
    reason,
  });
  switch (m.kind) {
    case 'clientField': {
      const data: Record<string, unknown> = {
        type: 'webauthn.create',
        challenge: page.challenge,
        origin: page.origin,
        crossOrigin: false,
      };
      if (JSON.stringify(m.value) === JSON.stringify(data[m.field])) m.value = null;
      data[m.field] = m.value;
      return withResponse(
        { clientDataJSON: Buffer.from(JSON.stringify(data)).toString('base64url') },
        new RegExp(`^${m.field}$`),
      );
    }
    case 'clientBytes':
      return withResponse({ clientDataJSON: Buffer.from(m.bytes).toString('base64url') });
    case 'cbor': {
      const att = Buffer.from(good.response.attestationObject, 'base64url');
      const authStart = att.length - soft.authData(0, 0, true).length;
      // authData: rpIdHash 32, flags 1, counter 4, AAGUID 16, then the credential.
      const range: [number, number] =
        m.region === 'envelope'
          ? [0, authStart]
          : m.region === 'rpIdHash'
            ? [authStart, authStart + 32]
            : [authStart + 53, att.length];
      return withResponse({
        attestationObject: mutateBytes(att, m.m, range).toString('base64url'),
      });
    }
    case 'noPresence': {
      const att = Buffer.from(good.response.attestationObject, 'base64url');
      const flagsAt = att.length - soft.authData(0, 0, true).length + 32;
      att[flagsAt] = (att[flagsAt] ?? 0) & ~UP;
      return withResponse({ attestationObject: att.toString('base64url') }, /^presence$/);
    }
    default: {
      const body = applyShape(good, m);
      assert.ok(body !== null);
      return { body, reason: null };
    }
  }
}

async function keyNames(): Promise<string[]> {
  return (await call(client, 'key.ls', { passphrase: PASSPHRASE })).keys.map((k) => k.name);
}

test(
  'mutated enrolment results posted to the ceremony page: refused, audited, no key added, the host up',
  { timeout: 120_000 },
  async () => {
    const keysBefore = await keyNames();
    const from = await lastSeq();
    const expected: (RegExp | null)[] = [];
    await fc.assert(
      fc.asyncProperty(enrolMutation, async (m) => {
        const soft = new SoftKey();
        let reason: RegExp | null = null;
        const { verdict, fate } = await throughPage(
          (hooks) => enrolKey(PASSPHRASE, 'fuzzed', hooks, recoveryKey),
          (page) => {
            const c = enrolCase(soft, page, m);
            reason = c.reason;
            return c.body;
          },
        );
        expected.push(reason);
        if (m.kind !== 'oversized') assert.equal(verdict?.ok, false);
        assert.equal(refusal(fate), 'VLT-4007');
        assert.equal(await pid(), hostPid, 'the same host answers');
      }),
      { numRuns: ENROL_RUNS },
    );

    const records = await auditAfter(from);
    assert.equal(records.length, expected.length, 'one key_add record per refusal');
    records.forEach((r, i) => {
      assert.equal(r.action, 'key_add', `record ${i}`);
      assert.equal(r.outcome, 'VLT-4007', `record ${i}`);
      const want = expected[i];
      if (want !== null && want !== undefined) assert.match(r.field ?? '', want, `record ${i}`);
    });
    assert.deepEqual(await keyNames(), keysBefore);

    // Unmutated, the same path enrols.
    const { fate } = await throughPage(
      (hooks) => enrolKey(PASSPHRASE, 'fuzzed', hooks, recoveryKey),
      (page) =>
        JSON.stringify({ credential: registration(new SoftKey(), page.challenge, page.origin) }),
    );
    assert.ok(fate.ok, `enrolled: ${String(!fate.ok && fate.err)}`);
    assert.deepEqual(await keyNames(), [...keysBefore, 'fuzzed']);
    await call(client, 'key.rm', { passphrase: PASSPHRASE, name: 'fuzzed' });
  },
);

// ---- the host's socket -------------------------------------------------------

/** One raw HTTP request on the host's socket; the reply's status and JSON body. */
function rawRequest(
  op: string,
  body: Buffer,
): Promise<{ status: number; reply: { ok: boolean; code?: string } }> {
  return new Promise((resolve, reject) => {
    const sock = connect(join(rig.vaultDir, SOCKET_NAME), () => {
      const head =
        `POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      sock.write(Buffer.concat([Buffer.from(head), body]));
    });
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => reject(new Error(`${op} ${body.length} bytes: ${err.message}`)));
    sock.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(raw)?.[1]);
      try {
        resolve({
          status,
          reply: JSON.parse(raw.slice(split + 4)) as { ok: boolean; code?: string },
        });
      } catch {
        reject(new Error(`not a JSON reply: ${raw.slice(0, 200)}`));
      }
    });
  });
}

test(
  'malformed unlock.finish and key.finish requests on the socket: refused, nothing unlocked, the host up',
  { timeout: 60_000 },
  async () => {
    const from = await lastSeq();
    const begin = async () =>
      (
        (await call(client, 'unlock.begin', {
          passphrase: PASSPHRASE,
          name: 'bot',
          origin: 'http://localhost:9',
        })) as {
          challengeId: string;
        }
      ).challengeId;
    const challengeId = await begin();
    const huge = 'A'.repeat(1_000_000);
    const bodies: [string, unknown, ErrorCode][] = [
      ['unlock.finish', {}, 'VLT-1001'],
      [
        'unlock.finish',
        { passphrase: PASSPHRASE, challengeId: 42, result: { credential: {} } },
        'VLT-1001',
      ],
      [
        'unlock.finish',
        { passphrase: PASSPHRASE, challengeId: [challengeId], result: { credential: {} } },
        'VLT-1001',
      ],
      [
        'unlock.finish',
        { passphrase: PASSPHRASE, challengeId: huge, result: { credential: {} } },
        'VLT-4007',
      ],
      [
        'unlock.finish',
        {
          passphrase: PASSPHRASE,
          challengeId,
          result: { credential: { rawId: huge, response: {} } },
        },
        'VLT-4007',
      ],
      [
        'unlock.finish',
        { passphrase: PASSPHRASE, challengeId: await begin(), result: [] },
        'VLT-4007',
      ],
      ['unlock.finish', { passphrase: PASSPHRASE, challengeId: await begin() }, 'VLT-4007'],
      // The owner's operation: no passphrase and no owner session, no unlock (the
      // agent itself once started one): VLT-2054 since the owner session.
      ['unlock.finish', { challengeId, result: { credential: {} } }, 'VLT-2054'],
      ['unlock.begin', { name: 'bot', origin: 'http://localhost:9' }, 'VLT-2054'],
      [
        'unlock.finish',
        { passphrase: 'wrong', challengeId, result: { credential: {} } },
        'VLT-3002',
      ],
      ['key.finish', { passphrase: PASSPHRASE, challengeId: 42, result: {} }, 'VLT-1001'],
      ['key.finish', { passphrase: 'wrong', challengeId, result: { credential: {} } }, 'VLT-3002'],
      ['key.finish', { challengeId, result: { credential: {} } }, 'VLT-2054'],
    ];
    // A well-formed enrolment whose finish carries the wrong passphrase.
    const enrol = await call(client, 'key.begin', {
      passphrase: PASSPHRASE,
      origin: 'http://localhost:9',
    });
    // A key is enrolled: the host asks for its vouch first; the challenge is signed all the same.
    const challenge = 'vouch' in enrol ? enrol.vouch.challenge : enrol.options.challenge;
    const stranger = registration(new SoftKey(), challenge, 'http://localhost:9');
    bodies.push([
      'key.finish',
      { passphrase: 'wrong', challengeId: enrol.challengeId, result: { credential: stranger } },
      'VLT-3002',
    ]);
    for (const [op, body, code] of bodies) {
      const { reply } = await rawRequest(op, Buffer.from(JSON.stringify(body)));
      assert.equal(reply.ok, false, `${op} ${JSON.stringify(body).slice(0, 80)}`);
      assert.equal(reply.code, code, `${op} ${JSON.stringify(body).slice(0, 80)}`);
    }
    for (const raw of [
      '',
      'not json',
      '{"challengeId":',
      '[]',
      'null',
      '\u0000\u00ff',
      '{"a":1}}',
    ]) {
      for (const op of ['unlock.finish', 'key.finish']) {
        const { reply } = await rawRequest(op, Buffer.from(raw, 'latin1'));
        assert.equal(reply.ok, false, `${op} ${JSON.stringify(raw)}`);
        assert.equal(reply.code, 'VLT-1001', `${op} ${JSON.stringify(raw)}`);
      }
    }
    // A body past the host's limit.
    const { reply } = await rawRequest('unlock.finish', Buffer.alloc(5 * 1024 * 1024, 0x20)).catch(
      () => ({ reply: { ok: false, code: 'closed' } }),
    );
    assert.equal(reply.ok, false);

    assert.equal(await pid(), hostPid, 'the same host answers');
    assert.deepEqual(await keyNames(), ['soft']);
    assert.equal(await agentState('bot'), 'locked');
    assertRefused(await rig.agent(['get', 'e1'], token), 'VLT-2043');
    const refusals = (await auditAfter(from)).filter((r) => r.action !== 'locked');
    assert.deepEqual(
      refusals.map((r) => [r.action, r.outcome, r.field]),
      [
        ['unlock_failed', 'VLT-4007', 'unknown or used challenge'],
        ['unlock_failed', 'VLT-4007', 'malformed'],
        ['unlock_failed', 'VLT-4007', 'malformed'],
        ['unlock_failed', 'VLT-4007', 'malformed'],
        // The calls with a wrong passphrase: owner guesses are audited.
        ['passphrase_failed', 'VLT-3002', null],
        ['passphrase_failed', 'VLT-3002', null],
        ['passphrase_failed', 'VLT-3002', null],
      ],
    );
  },
);

test(
  'non-JSON and oversized results posted to a vault-cli ceremony page: refused and audited',
  { timeout: 60_000 },
  async () => {
    for (const body of ['not json', '{"credential":', 'x'.repeat(70_000)]) {
      const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
      const verdict = await fetch(c.url + '/result', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).then(
        async (r) => (await r.json()) as { ok: boolean },
        () => null,
      );
      if (body.length < 65_536) assert.equal(verdict?.ok, false);
      const done = await c.done;
      assertRefused({ ...done, stderr: done.stderr.split('\n').slice(1).join('\n') }, 'VLT-4007');
      const last = (await auditRecords(rig)).at(-1);
      assert.equal(last?.action, 'unlock_failed');
      assert.equal(last?.field, 'browser: BadResult');
    }
    // A used page takes nothing more: turned away, or already closed.
    const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
    assert.equal((await postResult(c, { error: 'NotAllowedError' })).ok, false);
    const again = await postResult(c, { error: 'NotAllowedError' }).catch(() => null);
    assert.notEqual(again?.ok, true);
    await c.done;
    assert.equal(await pid(), hostPid);
    assert.equal(await agentState('bot'), 'locked');
  },
);
