// What the proxy of a sandboxed session counts as this machine (src/proxy/local.ts).
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import fc from 'fast-check';
import { confinedLookup, isLocalAddress, isLocalHost } from '../../src/proxy/local.js';

test('loopback, unspecified, link-local and IPv4-mapped forms are this machine', () => {
  for (const a of [
    '127.0.0.1',
    '127.8.9.10',
    '0.0.0.0',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '169.254.169.254',
    'fe80::1',
    'fe80::1%eth0',
  ]) {
    assert.equal(isLocalAddress(a), true, a);
  }
  for (const a of ['1.1.1.1', '10.0.0.1', '2606:4700::1111', '::ffff:8.8.8.8', 'localhost', '']) {
    assert.equal(isLocalAddress(a), false, a);
  }
});

test("every one of this machine's interface addresses is this machine", () => {
  for (const i of Object.values(networkInterfaces()).flat()) {
    if (i !== undefined) assert.equal(isLocalAddress(i.address), true, i.address);
  }
});

test('names are judged by what they resolve to; a name that does not resolve is not local', async () => {
  assert.equal(await isLocalHost('localhost'), true);
  assert.equal(await isLocalHost('127.0.0.1'), true);
  assert.equal(await isLocalHost('no-such-name.invalid'), false);
});

test('the connection lookup fails for a name that leads here, with its own code', async () => {
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
    confinedLookup('localhost', {}, (e) => resolve(e)),
  );
  assert.equal(err?.code, 'EVAULTLOCAL');
});

test('property: any string is judged without throwing', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (s) => {
      assert.equal(typeof isLocalAddress(s), 'boolean');
    }),
  );
});
