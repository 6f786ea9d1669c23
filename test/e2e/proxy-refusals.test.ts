// Refusals a user can see: curl never prints the body of a refused CONNECT,
// so the proxy puts the VLT code where `curl -v` shows it (the reason phrase,
// `Proxy-Status` per RFC 9209, `X-Vault-Error`), and hands every refusal to
// its owner's `onRefusal` hook (run prints them). Real curl, the real
// `vault-cli proxy` process, and the proxy as `run` starts it for a sandbox
// (confined to this machine's outside), in this process.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Authority } from '../../src/proxy/ca.js';
import { proxyUrl } from '../../src/proxy/caller.js';
import { startProxy as startInProcess, type RunningProxy } from '../../src/proxy/server.js';
import { hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  curl as curlIn,
  makeTestCa,
  proxyBench,
  type ProxyBench,
  type ProxyProcess,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

function curl(args: readonly string[], home: string) {
  const env = { PATH: process.env.PATH, HOME: home, NO_PROXY: '', no_proxy: '' };
  return curlIn(['--noproxy', '', ...args], env);
}

/** What `curl -v` printed of the proxy's answer to its CONNECT: the `< ` lines. */
const received = (verbose: string) =>
  verbose
    .split('\n')
    .filter((l) => l.startsWith('< '))
    .map((l) => l.slice(2).trimEnd());

describe('proxy refusals: the code where curl shows it', () => {
  const rig = new Rig();
  const secret = `refusal-${hex(12)}`;
  let bench: ProxyBench | undefined;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;

  before(async () => {
    bench = await proxyBench(rig, async () => {
      await rig.create();
      await rig.set('Bound', secret, 'token');
      ok(await rig.owner(['entry', 'hosts', 'Bound', 'api.example.com']));
      return rig.addAgent('a', ['Bound'], ['--per-minute', '100', '--per-hour', '100']);
    });
    ({ up, proxy, ourCa } = bench);
  });
  after(async () => {
    await bench?.close();
    await rig.dispose();
  });

  test('a CONNECT refused (a token the host does not know): curl -v shows VLT-2040 in the status line and headers', async () => {
    const unknown = `vlt_${hex(20)}`;
    const seen = up.seen.length;
    const r = await curl(
      [
        '-sS',
        '-v',
        '--proxy',
        proxyUrl(proxy.port, unknown),
        '--cacert',
        ourCa,
        `https://localhost:${up.port}/x`,
      ],
      rig.root,
    );
    assert.notEqual(r.code, 0);
    const lines = received(r.stderr);
    assert.match(lines[0] ?? '', /^HTTP\/1\.1 403 VLT-2040 /, r.stderr);
    assert.ok(lines.includes('X-Vault-Error: VLT-2040'), r.stderr);
    assert.ok(
      lines.some((l) =>
        /^Proxy-Status: vault-cli; error=http_request_denied; details="VLT-2040 [^"]*"$/.test(l),
      ),
      r.stderr,
    );
    assert.equal(up.seen.length, seen, 'nothing reached the upstream');
    assert.ok(!r.stderr.includes(unknown), 'the token is in no header the proxy sent');
  });

  test('a request refused inside the tunnel (an entry bound to another host): curl -sS shows 403 VLT-2045', async () => {
    const seen = up.seen.length;
    const r = await curl(
      [
        '-sS',
        '-i',
        '--proxy',
        proxy.url,
        '--cacert',
        ourCa,
        '-H',
        'Authorization: Bearer vault://Bound/token',
        `https://localhost:${up.port}/bound`,
      ],
      rig.root,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\r\nHTTP\/1\.1 403 VLT-2045 Destination host not allowed/);
    assert.match(
      r.stdout,
      /\r\nProxy-Status: vault-cli; error=http_request_denied; details="VLT-2045 /,
    );
    assert.match(r.stdout, /vault-cli: VLT-2045: /);
    assert.equal(up.seen.length, seen);
    assert.ok(!r.stdout.includes(secret));
  });
});

