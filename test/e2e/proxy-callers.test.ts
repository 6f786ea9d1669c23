// Callers named by the proxy URL's user-info: real clients (curl, Node fetch,
// Python urllib) given http://vault:<token>@127.0.0.1:<port> send the token as
// Proxy-Authorization, and one `vault-cli proxy` fills each request for its
// own caller: that caller's scope, that caller's audit actor. The token never
// goes upstream, into the client's output or into the proxy's stderr.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { proxyUrl } from '../../src/proxy/caller.js';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  makeTestCa,
  startProxy,
  tunnelExchange,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

interface Out {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What every client printed, for the last test to search. */
const outputs: string[] = [];

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Out> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('latin1')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      outputs.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every way a token could be seen: as written, percent-encoded, and inside Basic credentials. */
function traces(token: string): string[] {
  return [token, encodeURIComponent(token), Buffer.from(`vault:${token}`).toString('base64')];
}

function assertNoTrace(text: string, token: string, where: string): void {
  for (const t of traces(token)) assert.ok(!text.includes(t), `${where} holds the token`);
}

describe('proxy: callers by the proxy URL user-info', () => {
  const rig = new Rig();
  const alphaSecret = `alpha-${hex(12)}`;
  const betaSecret = `beta-${hex(12)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  /** Session tokens, as `run` would mint them, for two agents. */
  let alpha: string;
  let beta: string;
  let env: NodeJS.ProcessEnv;

  const client = () => ({
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: rig.env },
    autoStart: false,
  });
  const session = async (agent: string) =>
    (await call(client(), 'session.start', { passphrase: PASSPHRASE, agent, scope: [] })).token;

  const curl = (token: string | null, path: string, ref: string) =>
    run(
      'curl',
      [
        '-sS',
        '-D',
        '-',
        '--proxy',
        token === null ? proxy.url : proxyUrl(proxy.port, token),
        '--cacert',
        ourCa,
        '--noproxy',
        '',
        '-H',
        `Authorization: Bearer ${ref}`,
        `https://localhost:${up.port}${path}`,
      ],
      env,
    );

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('Alpha', alphaSecret, 'token');
    await rig.set('Beta', betaSecret, 'token');
    // The init agent of the standalone proxy can read neither entry.
    await rig.set('Other', `other-${hex(8)}`, 'token');
    const init = await rig.addAgent('init', ['Other'], roomy);
    await rig.addAgent('alpha', ['Alpha'], roomy);
    await rig.addAgent('beta', ['Beta'], roomy);
    alpha = await session('alpha');
    beta = await session('beta');
    proxy = await startProxy(rig, init, ca);
    ourCa = ok(await rig.agent(['proxy', 'ca'], init)).trim();
    env = {
      PATH: process.env.PATH,
      HOME: rig.root,
      NODE_USE_ENV_PROXY: '1',
      NODE_EXTRA_CA_CERTS: ourCa,
      SSL_CERT_FILE: ourCa,
      NO_PROXY: '',
      no_proxy: '',
    };
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('curl --proxy http://vault:TOKEN@...: filled for that caller, only the reference comes back', async () => {
    const r = await curl(alpha, '/curl', 'vault://Alpha/token');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(up.seen.at(-1)?.url, '/curl');
    assert.equal(up.header('authorization').at(-1), `Bearer ${alphaSecret}`);
    assert.match(r.stdout, /you sent: Bearer vault:\/\/Alpha\/token\n/);
    assert.ok(!r.stdout.includes(alphaSecret));
  });

