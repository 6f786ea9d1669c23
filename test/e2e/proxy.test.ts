// The proxy end to end: real clients (curl, Node fetch, Python urllib, git, a
// WebSocket client) through the real `vault-cli proxy` process to local HTTPS
// upstreams. Each asserts that the upstream got the value and that what the
// client printed holds only the reference.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CA_BUNDLE_VARS } from '../../src/proxy/env.js';
import { hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  makeTestCa,
  startProxy,
  wsAccept,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];
/** NODE_USE_ENV_PROXY (fetch and WebSocket through HTTPS_PROXY) arrived in Node 24. */
const envProxy =
  Number(process.versions.node.split('.')[0]) >= 24
    ? {}
    : { skip: 'NODE_USE_ENV_PROXY needs Node 24' };

interface Out {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Out> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** The variables `vault-cli proxy env` prints, as an object. */
function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.trim().split('\n')) {
    const m = /^export ([A-Za-z0-9_]+)=(.*)$/.exec(line);
    assert.ok(m, line);
    const v = m[2] as string;
    out[m[1] as string] = v.startsWith("'") ? v.slice(1, -1).replaceAll(`'\\''`, "'") : v;
  }
  return out;
}

describe('proxy: real clients through the real proxy', () => {
  const rig = new Rig();
  const secret = `s3cr3t-${hex(12)}`;
  const ref = 'vault://Test API/token';
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let token: string;
  /** The environment a tool gets from `proxy env`, pointed at this proxy. */
  let toolEnv: NodeJS.ProcessEnv;

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('Test API', secret, 'token');
    token = await rig.addAgent('tools', ['Test API'], roomy);
    proxy = await startProxy(rig, token, ca);
    const env = parseEnv(
      ok(await rig.agent(['proxy', 'env', '--port', String(proxy.port)], token)),
    );
    toolEnv = {
      PATH: process.env.PATH,
      HOME: rig.root,
      ...env,
      // The upstream is on this machine; the printed NO_PROXY would send tools around the proxy.
      NO_PROXY: '',
      no_proxy: '',
    };
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('proxy env prints the proxy, CA and bundle lines; proxy ca prints the CA path', async () => {
    const env = parseEnv(ok(await rig.agent(['proxy', 'env'], token)));
    assert.equal(env.HTTPS_PROXY, 'http://127.0.0.1:1983');
    assert.equal(env.https_proxy, 'http://127.0.0.1:1983');
    assert.equal(env.HTTP_PROXY, 'http://127.0.0.1:1983');
    assert.equal(env.NO_PROXY, 'localhost,127.0.0.1,::1');
    assert.equal(env.NODE_USE_ENV_PROXY, '1');
    const caPath = ok(await rig.agent(['proxy', 'ca'], token)).trim();
    assert.equal(env.NODE_EXTRA_CA_CERTS, caPath);
    const caPem = readFileSync(caPath, 'utf8');
    assert.match(caPem, /^-----BEGIN CERTIFICATE-----\n/);
    for (const k of CA_BUNDLE_VARS) {
      const bundle = readFileSync(env[k] as string, 'utf8');
      assert.ok(bundle.endsWith(caPem), k);
      assert.ok(bundle.length > caPem.length * 10, `${k} holds the system roots too`);
    }
  });

  test('curl --proxy: upstream gets the value, curl prints only the reference', async () => {
    const before = up.seen.length;
    const r = await run(
      'curl',
      [
        '-sS',
        '-D',
        '-',
        '--proxy',
        proxy.url,
        '-H',
        `Authorization: Bearer ${ref}`,
        `https://localhost:${up.port}/echo`,
      ],
      toolEnv,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      up.seen.slice(before).map((s) => s.url),
      ['/echo'],
    );
    assert.deepEqual(up.header('authorization').slice(-1), [`Bearer ${secret}`]);
    assert.match(r.stdout, new RegExp(`you sent: Bearer ${ref}\n`));
    assert.match(r.stdout, new RegExp(`x-echo: Bearer ${ref}\r\n`, 'i'));
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
  });

  test('Node fetch with NODE_USE_ENV_PROXY=1 and NODE_EXTRA_CA_CERTS', envProxy, async () => {
    const script = `
      const r = await fetch(process.argv[1], { headers: { authorization: 'Bearer ${ref}' } });
      process.stdout.write(r.status + ' ' + r.headers.get('x-echo') + ' ' + (await r.text()));
    `;
    const r = await run(
      process.execPath,
      ['--input-type=module', '-e', script, `https://localhost:${up.port}/fetch`],
      toolEnv,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `200 Bearer ${ref} you sent: Bearer ${ref}\n`);
    assert.equal(up.seen.at(-1)?.url, '/fetch');
    assert.equal(up.header('authorization').at(-1), `Bearer ${secret}`);
  });

  test('Python urllib with SSL_CERT_FILE', async () => {
    const script = [
      'import sys, urllib.request',
      `req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer ${ref}"})`,
      'r = urllib.request.urlopen(req)',
      'print(r.status, r.headers["X-Echo"], r.read().decode(), end="")',
    ].join('\n');
    const r = await run('python3', ['-c', script, `https://localhost:${up.port}/python`], toolEnv);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `200 Bearer ${ref} you sent: Bearer ${ref}\n`);
    assert.equal(up.seen.at(-1)?.url, '/python');
    assert.equal(up.header('authorization').at(-1), `Bearer ${secret}`);
  });

  test('git clone over HTTPS from a local smart-HTTP server, with the reference in http.extraHeader', async () => {
    const origin = join(rig.root, 'origin.git');
    const work = join(rig.root, 'seed');
    const git = (args: string[], cwd = rig.root) =>
      new Promise<string>((resolve, reject) =>
        execFile('git', args, { cwd, env: toolEnv }, (err, out) =>
          err ? reject(err) : resolve(out),
        ),
      );
    await git(['init', '-q', '--bare', origin]);
    await git(['init', '-q', work]);
    await git(
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first'],
      work,
    );
    await git(['push', '-q', origin, 'HEAD:refs/heads/main'], work);
    up.routes.set('/origin.git', (req, res, body) => {
      const [path, query = ''] = (req.url ?? '').split('?');
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: rig.root,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: path,
          QUERY_STRING: query,
          REQUEST_METHOD: req.method,
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          CONTENT_LENGTH: String(body.length),
        },
      });
      const out: Buffer[] = [];
      cgi.stdout.on('data', (c: Buffer) => out.push(c));
      cgi.on('close', () => {
        const all = Buffer.concat(out);
        const split = all.indexOf('\r\n\r\n');
        const head = all.subarray(0, split).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        let status = 200;
        for (const line of head) {
          const [k = '', ...v] = line.split(': ');
          if (k.toLowerCase() === 'status') status = Number(v.join(': ').split(' ')[0]);
          else headers[k] = v.join(': ');
        }
        res.writeHead(status, headers);
        res.end(all.subarray(split + 4));
      });
      cgi.stdin.end(body);
    });
    const before = up.seen.length;
    const clone = join(rig.root, 'clone');
    const r = await run(
      'git',
      [
        '-c',
        `http.extraHeader=Authorization: Bearer ${ref}`,
        'clone',
        '-q',
        `https://localhost:${up.port}/origin.git`,
        clone,
      ],
      toolEnv,
    );
    assert.equal(r.code, 0, r.stderr);
    const seen = up.seen.slice(before);
    assert.ok(seen.length >= 2, 'ref discovery and upload-pack went through the proxy');
    for (const s of seen) {
      assert.ok(
        s.rawHeaders.includes(`Bearer ${secret}`),
        `${s.method} ${s.url} carried the value`,
      );
    }
    assert.equal((await git(['log', '--format=%s', 'origin/main'], clone)).trim(), 'first');
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
  });

  test('a WebSocket client: handshake headers filled, frames both ways', envProxy, async () => {
    up.onUpgrade = (req, socket) => {
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Accept: ${wsAccept(req.headers['sec-websocket-key'] ?? '')}\r\n\r\n`,
      );
      // One unmasked text frame from the server, then echo the first client frame's length.
      const text = Buffer.from('hello from upstream');
      socket.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));
      socket.once('data', (c: Buffer) => {
        const len = (c[1] ?? 0) & 0x7f;
        const mask = c.subarray(2, 6);
        const payload = Buffer.from(c.subarray(6, 6 + len).map((b, i) => b ^ (mask[i % 4] ?? 0)));
        const back = Buffer.from(`got ${payload.toString()}`);
        socket.end(Buffer.concat([Buffer.from([0x81, back.length]), back, Buffer.from([0x88, 0])]));
      });
    };
    // Node's own WebSocket client (undici), routed by NODE_USE_ENV_PROXY like fetch.
    const script = `
      const ws = new WebSocket(process.argv[1], { headers: { authorization: 'Bearer ${ref}' } });
      ws.onmessage = (e) => {
        console.log('message: ' + e.data);
        if (e.data === 'hello from upstream') ws.send('hi upstream');
      };
      ws.onerror = (e) => console.log('error: ' + (e.message ?? e.type));
      ws.onclose = () => console.log('closed');
    `;
    const r = await run(
      process.execPath,
      ['--input-type=module', '-e', script, `wss://localhost:${up.port}/ws`],
      toolEnv,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'message: hello from upstream\nmessage: got hi upstream\nclosed\n');
    const hs = up.seen.at(-1);
    assert.equal(hs?.url, '/ws');
    assert.ok(hs?.rawHeaders.includes(`Bearer ${secret}`));
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
  });

  test(
    'a WebSocket server echoing the injected value: the client gets the reference back',
    envProxy,
    async () => {
      const frame = (b0: number, payload: Buffer) => {
        const n = payload.length;
        const len = n < 126 ? Buffer.from([n]) : Buffer.from([126, n >> 8, n & 0xff]);
        return Buffer.concat([Buffer.from([b0]), len, payload]);
      };
      let offered: string | undefined;
      up.onUpgrade = (req, socket) => {
        offered = req.headers['sec-websocket-extensions'];
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
            `Sec-WebSocket-Accept: ${wsAccept(req.headers['sec-websocket-key'] ?? '')}\r\n\r\n`,
        );
        const auth = Buffer.from(req.headers.authorization ?? '');
        // Whole in one frame; then split across two fragments, a ping between them, and
        // the bytes across separate writes; then a long (16-bit length) binary message.
        const whole = frame(0x81, Buffer.concat([Buffer.from('one: '), auth]));
        const cut = 12;
        const first = frame(0x01, Buffer.concat([Buffer.from('two: '), auth.subarray(0, cut)]));
        const ping = frame(0x89, Buffer.from('ping'));
        const second = frame(0x80, auth.subarray(cut));
        const long = frame(
          0x82,
          Buffer.concat([Buffer.alloc(300, 'x'), auth, Buffer.alloc(300, 'y')]),
        );
        const wire = Buffer.concat([whole, first, ping, second, long]);
        let at = 0;
        const drip = () => {
          if (at >= wire.length) {
            socket.end(Buffer.from([0x88, 0]));
            return;
          }
          socket.write(wire.subarray(at, at + 7));
          at += 7;
          setImmediate(drip);
        };
        drip();
      };
      const script = `
      const ws = new WebSocket(process.argv[1], { headers: { authorization: 'Bearer ${ref}' } });
      ws.binaryType = 'arraybuffer';
      ws.onmessage = (e) => {
        const text = typeof e.data === 'string' ? e.data : Buffer.from(e.data).toString();
        console.log('message: ' + text.replace(/^x+/, 'x*').replace(/y+$/, 'y*'));
      };
      ws.onerror = (e) => console.log('error: ' + (e.message ?? e.type));
      ws.onclose = () => console.log('closed');
    `;
      const r = await run(
        process.execPath,
        ['--input-type=module', '-e', script, `wss://localhost:${up.port}/ws-echo`],
        toolEnv,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        `message: one: Bearer ${ref}\nmessage: two: Bearer ${ref}\n` +
          `message: x*Bearer ${ref}y*\nclosed\n`,
      );
      const hs = up.seen.at(-1);
      assert.equal(hs?.url, '/ws-echo');
      assert.ok(hs?.rawHeaders.includes(`Bearer ${secret}`));
      // No extension offered upstream: permessage-deflate would hide an echo from the scrubber.
      assert.equal(offered, undefined);
      assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret));
    },
  );
});
