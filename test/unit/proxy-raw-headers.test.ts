// The raw-headers view and the one head writer: every list operation keeps
// order, case and duplicates of what it does not touch; a written head reads
// back, through Node's own HTTP parser (the one at both ends of every hop),
// as exactly what was written; and no value can add a header line.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { UnsafeHead, requestLine, serializeHead, statusLine } from '../../src/proxy/head.js';
import { RawHeaders } from '../../src/proxy/raw-headers.js';

const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 200);

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const name = fc.oneof(
  fc.constantFrom(
    'Host',
    'host',
    'X-Dup',
    'x-dup',
    'X-DUP',
    'Connection',
    'Upgrade',
    'TE',
    'Keep-Alive',
  ),
  fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}$/),
);
/** A value as a parser hands it over: no line break, no surrounding whitespace. */
const value = fc.stringMatching(
  /^[\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]{0,30}[\x21-\x7e\x80-\xff])?$/,
);
const pairs = fc.array(fc.tuple(name, fc.oneof(value, fc.constant(''))), { maxLength: 12 });
const flat = (p: readonly (readonly [string, string])[]) => p.flatMap(([n, v]) => [n, v]);

describe('RawHeaders: a view over rawHeaders', () => {
  test('iterates the pairs as given: order, case and duplicates', () => {
    fc.assert(
      fc.property(pairs, (p) => {
        const h = new RawHeaders(flat(p));
        assert.deepEqual([...h], p);
        assert.equal(h.size, p.length);
      }),
      { numRuns: runs },
    );
  });

  test('all/get/has find a name in any case; delete drops only it; nothing changes the list underneath', () => {
    fc.assert(
      fc.property(pairs, name, (p, n) => {
        const raw = flat(p);
        const copy = [...raw];
        const h = new RawHeaders(raw);
        const lower = n.toLowerCase();
        const mine = p.filter(([k]) => k.toLowerCase() === lower);
        assert.deepEqual(
          h.all(n.toUpperCase()),
          mine.map(([, v]) => v),
        );
        assert.equal(h.has(n), mine.length > 0);
        assert.equal(h.get(n), mine.length === 0 ? null : mine.map(([, v]) => v).join(', '));
        assert.deepEqual(
          [...h.delete(n)],
          p.filter(([k]) => k.toLowerCase() !== lower),
        );
        assert.deepEqual(raw, copy);
      }),
      { numRuns: runs },
    );
  });

  test('set (an injected header) wins: exactly one of that name, last, with the rest untouched', () => {
    fc.assert(
      fc.property(pairs, name, value, (p, n, v) => {
        const out = [...new RawHeaders(flat(p)).set(n, v)];
        const lower = n.toLowerCase();
        assert.deepEqual(out.at(-1), [n, v]);
        assert.equal(out.filter(([k]) => k.toLowerCase() === lower).length, 1);
        assert.deepEqual(
          out.slice(0, -1),
          p.filter(([k]) => k.toLowerCase() !== lower),
        );
      }),
      { numRuns: runs },
    );
  });

  test('withoutHopByHop drops hop-by-hop and Connection-named headers, and keeps the rest as they came', () => {
    const connectionList = fc
      .array(fc.oneof(name, fc.constant(' ')), { maxLength: 4 })
      .map((ns) => ns.join(', '));
    const withConnection = fc
      .tuple(pairs, connectionList)
      .map(([p, c]) => [...p, ['Connection', c] as [string, string]]);
    fc.assert(
      fc.property(withConnection, fc.boolean(), (p, keepUpgrade) => {
        const named = new Set(
          p
            .filter(([k]) => k.toLowerCase() === 'connection')
            .flatMap(([, v]) => v.split(','))
            .map((s) => s.trim().toLowerCase()),
        );
        const kept = p.filter(([k]) => {
          const l = k.toLowerCase();
          return (keepUpgrade && l === 'upgrade') || !(HOP.has(l) || named.has(l));
        });
        const expected = keepUpgrade ? [...kept, ['Connection', 'Upgrade']] : kept;
        assert.deepEqual([...new RawHeaders(flat(p)).withoutHopByHop(keepUpgrade)], expected);
      }),
      { numRuns: runs },
    );
  });

  test('mapValues changes values only; someValue sees every value and no name', () => {
    const h = new RawHeaders(['A', 'x', 'vault://n', 'y', 'a', 'z']);
    assert.deepEqual(h.mapValues((v, n) => `${n}=${v}`).toArray(), [
      'A',
      'A=x',
      'vault://n',
      'vault://n=y',
      'a',
      'a=z',
    ]);
    assert.equal(
      h.someValue((v) => v.includes('vault://')),
      false,
    );
    assert.equal(
      h.someValue((v) => v === 'z'),
      true,
    );
  });
});

