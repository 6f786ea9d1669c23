// The reference policy as decisions over plain data: who the caller is, which
// requests get values and where they may go, which values fit a header, what
// of a response is scrubbed; and how each refusal is answered.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { VaultError } from '../../src/core/errors.js';
import {
  callerOf,
  hostMismatch,
  isConfined,
  planFill,
  planResponse,
  plainHttpRefusal,
  unsafeValueRefusal,
  upgradeDrops,
  withRefs,
} from '../../src/proxy/policy.js';
import { RawHeaders } from '../../src/proxy/raw-headers.js';
import { Unauthenticated, rawError, statusOf } from '../../src/proxy/refusal.js';
import type { Destination } from '../../src/proxy/routing.js';

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
const h = (...raw: string[]) => new RawHeaders(raw);
const api: Destination = { tls: true, host: 'api.example.com', port: 443 };
const plain: Destination = { tls: false, host: 'localhost', port: 8080 };
const code = (x: unknown) => (x instanceof VaultError ? x.code : null);
const repl = (value: string, reference = 'vault://a/b') => ({
  value: Buffer.from(value),
  reference: Buffer.from(reference),
});

describe('callerOf', () => {
  test('a token is the caller; none is the default identity unless one is required', () => {
    assert.equal(callerOf(h('Proxy-Authorization', basic('vault:tok')), false), 'tok');
    assert.equal(callerOf(h('Host', 'x'), false), null);
    const required = callerOf(h('Host', 'x'), true);
    assert.ok(required instanceof Unauthenticated);
    assert.equal(statusOf(required), 407);
  });

  test('credentials that cannot be read are refused, never taken for none', () => {
    for (const raw of [
      ['Proxy-Authorization', 'Bearer tok'],
      ['Proxy-Authorization', basic('vault:a'), 'proxy-authorization', basic('vault:b')],
      ['Proxy-Authorization', basic('no-colon')],
    ]) {
      assert.ok(callerOf(new RawHeaders(raw), false) instanceof Unauthenticated, raw.join(' '));
    }
  });
});

test('isConfined: only a sandboxed session, and not where the owner allowed it', () => {
  assert.equal(isConfined({ host: 'localhost', port: 80 }), false);
  assert.equal(isConfined({ host: 'localhost', port: 80 }, new Set()), true);
  assert.equal(isConfined({ host: 'localhost', port: 80 }, new Set(['localhost:80'])), false);
  assert.equal(isConfined({ host: 'localhost', port: 81 }, new Set(['localhost:80'])), true);
});

test('hostMismatch: exactly one Host, naming the destination and its port', () => {
  assert.equal(hostMismatch(h('Host', 'api.example.com'), api), null);
  assert.equal(hostMismatch(h('host', 'API.example.com.:443'), api), null);
  assert.equal(hostMismatch(h('X', 'y'), api), 'no Host header');
  assert.equal(
    hostMismatch(h('Host', 'api.example.com', 'HOST', 'api.example.com'), api),
    'more than one Host header',
  );
  assert.equal(hostMismatch(h('Host', 'a b'), api), 'an invalid Host header');
  assert.match(
    hostMismatch(h('Host', 'evil.example'), api) ?? '',
    /is not the destination api\.example\.com:443/,
  );
  assert.match(hostMismatch(h('Host', 'api.example.com:444'), api) ?? '', /is not the destination/);
});

