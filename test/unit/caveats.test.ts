// Request caveats (issue 40): the rule parser and the path matcher, by
// example and by property: against a reference glob (a regular expression),
// and against three ways a server may read a path (decode then resolve dot
// segments, resolve then decode, merge slashes first), none of which may land
// outside what a rule allowed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  matchesCaveat,
  normalisePath,
  onlyNarrows,
  parseCaveat,
  requestAllowed,
  showCaveat,
  type Caveat,
} from '../../src/core/caveats.js';

const parsed = (rule: string): Caveat => {
  const c = parseCaveat(rule);
  if ('problem' in c) throw new Error(`${rule}: ${c.problem}`);
  return c;
};

test('rules parse to one written form; what is not a rule says why', () => {
  assert.equal(showCaveat(parsed('GET /repos/acme/**')), 'GET /repos/acme/**');
  assert.equal(showCaveat(parsed('  *   /  ')), '* /');
  assert.deepEqual(parsed('POST /repos/*/issues').segments, ['repos', '*', 'issues']);
  for (const bad of [
    '',
    'GET',
    '/repos',
    'get /repos',
    'GET repos',
    'GET /repos//acme',
    'GET /repos/../acme',
    'GET /repos/./acme',
    'GET /repos/%61cme',
    'GET /repos/a*b',
    'GET /repos/acme?x=1',
    'GET /repos/acme#f',
    'GET /repos/acme;x',
    'GET /repos\\acme',
    'GET /a /b',
    `GET /${'a'.repeat(600)}`,
  ]) {
    assert.ok('problem' in parseCaveat(bad), bad);
  }
});

test('the glob: * one non-empty segment, ** any number (none included), literals exact', () => {
  const allow = (rule: string, target: string, method = 'GET') =>
    requestAllowed([rule], method, target);
  assert.ok(allow('GET /repos/acme/**', '/repos/acme'));
  assert.ok(allow('GET /repos/acme/**', '/repos/acme/x'));
  assert.ok(allow('GET /repos/acme/**', '/repos/acme/x/pulls?state=open'));
  assert.ok(!allow('GET /repos/acme/**', '/repos/acmex'));
  assert.ok(!allow('GET /repos/acme/**', '/repos/ACME/x'), 'case-sensitive');
  assert.ok(!allow('GET /repos/acme/**', '/repos/acme/x', 'DELETE'));
  assert.ok(allow('* /repos/acme/**', '/repos/acme/x', 'DELETE'));
  assert.ok(allow('GET /repos/*/x', '/repos/acme/x'));
  assert.ok(!allow('GET /repos/*/x', '/repos/x'));
  assert.ok(!allow('GET /repos/*/x', '/repos/a/b/x'));
  assert.ok(allow('GET /a/**/z', '/a/z'));
  assert.ok(allow('GET /a/**/z', '/a/b/c/z'));
  assert.ok(allow('GET /', '/'));
  assert.ok(!allow('GET /', '/x'));
  assert.ok(allow('GET /repos/acme/**', '/repos/acme/x/'), 'a trailing slash');
});

test('traversal and encoding tricks never pass', () => {
  const rule = ['GET /repos/acme/**'];
  for (const t of [
    '/repos/acme/../other',
    '/repos/acme/x/../../other/y',
    '/repos/acme/%2e%2e/other',
    '/repos/acme/%2E%2e/other',
    '/repos/acme/.%2e/other',
    '/repos/acme%2f..%2fother',
    '/repos/acme/x%2f..%2f..%2fother',
    '/repos/acme/%252e%252e/other',
    '/repos/acme//../other',
    '/repos/acme/..;/other',
    '/repos/acme/x%5c..%5cother',
    '/repos/acme/%00',
    '/repos/acme/%zz',
    '/repos/acme/%',
    'repos/acme/x',
    '*',
    'https://api.github.com/repos/acme/x',
    '/../repos/acme/x',
  ]) {
    assert.ok(!requestAllowed(rule, 'GET', t), t);
  }
  // Dot segments inside the allowed tree resolve inside it.
  assert.ok(requestAllowed(rule, 'GET', '/repos/acme/x/../y'));
  assert.ok(requestAllowed(rule, 'GET', '/repos/other/../acme/y'));
  assert.deepEqual(normalisePath('/a/./b/%7e/../c'), ['a', 'b', 'c']);
});

test('onlyNarrows: from none to some, and keeping a subset, narrow; anything else loosens', () => {
  assert.ok(onlyNarrows(null, ['GET /a/**']));
  assert.ok(onlyNarrows(['GET /a/**', 'GET /b'], ['GET /b']));
  assert.ok(!onlyNarrows(['GET /b'], ['GET /b', 'GET /a/**']));
  assert.ok(!onlyNarrows(['GET /b'], null));
  assert.ok(!onlyNarrows(['GET /b'], []));
  assert.ok(onlyNarrows(null, null));
});