// Node's own parser, as exchange.ts uses it: what a peer reads from the bytes.
interface ParserClass {
  new (): {
    initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
    execute(data: Buffer): number | Error;
    [k: number]: unknown;
  };
  readonly REQUEST: number;
  readonly RESPONSE: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
}
const { HTTPParser, methods } = createRequire(import.meta.url)('_http_common') as {
  HTTPParser: ParserClass;
  methods: string[];
};

interface Parsed {
  start: string;
  raw: string[];
}

function parse(bytes: Buffer, kind: 'request' | 'response'): Parsed {
  const p = new HTTPParser();
  p.initialize(kind === 'request' ? HTTPParser.REQUEST : HTTPParser.RESPONSE, {}, 0, 0);
  let collected: string[] = [];
  let out: Parsed | null = null;
  p[HTTPParser.kOnHeaders] = (h: string[]) => (collected = [...collected, ...h]);
  p[HTTPParser.kOnHeadersComplete] = (...a: unknown[]) => {
    const [, , headers, method, url, status, message] = a as [
      number,
      number,
      string[] | undefined,
      number,
      string,
      number,
      string,
    ];
    const start =
      kind === 'request'
        ? requestLine(methods[method] as string, url)
        : statusLine(status, message);
    out = { start, raw: headers ?? collected };
    return 1;
  };
  const n = p.execute(bytes);
  if (n instanceof Error) throw n;
  if (out === null) throw new Error('no head parsed');
  return out;
}

/** Names a parser would take as framing: kept out of lists that must read back whole. */
const notFraming = (p: [string, string][]) =>
  p.filter(([n]) => !['content-length', 'transfer-encoding'].includes(n.toLowerCase()));

const startLines = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH'),
      fc.stringMatching(/^\/[\x21-\x7e]{0,30}$/),
    )
    .map(([m, t]) => ({ kind: 'request' as const, line: requestLine(m, t) })),
  fc
    .tuple(
      fc.integer({ min: 200, max: 599 }),
      fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,20}[A-Za-z]$/),
    )
    .map(([s, m]) => ({ kind: 'response' as const, line: statusLine(s, m) })),
);

describe('serializeHead: the one head writer', () => {
  test('parse(serialize(h)) is h: start line, order, case and duplicates, read by Node’s parser', () => {
    fc.assert(
      fc.property(startLines, pairs.map(notFraming), (start, p) => {
        const bytes = serializeHead(start.line, new RawHeaders(flat(p)));
        const back = parse(bytes, start.kind);
        assert.equal(back.start, start.line);
        assert.deepEqual(back.raw, flat(p));
      }),
      { numRuns: runs },
    );
  });

  test('serialize(parse(x)) is x for a head as written on the wire', () => {
    fc.assert(
      fc.property(startLines, pairs.map(notFraming), (start, p) => {
        const wire = Buffer.from(
          `${start.line}\r\n${p.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`,
          'latin1',
        );
        const back = parse(wire, start.kind);
        assert.deepEqual(serializeHead(back.start, new RawHeaders(back.raw)), wire);
      }),
      { numRuns: runs },
    );
  });

  test('no header line can be injected: any value either is refused or reads back as one header', () => {
    const anyValue = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc
        .tuple(value, fc.constantFrom('\r\n', '\n', '\r', '\0', '\r\n\r\n'), value)
        .map(([a, brk, b]) => `${a}${brk}X-Injected: ${b}`),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(name, anyValue), { maxLength: 6 }), (p) => {
        let bytes: Buffer;
        try {
          bytes = serializeHead('GET / HTTP/1.1', new RawHeaders(flat(p)));
        } catch (err) {
          assert.ok(err instanceof UnsafeHead);
          assert.ok(p.some(([, v]) => /[\r\n\0]/.test(v)));
          return;
        }
        assert.ok(!p.some(([, v]) => /[\r\n\0]/.test(v)));
        const text = bytes.toString('latin1');
        // One line per header, and the head ends only at its end.
        assert.equal(text.split('\r\n').length, p.length + 3);
        assert.equal(text.indexOf('\r\n\r\n'), text.length - 4);
      }),
      { numRuns: runs },
    );
  });

  test('a name that is not a token, or a line break in the start line, is refused', () => {
    assert.throws(() => serializeHead('GET / HTTP/1.1', [['X-A: b\r\nX-B', 'c']]), UnsafeHead);
    assert.throws(() => serializeHead('GET / HTTP/1.1', [['X A', 'c']]), UnsafeHead);
    assert.throws(() => serializeHead('GET /\r\nX: y HTTP/1.1', []), UnsafeHead);
    assert.deepEqual(
      serializeHead(statusLine(200, 'OK'), []),
      Buffer.from('HTTP/1.1 200 OK\r\n\r\n'),
    );
  });
});