describe('proxy refusals: a sandboxed session’s proxy, its onRefusal hook', () => {
  const rig = new Rig();
  let proxy: RunningProxy;
  let up: Upstream;
  let caFile: string;
  let resolved = 0;
  const heard: { code: string; detail: string }[] = [];

  before(async () => {
    const ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    caFile = join(rig.root, 'session-ca.pem');
    const authority = Authority.ephemeral({
      cert: caFile,
      bundle: join(rig.root, 'session-bundle.pem'),
      systemRoots: ca.caFile,
    });
    // As run starts it for a sandbox: only its session's token, nothing on this machine.
    proxy = await startInProcess({
      port: 0,
      authority,
      upstreamCa: [ca.cert],
      requireCaller: true,
      sessionToken: 'vlt_session',
      confine: new Set(),
      resolve: () => {
        resolved++;
        return Promise.resolve([]);
      },
      onRefusal: (code, detail) => heard.push({ code, detail }),
    });
  });
  after(async () => {
    await proxy?.close();
    await up?.close();
    await rig.dispose();
  });

  test('a destination on this machine: curl -v shows 403 VLT-2053 and how to allow it; the hook hears it', async () => {
    const r = await curl(
      [
        '-sS',
        '-v',
        '--proxy',
        proxyUrl(proxy.port, 'vlt_session'),
        '--cacert',
        caFile,
        `https://localhost:${up.port}/`,
      ],
      rig.root,
    );
    assert.notEqual(r.code, 0);
    const lines = received(r.stderr);
    assert.match(
      lines[0] ?? '',
      /^HTTP\/1\.1 403 VLT-2053 localhost:[0-9]+ is on this machine/,
      r.stderr,
    );
    assert.ok(lines.includes('X-Vault-Error: VLT-2053'), r.stderr);
    assert.ok(
      lines.some((l) =>
        l.startsWith(
          'Proxy-Status: vault-cli; error=destination_ip_prohibited; details="VLT-2053 ',
        ),
      ),
      r.stderr,
    );
    const last = heard.at(-1);
    assert.equal(last?.code, 'VLT-2053');
    assert.match(last?.detail ?? '', new RegExp(`--allow-net localhost:${up.port}`));
    assert.equal(up.seen.length, 0);
  });

  test('another token: 403 VLT-2051 before the host is asked anything; the hook hears it, never the token', async () => {
    const other = `vlt_${hex(20)}`;
    const before = heard.length;
    const r = await curl(
      [
        '-sS',
        '-v',
        '--proxy',
        proxyUrl(proxy.port, other),
        '--cacert',
        caFile,
        '-H',
        'Authorization: Bearer vault://X/y',
        'https://example.com/',
      ],
      rig.root,
    );
    assert.notEqual(r.code, 0);
    assert.match(received(r.stderr)[0] ?? '', /^HTTP\/1\.1 403 VLT-2051 /, r.stderr);
    assert.equal(resolved, 0, 'nothing was resolved');
    assert.deepEqual(
      heard.slice(before).map((h) => h.code),
      ['VLT-2051'],
    );
    assert.ok(heard.every((h) => !h.detail.includes(other)));
  });
});

describe('proxy refusals: which are the vault’s (the hook’s `vault`), as run tells its owner', () => {
  const rig = new Rig();
  let proxy: RunningProxy;
  let caFile: string;
  let dead: number;
  const heard: { code: string; vault: boolean }[] = [];

  before(async () => {
    const ca = makeTestCa(rig.root);
    caFile = join(rig.root, 'session-ca.pem');
    const authority = Authority.ephemeral({
      cert: caFile,
      bundle: join(rig.root, 'session-bundle.pem'),
      systemRoots: ca.caFile,
    });
    // A port nothing listens on: every upstream connection to it fails.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    dead = (probe.address() as AddressInfo).port;
    await new Promise<void>((done) => probe.close(() => done()));
    proxy = await startInProcess({
      port: 0,
      authority,
      upstreamCa: [ca.cert],
      requireCaller: true,
      sessionToken: 'vlt_session',
      resolve: (refs) => Promise.resolve(refs.map(() => Buffer.from('stand-in value'))),
      onRefusal: (code, _detail, vault) => heard.push({ code, vault }),
    });
  });
  after(async () => {
    await proxy?.close();
    await rig.dispose();
  });

  const through = async (token: string | null, headers: readonly string[]) => {
    const before = heard.length;
    const url = token === null ? `http://127.0.0.1:${proxy.port}` : proxyUrl(proxy.port, token);
    const r = await curl(
      ['-sS', '-f', '--proxy', url, '--cacert', caFile, ...headers, `https://localhost:${dead}/`],
      rig.root,
    );
    assert.notEqual(r.code, 0, r.stderr);
    return heard.slice(before);
  };

  test('no proxy token: VLT-2040, not the vault’s (nothing could be filled)', async () => {
    assert.deepEqual(await through(null, []), [{ code: 'VLT-2040', vault: false }]);
  });

  test('an upstream that fails a request with no reference: VLT-3008, not the vault’s', async () => {
    assert.deepEqual(await through('vlt_session', []), [{ code: 'VLT-3008', vault: false }]);
  });

  test('an upstream that fails a request a value went into: VLT-3008, the vault’s', async () => {
    const ref = ['-H', 'Authorization: Bearer vault://X/y'];
    assert.deepEqual(await through('vlt_session', ref), [{ code: 'VLT-3008', vault: true }]);
  });

  test('another token than the session’s: VLT-2051, the vault’s', async () => {
    assert.deepEqual(await through(`vlt_${hex(20)}`, []), [{ code: 'VLT-2051', vault: true }]);
  });
});