/** Segments drawn from a small alphabet, so patterns and paths meet often. */
const segment = fc.constantFrom('a', 'b', 'acme', 'repos', 'x-1', '~u', '@');
const patternSeg = fc.oneof(segment, fc.constant('*'), fc.constant('**'));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The glob as a regular expression over `/seg/seg`, the reference the matcher must agree with. */
function reference(pattern: readonly string[], path: readonly string[]): boolean {
  const re = pattern
    .map((s) => (s === '**' ? '(?:/[^/]+)*' : s === '*' ? '/[^/]+' : `/${escape(s)}`))
    .join('');
  return new RegExp(`^${re}$`).test(path.map((s) => `/${s}`).join(''));
}

test('property: the matcher agrees with the reference glob', () => {
  fc.assert(
    fc.property(
      fc.array(patternSeg, { maxLength: 7 }),
      fc.array(segment, { maxLength: 9 }),
      (pattern, path) => {
        const c: Caveat = { method: '*', segments: pattern };
        assert.equal(matchesCaveat(c, 'GET', path), reference(pattern, path));
        // Through the parser and the normaliser as a request reaches them.
        const rule = `GET /${pattern.join('/')}`;
        assert.equal(requestAllowed([rule], 'GET', `/${path.join('/')}`), reference(pattern, path));
      },
    ),
    { numRuns: 3000 },
  );
});

test('property: the parser never throws, and what it accepts reads back the same', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (rule) => {
      const c = parseCaveat(rule);
      if ('problem' in c) return;
      const again = parseCaveat(showCaveat(c));
      assert.deepEqual(again, c);
    }),
    { numRuns: 3000 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (target) => {
      const p = normalisePath(target);
      if (p !== null)
        for (const s of p) assert.ok(s !== '' && s !== '.' && s !== '..' && !s.includes('/'));
    }),
    { numRuns: 3000 },
  );
});

/** Tokens a path trick is made of. */
const trick = fc.constantFrom(
  '/',
  '//',
  '.',
  '..',
  '%2e',
  '%2E',
  '%2f',
  '%2F',
  '%5c',
  '%25',
  '%00',
  ';',
  '\\',
  '?',
  'repos',
  'acme',
  'other',
  'x',
);

/** RFC 3986 remove_dot_segments over `/`-split segments (empty ones kept). */
function removeDots(segs: readonly string[]): string[] | null {
  const out: string[] = [];
  for (const s of segs) {
    if (s === '.') continue;
    if (s === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(s);
  }
  return out;
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Where three kinds of server take a path: each lands under /repos/acme, or the request is unreadable. */
function serverReadings(target: string): (string[] | null)[] {
  const path = target.split(/[?#]/)[0] as string;
  const raw = path.slice(1).split('/');
  // Decode whole, split again (a decoded %2f is a slash), resolve dots; \ as / (IIS).
  const decodedFirst = removeDots(safeDecode(path).replace(/\\/g, '/').slice(1).split('/'));
  // Resolve dots as written, then decode each segment.
  const dotsFirst = removeDots(raw)?.map(safeDecode) ?? null;
  // Merge slashes first (nginx), strip ;params (Tomcat), decode, resolve.
  const merged = removeDots(
    raw
      .filter((s) => s !== '')
      .map((s) => safeDecode(s.split(';')[0] as string))
      .flatMap((s) => s.split(/[/\\]/))
      .filter((s) => s !== ''),
  );
  return [decodedFirst, dotsFirst, merged];
}

test('property: a path the rule allows is under /repos/acme however a server reads it', () => {
  fc.assert(
    fc.property(fc.array(trick, { maxLength: 12 }), (tokens) => {
      const target = `/repos/acme/${tokens.join('')}`;
      const alt = `/${tokens.join('')}`;
      for (const t of [target, alt]) {
        if (!requestAllowed(['GET /repos/acme/**'], 'GET', t)) continue;
        for (const r of serverReadings(t)) {
          if (r === null) continue;
          const segs = r.filter((s, i) => s !== '' || i < r.length - 1);
          assert.deepEqual(segs.slice(0, 2), ['repos', 'acme'], `${t} read as /${r.join('/')}`);
        }
      }
    }),
    { numRuns: 5000 },
  );
});

test('a pattern of many ** against a long path is pattern x path work, not backtracking', () => {
  const pattern = `GET /${Array.from({ length: 60 }, () => '**/a').join('/')}/b`;
  const path = `/${Array.from({ length: 2000 }, () => 'a').join('/')}`;
  assert.equal(requestAllowed([pattern], 'GET', path), false);
  assert.equal(requestAllowed([pattern], 'GET', `${path}/b`), true);
});
