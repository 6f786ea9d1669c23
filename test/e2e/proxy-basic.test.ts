// References inside Basic credentials: `curl -u 'x-access-token:vault://GitHub/token'`
// base64-encodes the reference before the proxy sees it. The proxy decodes
// `Authorization: Basic`, fills the reference in the user or password part,
// encodes it again, with the same scope, host binding and audit as any fill;
// an echo of the filled credentials comes back as the client wrote them.
// Real curl, the real `vault-cli proxy`, a local HTTPS upstream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  curl as curlIn,
  proxyBench,
  type ProxyBench,
  type ProxyProcess,
  type Upstream,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('proxy: references inside Basic credentials', () => {
  const rig = new Rig();
  const token = `ghp_${hex(16)}`;
  const user = `robot-${hex(4)}`;
  const bound = `bound-${hex(12)}`;
  let bench: ProxyBench | undefined;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;

  /** curl -u CREDENTIALS through the proxy to the upstream's `path`, with -i. */
  function curl(credentials: string, path: string) {
    const args = ['-sS', '-i', '--noproxy', '', '--proxy', proxy.url, '--cacert', ourCa];
    const url = `https://localhost:${up.port}${path}`;
    return curlIn([...args, '-u', credentials, url], { PATH: process.env.PATH, HOME: rig.root });
  }

  /** The Authorization the upstream saw on the last request to `path`. */
  const seenAuth = (path: string) =>
    up.seen
      .filter((s) => s.url === path)
      .at(-1)
      ?.rawHeaders.find((_, i, a) => a[i - 1]?.toLowerCase() === 'authorization');

  before(async () => {
    bench = await proxyBench(rig, async () => {
      await rig.create();
      await rig.set('GitHub', token, 'token');
      await rig.set('Robot', user, 'user');
      await rig.set('Bound', bound, 'token');
      ok(await rig.owner(['entry', 'hosts', 'Bound', 'api.example.com']));
      await rig.set('Hidden', `hidden-${hex(8)}`, 'token');
      return rig.addAgent(
        'ci',
        ['GitHub', 'Robot', 'Bound'],
        ['--per-minute', '100', '--per-hour', '100'],
      );
    });
    ({ up, proxy, ourCa } = bench);
  });
  after(async () => {
    await bench?.close();
    await rig.dispose();
  });

  test('curl -u x-access-token:vault://GitHub/token: the upstream gets the real token, the client its own reference back', async () => {
    const r = await curl('x-access-token:vault://GitHub/token', '/password');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^HTTP\/1\.1 200 /);
    assert.equal(seenAuth('/password'), `Basic ${b64(`x-access-token:${token}`)}`);
    // The upstream echoes the Authorization it got: the client sees what it wrote.
    const written = `Basic ${b64('x-access-token:vault://GitHub/token')}`;
    assert.ok(r.stdout.includes(`you sent: ${written}\n`), r.stdout);
    assert.ok(!r.stdout.includes(b64(`x-access-token:${token}`)));
    assert.ok(!r.stdout.includes(token));
    const fills = (await auditRecords(rig)).filter(
      (a) => a.action === 'fill' && a.entry === 'GitHub',
    );
    assert.equal(fills.length, 1);
    assert.equal(fills[0]?.outcome, 'ok');
    assert.equal(fills[0]?.actor, 'cli:ci');
  });

  test('a reference in the user part, and one in each part: both filled in one request', async () => {
    const r = await curl('vault://Robot/user:vault://GitHub/token', '/both');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seenAuth('/both'), `Basic ${b64(`${user}:${token}`)}`);
  });

  test('Basic credentials without a reference go on exactly as written', async () => {
    const r = await curl('alice:s3cret', '/plain');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seenAuth('/plain'), `Basic ${b64('alice:s3cret')}`);
  });

  test('the same rules as any fill: an entry bound elsewhere is VLT-2045, one out of scope VLT-2041; nothing goes upstream', async () => {
    const seen = up.seen.length;
    const elsewhere = await curl('x:vault://Bound/token', '/bound');
    assert.match(elsewhere.stdout, /\r\nHTTP\/1\.1 403 VLT-2045 /, elsewhere.stdout);
    assert.match(elsewhere.stdout, /\r\nX-Vault-Error: VLT-2045\r\n/);
    const hidden = await curl('x:vault://Hidden/token', '/hidden');
    assert.match(hidden.stdout, /\r\nHTTP\/1\.1 403 VLT-2041 /, hidden.stdout);
    assert.equal(up.seen.length, seen, 'nothing reached the upstream');
    assert.ok(!elsewhere.stdout.includes(bound));
  });
});