describe('planFill', () => {
  test('no reference: the forwardable headers go on as they are', () => {
    const forward = h('Host', 'api.example.com', 'Accept', '*/*');
    const plan = planFill(forward, forward, api);
    assert.equal(plan.kind, 'pass');
    assert.equal(plan.kind === 'pass' && plan.headers, forward);
  });

  test('a reference only in what is not forwarded is not filled', () => {
    const received = h('Host', 'evil.example', 'Proxy-Authorization', 'vault://a/b');
    const forward = received.withoutHopByHop();
    assert.equal(planFill(forward, received, api).kind, 'pass');
  });

  test('references to fill, with the Host judged on the received list', () => {
    const received = h(
      'Host',
      'api.example.com',
      'Authorization',
      'Bearer vault://a/b',
      'X',
      'vault://a/b',
    );
    const plan = planFill(received, received, api);
    assert.equal(plan.kind, 'fill');
    if (plan.kind !== 'fill') return;
    assert.equal(plan.plainHttp, false);
    assert.deepEqual(plan.template.refs, [{ entry: 'a', field: 'b', written: 'vault://a/b' }]);
    const overPlain = planFill(
      h('Host', 'localhost:8080', 'X', 'vault://a/b'),
      h('Host', 'localhost:8080'),
      plain,
    );
    assert.equal(overPlain.kind === 'fill' && overPlain.plainHttp, true);
  });

  test('refusals: a malformed reference VLT-2046, a Host elsewhere VLT-2048', () => {
    const bad = h('Host', 'api.example.com', 'X-Key', 'vault://no-field');
    const malformed = planFill(bad, bad, api);
    assert.equal(malformed.kind === 'refuse' && malformed.error.code, 'VLT-2046');
    const fronted = h('Host', 'evil.example', 'Authorization', 'vault://a/b');
    const plan = planFill(fronted, fronted, api);
    assert.equal(plan.kind === 'refuse' && plan.error.code, 'VLT-2048');
    assert.match(plan.kind === 'refuse' ? plan.error.message : '', /nothing was sent/);
  });
});

test('plainHttpRefusal: only to a name found on loopback, and never to the proxy itself', () => {
  assert.equal(code(plainHttpRefusal(plain, null, 1)), 'VLT-2045');
  assert.equal(code(plainHttpRefusal(plain, '127.0.0.1', 8080)), 'VLT-2049');
  assert.equal(plainHttpRefusal(plain, '127.0.0.1', 1), null);
});

test('unsafeValueRefusal: CR, LF or NUL is VLT-2047 naming the reference, never the value', () => {
  const refs = [
    { entry: 'a', field: 'b', written: 'vault://a/b' },
    { entry: 'c', field: 'd', written: 'vault://c/d' },
  ];
  assert.equal(unsafeValueRefusal([Buffer.from('ok'), Buffer.from('fine')], refs), null);
  for (const bad of ['x\r\nX-Evil: 1', 'x\n', 'x\0y']) {
    const err = unsafeValueRefusal([Buffer.from('ok'), Buffer.from(bad)], refs);
    assert.equal(code(err), 'VLT-2047');
    assert.match(err?.message ?? '', /vault:\/\/c\/d/);
    assert.ok(!(err?.message ?? '').includes(bad));
  }
});

test('withRefs: each bad reference named as written', () => {
  const refs = [
    { entry: 'a', field: 'b', written: 'vault://a/b' },
    { entry: 'c', field: 'd', written: 'vault://c/d' },
  ];
  const err = new VaultError('VLT-2041', 'Out of scope.', {
    problems: [{ index: 1, code: 'VLT-2041' }],
  });
  const named = withRefs(err, refs);
  assert.equal(named.code, 'VLT-2041');
  assert.match(named.message, /vault:\/\/c\/d: VLT-2041/);
  assert.ok(!named.message.includes('vault://a/b'));
  const plainErr = new VaultError('VLT-2042');
  assert.equal(withRefs(plainErr, refs), plainErr);
});

