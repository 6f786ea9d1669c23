// `run` gives every CA variable in common use the session's trust, whatever
// the user had: the user's environment here points each one at the system
// bundle (which does not know the session CA), and each real client installed
// still reaches the upstream through the proxy, inside the sandbox.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CA_BUNDLE_VARS } from '../../src/proxy/env.js';
import { hex } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa, type TestCa } from '../support/proxy.js';
import { installBin, underPty } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();
const secret = `ca-vars-${hex(12)}`;
let ca: TestCa;
let up: Upstream;

const SYSTEM = '/etc/ssl/certs/ca-certificates.crt';
/** What the user had: every variable on the system store. */
const userHad: Record<string, string> = {
  ...Object.fromEntries(CA_BUNDLE_VARS.map((k) => [k, SYSTEM])),
  NODE_EXTRA_CA_CERTS: SYSTEM,
  SSL_CERT_DIR: '/etc/ssl/certs',
};

const has = (cmd: string, ...args: string[]) =>
  spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

before(async () => {
  ca = makeTestCa(rig.root);
  up = await Upstream.start(ca);
  await rig.create();
  await rig.set('X', secret);
  await rig.addAgent('a', ['X'], ['--per-minute', '100', '--per-hour', '100']);
  installBin(rig);
});
after(async () => {
  await up.close();
  await rig.dispose();
});

test('every CA variable points at the session bundle, and curl, git, Node, Python, requests, pip and aws get through', async () => {
  const url = `https://localhost:${up.port}`;
  // The upstream is on the outer machine's loopback: not the agent's own localhost, so no NO_PROXY.
  const via = 'NO_PROXY= no_proxy=';
  const auth = 'Authorization: Bearer vault://X/password';
  const clients: [string, string][] = [
    ['curl', `${via} curl -s -o /dev/null -w '%{http_code}' -H '${auth}' ${url}/curl`],
    [
      'node',
      `${via} ${JSON.stringify(process.execPath)} -e "fetch('${url}/node').then(r=>process.stdout.write(String(r.status)))"`,
    ],
    [
      'python',
      `${via} python3 -c "import urllib.request as u; print(u.urlopen('${url}/python').status, end='')"`,
    ],
    // git: the reply is no repository, but only after TLS through the proxy worked.
    ['git', `${via} git ls-remote ${url}/git/repo.git >/dev/null 2>&1; echo -n done`],
  ];
  if (has('python3', '-c', 'import requests')) {
    clients.push([
      'requests',
      `${via} python3 -c "import requests; print(requests.get('${url}/requests').status_code, end='')"`,
    ]);
  }
  if (has('python3', '-m', 'pip', '--version')) {
    clients.push([
      'pip',
      `${via} python3 -m pip download -q --no-deps --no-cache-dir --disable-pip-version-check ` +
        `-d "$PWD/pip" --index-url ${url}/simple/ vaultprobe >/dev/null 2>&1; echo -n done`,
    ]);
  }
  if (has('aws', '--version')) {
    clients.push([
      'aws',
      `${via} AWS_ACCESS_KEY_ID=probe AWS_SECRET_ACCESS_KEY=probe aws --region us-east-1 ` +
        `--endpoint-url ${url}/aws s3api list-buckets >/dev/null 2>&1; echo -n done`,
    ]);
  }
  const names = [...Object.keys(userHad)];
  const script = [
    ...names.map((k) => `echo "var-${k}=$${k}"`),
    ...clients.map(([name, cmd]) => `echo "${name}=$(${cmd})"`),
  ].join('; ');
  const before = up.seen.length;
  const r = await underPty(
    rig,
    // The upstream is a service of this machine: the sandbox's proxy reaches it only when allowed.
    [
      'run',
      '--agent',
      'a',
      '--upstream-ca',
      join(rig.root, 'ca.pem'),
      '--allow-net',
      `localhost:${up.port}`,
      '--',
      'bash',
      '-c',
      script,
    ],
    userHad,
  ).exited;
  assert.equal(r.exitCode, 0, r.output);
  const said = new Map<string, string>();
  for (const line of r.output.split(/\r?\n/)) {
    const hit = /^([A-Za-z0-9_-]+)=(.*)$/.exec(line.trim());
    if (hit !== null) said.set(hit[1] as string, hit[2] as string);
  }
  for (const k of CA_BUNDLE_VARS) {
    assert.match(said.get(`var-${k}`) ?? '', /\/vault-cli-run-[^/]+\/ca-bundle\.pem$/, k);
  }
  assert.match(said.get('var-NODE_EXTRA_CA_CERTS') ?? '', /\/vault-cli-run-[^/]+\/ca\.pem$/);
  assert.match(said.get('var-SSL_CERT_DIR') ?? '', /\/vault-cli-run-[^/]+\/certs$/);
  assert.equal(said.get('curl'), '200', r.output);
  assert.equal(said.get('node'), '200', r.output);
  assert.equal(said.get('python'), '200', r.output);
  if (said.has('requests')) assert.equal(said.get('requests'), '200', r.output);
  const paths = up.seen.slice(before).map((s) => s.url);
  const reached = (prefix: string) => paths.some((p) => p.startsWith(prefix));
  assert.ok(reached('/git/repo.git/info/refs'), `git got through: ${r.output}`);
  if (said.has('pip')) assert.ok(reached('/simple/vaultprobe'), `pip got through: ${r.output}`);
  if (said.has('aws')) assert.ok(reached('/aws'), `aws got through: ${r.output}`);
  const curled = up.seen.slice(before).find((s) => s.url === '/curl');
  assert.ok(curled?.rawHeaders.includes(`Bearer ${secret}`), 'curl’s request was filled');
  assert.ok(!r.output.includes(secret));
});
