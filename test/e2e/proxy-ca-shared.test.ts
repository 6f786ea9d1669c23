// Issue 38: the proxy's CA is one per proxy. Two agents under one user
// share the CA files; `proxy env` under a second token used to write a new
// CA over the running proxy's, and every tool trusting the files then
// refused that proxy (curl 60). `proxy env` also warns when no proxy listens
// on its port (the tools would fail with curl 7). Real curl through the real
// proxy to a local HTTPS upstream.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import {
  curl,
  freePort,
  makeTestCa,
  startProxy,
  Upstream,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
const secret = `s3cr3t-${hex(12)}`;
let ca: TestCa;
let up: Upstream;
let proxy: ProxyProcess;
let first = '';
let second = '';

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

before(async () => {
  ca = makeTestCa(rig.root);
  up = await Upstream.start(ca);
  await rig.create();
  await rig.set('Test API', secret, 'token');
  first = await rig.addAgent('first', ['Test API']);
  second = await rig.addAgent('second', ['Test API']);
  proxy = await startProxy(rig, first, ca);
});
after(async () => {
  await proxy?.stop();
  await up?.close();
  await rig.dispose();
});

/** curl through the proxy, trusting what `env` says, with a reference the proxy fills. */
async function throughProxy(env: Record<string, string>) {
  const before = up.seen.length;
  const r = await curl(
    [
      '-sS',
      '-H',
      'Authorization: Bearer vault://Test API/token',
      `https://localhost:${up.port}/echo`,
    ],
    { PATH: process.env.PATH, HOME: rig.root, ...env, NO_PROXY: '', no_proxy: '' },
  );
  return {
    r,
    filled: up.seen.slice(before).some((s) => s.rawHeaders.includes(`Bearer ${secret}`)),
  };
}

test('proxy env under a second token leaves a running proxy working', async () => {
  const envFirst = await rig.agent(['proxy', 'env', '--port', String(proxy.port)], first);
  assert.equal(envFirst.code, 0, envFirst.stderr);
  assert.equal(envFirst.stderr, '', 'a proxy listens: no warning');
  const env = parseEnv(envFirst.stdout);
  const works = await throughProxy(env);
  assert.equal(works.r.code, 0, works.r.stderr);
  assert.ok(works.filled, 'the upstream got the value');
  const caBefore = readFileSync(env.NODE_EXTRA_CA_CERTS as string, 'utf8');

  // The second agent asks for its block: the same files, untouched.
  const envSecond = parseEnv(
    ok(await rig.agent(['proxy', 'env', '--port', String(proxy.port)], second)),
  );
  assert.equal(envSecond.NODE_EXTRA_CA_CERTS, env.NODE_EXTRA_CA_CERTS);
  assert.equal(readFileSync(env.NODE_EXTRA_CA_CERTS as string, 'utf8'), caBefore);
  const still = await throughProxy(env);
  assert.equal(still.r.code, 0, `the running proxy still trusted: ${still.r.stderr}`);
  assert.ok(still.filled);

  // A second proxy on the port in use is refused before it touches the CA.
  const again = await rig.agent(['proxy', '--port', String(proxy.port)], second);
  assert.equal(again.code, 65, again.stderr);
  assert.match(again.stderr, /VLT-1002: Port \d+ is in use/);
  assert.equal(readFileSync(env.NODE_EXTRA_CA_CERTS as string, 'utf8'), caBefore);
});

test('proxy env warns when no proxy listens on its port, naming the command that starts one', async () => {
  const port = await freePort();
  const r = await rig.agent(['proxy', 'env', '--port', String(port)], first);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`HTTPS_PROXY=http://127\\.0\\.0\\.1:${port}`));
  assert.match(r.stderr, new RegExp(`no proxy listens on 127\\.0\\.0\\.1:${port}`));
  assert.match(r.stderr, new RegExp(`\`vault-cli proxy --port ${port}\``));
});