describe('planResponse', () => {
  const value = [repl('s3cret-value')];

  test('nothing injected: relayed as is', () => {
    assert.deepEqual(planResponse('GET', 200, 'OK', h('Content-Encoding', 'zstd'), []), {
      kind: 'relay',
      scrubBody: false,
      decode: null,
    });
  });

  test('a value injected: the body scrubbed, decoded first when compressed', () => {
    assert.deepEqual(planResponse('GET', 200, 'OK', h('Content-Type', 'text/plain'), value), {
      kind: 'relay',
      scrubBody: true,
      decode: null,
    });
    const gz = planResponse('GET', 200, 'OK', h('content-encoding', 'GZIP'), value);
    assert.deepEqual(gz, { kind: 'relay', scrubBody: true, decode: 'gzip' });
  });

  test('no body to scrub (HEAD, 204, 304) or a value too short to scrub: nothing to decode or refuse', () => {
    const zstd = h('Content-Encoding', 'zstd');
    for (const [m, s] of [
      ['HEAD', 200],
      ['GET', 204],
      ['GET', 304],
    ] as const) {
      assert.deepEqual(planResponse(m, s, 'x', zstd, value), {
        kind: 'relay',
        scrubBody: false,
        decode: null,
      });
    }
    assert.equal(planResponse('GET', 200, 'OK', zstd, [repl('abc')]).kind, 'relay');
  });

  test('refusals, VLT-3008: an encoding it cannot undo, a head node:http would not write', () => {
    const r = planResponse('GET', 200, 'OK', h('Content-Encoding', 'zstd'), value);
    assert.equal(r.kind === 'refuse' && r.error.code, 'VLT-3008');
    assert.equal(planResponse('GET', 200, 'O\x01K', h(), []).kind, 'refuse');
    assert.equal(planResponse('GET', 200, 'OK', h('Bad Name', 'x'), []).kind, 'refuse');
  });
});

test('upgradeDrops: no WebSocket extension is offered when frames must be scrubbed', () => {
  assert.deepEqual(upgradeDrops([]), []);
  assert.deepEqual(upgradeDrops([repl('s3cret-value')]), ['sec-websocket-extensions']);
});

// Node's own parser reads the refusal, as a client would.
const { HTTPParser } = createRequire(import.meta.url)('_http_common') as {
  HTTPParser: {
    new (): {
      initialize(t: number, r: object, m: number, l: number): void;
      execute(d: Buffer): number | Error;
      [k: number]: unknown;
    };
    RESPONSE: number;
    kOnHeadersComplete: number;
    kOnBody: number;
  };
};

describe('rawError: a refusal on a bare socket', () => {
  async function refusal(err: VaultError) {
    const socket = new PassThrough();
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise((done) => socket.on('end', done));
    rawError(socket, err);
    await ended;
    const p = new HTTPParser();
    p.initialize(HTTPParser.RESPONSE, {}, 0, 0);
    let status = 0;
    let raw: string[] = [];
    const body: Buffer[] = [];
    p[HTTPParser.kOnHeadersComplete] = (...a: unknown[]) => {
      status = a[5] as number;
      raw = a[2] as string[];
      return 0;
    };
    p[HTTPParser.kOnBody] = (b: Buffer) => body.push(Buffer.from(b));
    const n = p.execute(Buffer.concat(chunks));
    assert.ok(!(n instanceof Error));
    return { status, headers: new RawHeaders(raw), body: Buffer.concat(body).toString('utf8') };
  }

  test('status, code, length of the body in bytes, and the connection closed', async () => {
    const r = await refusal(
      new VaultError('VLT-2046', 'Malformed reference in header X: "vault://é".'),
    );
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('x-vault-error'), 'VLT-2046');
    assert.equal(r.headers.get('connection'), 'close');
    assert.equal(Number(r.headers.get('content-length')), Buffer.byteLength(r.body));
    assert.equal(r.body, 'vault-cli: VLT-2046: Malformed reference in header X: "vault://é".\n');
    assert.equal(r.headers.has('proxy-authenticate'), false);
  });

  test('no caller token: 407 with the challenge clients answer', async () => {
    const r = await refusal(new Unauthenticated());
    assert.equal(r.status, 407);
    assert.equal(r.headers.get('proxy-authenticate'), 'Basic realm="vault-cli"');
  });

  test('statusOf: the table, and 502 for any other host failure', () => {
    assert.equal(statusOf(new VaultError('VLT-2042')), 429);
    assert.equal(statusOf(new VaultError('VLT-2043')), 423);
    assert.equal(statusOf(new VaultError('VLT-2047')), 422);
    assert.equal(statusOf(new VaultError('VLT-3007')), 502);
  });
});
