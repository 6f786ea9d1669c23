// One definition per host operation (src/core/requests.ts): the decoders take
// any JSON value to a decoded body or a VaultError with a documented code,
// never another exception; every operation has exactly one handler, in one
// area of src/host/ops; and the host decodes each body with that operation's
// entry before anything else (a real host on a temp socket says the same as
// the decoder does, for a body the decoder refuses).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import type { Op } from '../../src/core/protocol.js';
import { MAX_REFS, REQUESTS } from '../../src/core/requests.js';
import { AREAS, OPS } from '../../src/host/ops/index.js';
import { startHost, type RunningHost } from '../../src/host/serve/server.js';

const RUNS = Number(process.env.FC_RUNS ?? 300);
const ops = Object.keys(REQUESTS) as Op[];

/** The codes a malformed body may get: usage (1001), a bad agent kind (1002), too many references (1006). */
const DOCUMENTED = new Set(['VLT-1001', 'VLT-1002', 'VLT-1006']);

function decodeOrRefuse(op: Op, value: unknown): void {
  try {
    REQUESTS[op](value, 'body');
  } catch (err) {
    if (!(err instanceof VaultError)) throw err;
    assert.ok(DOCUMENTED.has(err.code), `${op}: ${err.code}`);
    if (err.code === 'VLT-1001') assert.match(err.message, /^Bad request: .+\.$/);
  }
}

/** A body with the operation's own keys, each any JSON value or left out. */
function bodyOf(op: Op): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(REQUESTS[op].fields);
  const field = fc.oneof(
    fc.jsonValue(),
    fc.string(),
    fc.array(fc.string()),
    fc.array(fc.record({ entry: fc.string(), field: fc.string() }), { maxLength: 3 }),
    fc.integer(),
    fc.constantFrom('get', 'totp', 'ai', 'script', true),
  );
  return fc.record(Object.fromEntries(keys.map((k) => [k, field])), { requiredKeys: [] });
}

test('property: every decoder takes any JSON value to a body or a documented VaultError', () => {
  fc.assert(
    fc.property(fc.constantFrom(...ops), fc.jsonValue(), (op, value) => decodeOrRefuse(op, value)),
    { numRuns: RUNS * 4 },
  );
});

test('property: bodies with each operation’s own keys decode or are refused with a documented code', () => {
  for (const op of ops) {
    fc.assert(
      fc.property(bodyOf(op), (body) => decodeOrRefuse(op, body)),
      { numRuns: RUNS },
    );
  }
});

test('a decoded body has the types its definition promises; keys not defined are dropped', () => {
  const body = REQUESTS['agent.add'](
    { passphrase: 'p', kind: 'ai', name: 'bot', scope: null, limits: 'x', extra: 1 },
    'body',
  );
  assert.deepEqual(body, {
    passphrase: 'p',
    seenAnchor: undefined,
    keyProof: undefined,
    kind: 'ai',
    name: 'bot',
    scope: [],
    limits: { perMinute: 3, perHour: 10 },
  });
  assert.deepEqual(
    REQUESTS['vault.restore']({ passphrase: '', path: '/b', confirm: 'yes' }, 'body'),
    {
      passphrase: '',
      seenAnchor: undefined,
      keyProof: undefined,
      path: '/b',
      confirm: false,
    },
  );
});

test('the refusals keep their codes and messages', () => {
  const refused = (op: Op, body: unknown): [string, string] => {
    try {
      REQUESTS[op](body, 'body');
    } catch (err) {
      assert.ok(err instanceof VaultError);
      return [err.code, err.message];
    }
    assert.fail(`${op} accepted ${JSON.stringify(body)}`);
  };
  assert.deepEqual(refused('read', { mode: 'list', token: 't' }), [
    'VLT-1001',
    'Bad request: mode.',
  ]);
  assert.deepEqual(refused('read', { mode: 'get' }), [
    'VLT-1001',
    'Bad request: token must be a string.',
  ]);
  assert.deepEqual(refused('resolve', { refs: [], token: 't' }), [
    'VLT-1001',
    'Bad request: refs must be a list of references.',
  ]);
  const many = Array.from({ length: MAX_REFS + 1 }, () => ({ entry: 'e', field: 'f' }));
  assert.deepEqual(refused('resolve', { refs: many }), [
    'VLT-1006',
    `One request names at most ${MAX_REFS} references; this one names ${MAX_REFS + 1}. Nothing was resolved.`,
  ]);
  assert.deepEqual(refused('resolve', { refs: [7], token: 't' }), [
    'VLT-1001',
    'Bad request: entry must be a string.',
  ]);
  assert.deepEqual(refused('agent.add', { passphrase: 'p', kind: 'robot' }), [
    'VLT-1002',
    'Agent kinds are ai and script.',
  ]);
  assert.deepEqual(refused('agent.limits', { passphrase: 'p', name: 'n', perHour: 0 }), [
    'VLT-1001',
    'Bad request: perHour must be a count.',
  ]);
  assert.deepEqual(refused('audit.list', { passphrase: 'p', since: 1.5 }), [
    'VLT-1001',
    'Bad request: since must be a whole number.',
  ]);
  assert.deepEqual(refused('audit.archive', { passphrase: 'p', path: '/a' }), [
    'VLT-1001',
    'Bad request: before.',
  ]);
  assert.deepEqual(refused('entry.hosts', { passphrase: 'p', entry: 'e', hosts: [1] }), [
    'VLT-1001',
    'Bad request: hosts must be a list.',
  ]);
});

test('every operation has exactly one handler, in exactly one area', () => {
  assert.deepEqual(Object.keys(OPS).sort(), [...ops].sort());
  const seen = new Map<string, string>();
  for (const [area, table] of Object.entries(AREAS)) {
    for (const op of Object.keys(table)) {
      assert.equal(seen.get(op), undefined, `${op} is defined in ${seen.get(op)} and ${area}`);
      seen.set(op, area);
    }
  }
  assert.deepEqual([...seen.keys()].sort(), [...ops].sort());
  for (const op of ops) {
    const def = OPS[op] as unknown;
    assert.ok(
      typeof def === 'function' || (typeof def === 'object' && def !== null && 'stream' in def),
      op,
    );
  }
});

let dir = '';
let host: RunningHost;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vault-host-ops-'));
  host = await startHost({ dir, idleMs: 0 });
});
after(async () => {
  host.stop();
  await host.stopped;
  rmSync(dir, { recursive: true, force: true });
});

function post(
  op: string,
  body: unknown,
): Promise<{ ok: boolean; code?: string; message?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath: host.socketPath, path: `/v1/${op}`, method: 'POST' },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('the host refuses each operation’s malformed body as its decoder does, before anything else', async () => {
  let checked = 0;
  for (const op of ops) {
    // Every field the wrong kind of value: a number where a string or list is due.
    const body = Object.fromEntries(Object.keys(REQUESTS[op].fields).map((k) => [k, 42]));
    let expected: VaultError | null = null;
    try {
      REQUESTS[op](body, 'body');
    } catch (err) {
      assert.ok(err instanceof VaultError);
      expected = err;
    }
    // A body the decoder takes would run the operation: not this test's business.
    if (expected === null) continue;
    const reply = await post(op, body);
    assert.deepEqual(
      [reply.ok, reply.code, reply.message],
      [false, expected.code, expected.message],
      op,
    );
    checked++;
  }
  // Unchecked: status, owner.session and owner.lock take no fields at all.
  assert.ok(checked >= ops.length - 3, `${checked} of ${ops.length} checked`);
});
