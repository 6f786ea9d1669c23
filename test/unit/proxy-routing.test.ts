// Where a request goes, decided from what the client wrote: CONNECT targets,
// absolute-form URLs and origin-form requests inside a tunnel, and the
// refusals (an invalid authority, the proxy itself, the wrong form).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VaultError } from '../../src/core/errors.js';
import { routeConnect, routeRequest, type Tunnel } from '../../src/proxy/routing.js';

const runs = Number(process.env.VAULT_PROPERTY_RUNS ?? 200);
const OWN = 41983;
const codeOf = (r: unknown) => (r instanceof VaultError ? r.code : null);
const noCaller = () => null;

describe('routeConnect', () => {
  test('a valid target is its host and port; host names are lower-cased, brackets dropped', () => {
    assert.deepEqual(routeConnect('API.Example.com:443', OWN), {
      host: 'api.example.com',
      port: 443,
    });
    assert.deepEqual(routeConnect('[::1]:8443', OWN), { host: '::1', port: 8443 });
    assert.deepEqual(routeConnect('127.0.0.1:1', OWN), { host: '127.0.0.1', port: 1 });
  });

  test('no port, a bad port or an odd host: VLT-2048', () => {
    for (const t of [
      'example.com',
      'example.com:0',
      'example.com:65536',
      'a b:443',
      'user@h:443',
      '-a.com:443',
      '[zz]:443',
      '',
    ]) {
      assert.equal(codeOf(routeConnect(t, OWN)), 'VLT-2048', t);
    }
  });

  test('the proxy itself, however loopback is spelled: VLT-2049; another local port is a target', () => {
    for (const t of [`127.0.0.1:${OWN}`, `localhost:${OWN}`, `[::1]:${OWN}`, `127.9.9.9:${OWN}`]) {
      assert.equal(codeOf(routeConnect(t, OWN)), 'VLT-2049', t);
    }
    assert.deepEqual(routeConnect(`localhost:${OWN + 1}`, OWN), {
      host: 'localhost',
      port: OWN + 1,
    });
  });
});

describe('routeRequest', () => {
  const tunnel: Tunnel = { tls: true, host: 'api.example.com', port: 443, caller: 'tok' };

  test('inside a tunnel: origin form goes to the tunnel, for its caller, path as written', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\/[\x21-\x7e]{0,40}$/), (path) => {
        let asked = 0;
        const r = routeRequest(path, tunnel, OWN, () => (asked++, 'other'));
        assert.deepEqual(r, { dest: tunnel, path, caller: 'tok' });
        // The tunnel's caller, never the request's own Proxy-Authorization.
        assert.equal(asked, 0);
      }),
      { numRuns: runs },
    );
    assert.deepEqual(routeRequest('*', tunnel, OWN, noCaller), {
      dest: tunnel,
      path: '*',
      caller: 'tok',
    });
  });

  test('inside a tunnel, absolute form is refused: VLT-2048', () => {
    assert.equal(codeOf(routeRequest('https://evil.example/x', tunnel, OWN, noCaller)), 'VLT-2048');
  });

  test('outside a tunnel: the absolute-form URL, default ports, the path made origin-form', () => {
    assert.deepEqual(
      routeRequest('http://Example.com', undefined, OWN, () => 'c'),
      {
        dest: { tls: false, host: 'example.com', port: 80 },
        path: '/',
        caller: 'c',
      },
    );
    assert.deepEqual(routeRequest('HTTPS://example.com:8443/a?b#c', undefined, OWN, noCaller), {
      dest: { tls: true, host: 'example.com', port: 8443 },
      path: '/a?b#c',
      caller: null,
    });
    const r = routeRequest('http://example.com?q=1', undefined, OWN, noCaller);
    assert.equal(r instanceof VaultError ? null : r.path, '/?q=1');
  });

  test('outside a tunnel: origin form or another scheme is not for this proxy (VLT-2049), a bad host VLT-2048', () => {
    assert.equal(codeOf(routeRequest('/index.html', undefined, OWN, noCaller)), 'VLT-2049');
    assert.equal(codeOf(routeRequest('ftp://example.com/', undefined, OWN, noCaller)), 'VLT-2049');
    assert.equal(
      codeOf(routeRequest(`http://localhost:${OWN}/`, undefined, OWN, noCaller)),
      'VLT-2049',
    );
    assert.equal(
      codeOf(routeRequest('http://ex ample.com/', undefined, OWN, noCaller)),
      'VLT-2048',
    );
    assert.equal(
      codeOf(routeRequest('http://a@example.com/', undefined, OWN, noCaller)),
      'VLT-2048',
    );
  });

  test('the caller is read only for a URL that routes, and its refusal is the answer', () => {
    let asked = 0;
    const refuse = () => (asked++, new VaultError('VLT-2040'));
    assert.equal(codeOf(routeRequest('http://ex ample.com/', undefined, OWN, refuse)), 'VLT-2048');
    assert.equal(asked, 0);
    assert.equal(codeOf(routeRequest('http://example.com/', undefined, OWN, refuse)), 'VLT-2040');
    assert.equal(asked, 1);
  });
});
