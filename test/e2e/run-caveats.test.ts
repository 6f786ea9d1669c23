// Request caveats under `vault-cli run` (issue 40): the session proxy passes
// each fill's method and path to the host, which refuses a request outside
// the agent's caveats before releasing the value; run prints the refusal
// among the proxy's on its stderr. Real run (sandboxed), real curl inside it,
// a local HTTPS upstream that records what reached it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa, type TestCa } from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
const secret = `api-${hex(12)}`;
let up: Upstream;
let ca: TestCa;

before(async () => {
  await rig.create();
  await rig.set('API', secret, 'token');
  await rig.addAgent('r', ['API'], ['--per-minute', '100', '--per-hour', '100']);
  ok(await rig.owner(['agent', 'caveats', 'r', 'API', 'GET /ok/**']));
  ca = makeTestCa(rig.root);
  up = await Upstream.start(ca);
});
after(async () => {
  await up?.close();
  await rig.dispose();
});

test('run: a request inside the caveats is filled, one outside is refused (VLT-2060) and told on run’s stderr', async () => {
  const curl = (path: string) =>
    `NO_PROXY= no_proxy= curl -s -o /dev/null -w '%{http_code}\\n' -H 'Authorization: Bearer vault://API/token' https://localhost:${up.port}${path}`;
  const r = await rig.owner([
    'run',
    '--agent',
    'r',
    '--allow-net',
    `localhost:${up.port}`,
    '--upstream-ca',
    ca.caFile,
    '--',
    'sh',
    '-c',
    `${curl('/ok/1')}; ${curl('/admin/users')}`,
  ]);
  assert.equal(r.stdout, '200\n403\n', r.stderr);
  assert.deepEqual(
    up.seen.map((s) => s.url),
    ['/ok/1'],
    'the refused request never reached the upstream',
  );
  assert.deepEqual(up.header('authorization'), [`Bearer ${secret}`]);
  const refused = r.stderr.split('\n').filter((l) => l.includes('the proxy refused'));
  assert.equal(refused.length, 1, r.stderr);
  assert.match(refused[0] ?? '', /^vault-cli: the proxy refused: VLT-2060: /);
  assert.ok(!r.stderr.includes(secret) && !r.stdout.includes(secret));
});