  test('Node fetch, HTTPS_PROXY with user-info and NODE_USE_ENV_PROXY=1: Node 24 sends it on CONNECT', async () => {
    const script = `
      const r = await fetch(process.argv[1], { headers: { authorization: 'Bearer vault://Beta/token' } });
      process.stdout.write(r.status + ' ' + (await r.text()));
    `;
    const r = await run(
      process.execPath,
      ['--input-type=module', '-e', script, `https://localhost:${up.port}/fetch`],
      { ...env, HTTPS_PROXY: proxyUrl(proxy.port, beta) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '200 you sent: Bearer vault://Beta/token\n');
    assert.equal(up.seen.at(-1)?.url, '/fetch');
    assert.equal(up.header('authorization').at(-1), `Bearer ${betaSecret}`);
  });

  test('Python urllib with user-info in HTTPS_PROXY', async () => {
    const script = [
      'import sys, urllib.request',
      'req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer vault://Alpha/token"})',
      'r = urllib.request.urlopen(req)',
      'print(r.status, r.read().decode(), end="")',
    ].join('\n');
    const r = await run('python3', ['-c', script, `https://localhost:${up.port}/python`], {
      ...env,
      HTTPS_PROXY: proxyUrl(proxy.port, alpha),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '200 you sent: Bearer vault://Alpha/token\n');
    assert.equal(up.seen.at(-1)?.url, '/python');
    assert.equal(up.header('authorization').at(-1), `Bearer ${alphaSecret}`);
  });

  test('two sessions through one proxy: each has its own scope', async () => {
    const n = up.seen.length;
    const cross = await curl(beta, '/cross', 'vault://Alpha/token');
    assert.equal(cross.code, 0, cross.stderr);
    assert.match(cross.stdout, /\r\nHTTP\/1\.1 403 /);
    assert.match(cross.stdout, /\r\nx-vault-error: VLT-2041\r\n/i);
    const own = await curl(beta, '/own', 'vault://Beta/token');
    assert.match(own.stdout, /you sent: Bearer vault:\/\/Beta\/token\n/);
    // Without user-info the proxy acts for its init agent, who may read neither.
    const none = await curl(null, '/none', 'vault://Alpha/token');
    assert.match(none.stdout, /\r\nx-vault-error: VLT-2041\r\n/i);
    assert.deepEqual(
      up.seen.slice(n).map((s) => s.url),
      ['/own'],
    );
  });

  test('each fill is audited to its own caller', async () => {
    const fills = (await auditRecords(rig)).filter((a) => a.action === 'fill') as unknown as {
      actor: string;
      entry: string;
      host: string;
    }[];
    const by = (entry: string) =>
      new Set(fills.filter((f) => f.entry === entry).map((f) => f.actor));
    assert.deepEqual([...by('Alpha')], ['cli:alpha']);
    assert.deepEqual([...by('Beta')], ['cli:beta']);
    assert.ok(fills.every((f) => f.host === 'localhost'));
  });

  test('a revoked session token: 403 VLT-2040 at CONNECT, never retried as the init agent', async () => {
    const gone = await session('alpha');
    await call(client(), 'session.end', { token: gone });
    const n = up.seen.length;
    const r = await curl(gone, '/revoked', 'vault://Alpha/token');
    assert.notEqual(r.code, 0);
    assert.match(r.stdout, /^HTTP\/1\.1 403 /);
    assert.match(r.stdout, /\r\nx-vault-error: VLT-2040\r\n/i);
    assert.equal(up.seen.length, n);
    assertNoTrace(r.stdout + r.stderr, gone, 'the refusal');
  });

  test('a token the host does not know opens no tunnel, even for a request without a reference; audited', async () => {
    const bogus = `vlt_${hex(20)}`;
    const denied = async () =>
      (await auditRecords(rig)).filter((r) => r.action === 'denied' && r.outcome === 'VLT-2040')
        .length;
    const before = await denied();
    const n = up.seen.length;
    const connect = (token: string) =>
      new Promise<string>((resolve, reject) => {
        void import('node:net').then(({ connect }) => {
          const basic = Buffer.from(`vault:${token}`).toString('base64');
          const s = connect(proxy.port, '127.0.0.1', () =>
            s.write(
              `CONNECT localhost:${up.port} HTTP/1.1\r\nHost: localhost:${up.port}\r\n` +
                `Proxy-Authorization: Basic ${basic}\r\n\r\n`,
            ),
          );
          let out = '';
          s.on('data', (c: Buffer) => {
            out += c.toString('latin1');
            if (out.includes('\r\n\r\n') && out.startsWith('HTTP/1.1 200')) s.destroy();
          });
          s.on('close', () => resolve(out));
          s.on('error', reject);
        });
      });
    const refused = await connect(bogus);
    assert.match(refused, /^HTTP\/1\.1 403 /);
    assert.match(refused, /\r\nX-Vault-Error: VLT-2040\r\n/);
    assert.equal(await denied(), before + 1);
    // The same CONNECT with a token the host knows opens the tunnel.
    assert.match(await connect(alpha), /^HTTP\/1\.1 200 /);
    const plain = await run(
      'curl',
      ['-sS', '-D', '-', '--proxy', proxyUrl(proxy.port, bogus), '--noproxy', ''].concat(
        `http://localhost:${up.port}/no-reference`,
      ),
      env,
    );
    assert.match(plain.stdout, /^HTTP\/1\.1 403 /);
    assert.match(plain.stdout, /\r\n\r\nvault-cli: VLT-2040: /);
    assert.equal(up.seen.length, n);
    assertNoTrace(refused + plain.stdout + plain.stderr, bogus, 'the refusal');
  });

  test('Proxy-Authorization that is not Basic user:token: 407 with a challenge, nothing upstream', async () => {
    const n = up.seen.length;
    for (const bad of [
      'Bearer abc',
      'Basic !!!',
      `Basic ${Buffer.from('nopassword').toString('base64')}`,
    ]) {
      const raw = await new Promise<string>((resolve, reject) => {
        void import('node:net').then(({ connect }) => {
          const s = connect(proxy.port, '127.0.0.1', () =>
            s.write(
              `CONNECT localhost:${up.port} HTTP/1.1\r\nHost: localhost:${up.port}\r\n` +
                `Proxy-Authorization: ${bad}\r\n\r\n`,
            ),
          );
          let out = '';
          s.on('data', (c: Buffer) => (out += c.toString('latin1')));
          s.on('close', () => resolve(out));
          s.on('error', reject);
        });
      });
      assert.match(raw, /^HTTP\/1\.1 407 /, bad);
      assert.match(raw, /\r\nProxy-Authenticate: Basic realm="vault-cli"\r\n/);
      assert.match(raw, /\r\n\r\nvault-cli: VLT-2040: /);
    }
    assert.equal(up.seen.length, n);
  });

  test('inside a tunnel the tunnel’s caller holds: a Proxy-Authorization there is dropped, not obeyed', async () => {
    const caPem = readFileSync(ourCa, 'utf8');
    const n = up.seen.length;
    // A tunnel without credentials (the init agent), then a request claiming alpha's token.
    const basic = Buffer.from(`vault:${alpha}`).toString('base64');
    const out = await tunnelExchange(
      proxy.port,
      `localhost:${up.port}`,
      caPem,
      `GET /inner HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer vault://Alpha/token\r\n` +
        `Proxy-Authorization: Basic ${basic}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(out, /^HTTP\/1\.1 403 /);
    assert.match(out, /\r\nX-Vault-Error: VLT-2041\r\n/i);
    assert.equal(up.seen.length, n);
  });

  test('requireCaller, as run serves it: no user-info is 407 before anything goes upstream; with it, filled', async () => {
    const [{ startProxy: serve }, { Authority }, { VaultError }] = await Promise.all([
      import('../../src/proxy/server.js'),
      import('../../src/proxy/ca.js'),
      import('../../src/core/errors.js'),
    ]);
    const files = {
      cert: join(rig.root, 'session-ca', 'ca.pem'),
      bundle: join(rig.root, 'session-ca', 'bundle.pem'),
      systemRoots: '/etc/ssl/certs/ca-certificates.crt',
    };
    const callers: (string | null)[] = [];
    const p = await serve({
      port: 0,
      authority: Authority.ephemeral(files),
      upstreamCa: [readFileSync(ca.caFile, 'utf8')],
      requireCaller: true,
      resolve: async (refs, host, caller) => {
        callers.push(caller);
        if (caller === null) throw new VaultError('VLT-2040');
        const r = await call(client(), 'resolve', { token: caller, refs: [...refs], host });
        return r.values.map((v) => Buffer.from(v, 'base64'));
      },
    });
    try {
      const n = up.seen.length;
      const args = (proxy: string) => [
        ...['-sS', '-D', '-', '--proxy', proxy, '--cacert', files.cert, '--noproxy', ''],
        ...['-H', 'Authorization: Bearer vault://Alpha/token'],
        `https://localhost:${up.port}/required`,
      ];
      const bare = await run('curl', args(`http://127.0.0.1:${p.port}`), env);
      assert.notEqual(bare.code, 0);
      assert.match(bare.stdout, /^HTTP\/1\.1 407 /);
      assert.match(bare.stdout, /\r\nProxy-Authenticate: Basic realm="vault-cli"\r\n/);
      assert.match(bare.stderr, /407/);
      // Absolute form (plain HTTP) is held to the same rule.
      const plain = await run(
        'curl',
        ['-sS', '-D', '-', '--proxy', `http://127.0.0.1:${p.port}`, '--noproxy', ''].concat(
          `http://localhost:${up.port}/plain`,
        ),
        env,
      );
      assert.match(plain.stdout, /^HTTP\/1\.1 407 /);
      assert.match(plain.stdout, /\r\n\r\nvault-cli: VLT-2040: /);
      assert.equal(up.seen.length, n);
      assert.deepEqual(callers, []);

      const good = await run('curl', args(proxyUrl(p.port, alpha)), env);
      assert.equal(good.code, 0, good.stderr);
      assert.match(good.stdout, /you sent: Bearer vault:\/\/Alpha\/token\n/);
      assert.equal(up.header('authorization').at(-1), `Bearer ${alphaSecret}`);
      assert.deepEqual(callers, [alpha]);
    } finally {
      await p.close();
    }
  });

  test('the tokens are in no upstream request, client output or proxy stderr', () => {
    assert.ok(outputs.length >= 10);
    const upstream = up.seen
      .map((s) => `${s.method} ${s.url}\n${s.rawHeaders.join('\n')}\n${s.body.toString('latin1')}`)
      .join('\n');
    for (const t of [alpha, beta]) {
      assertNoTrace(upstream, t, 'upstream');
      assertNoTrace(proxy.stderr(), t, 'proxy stderr');
      assertNoTrace(outputs.join('\n'), t, 'client output');
    }
    assert.ok(!/proxy-authorization/i.test(upstream));
  });
});
