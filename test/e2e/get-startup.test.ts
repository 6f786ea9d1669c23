// What a `get` loads (issue 39: `get` near Node's own start). Each ESM import
// of node:fs, node:net, node:tty or node:util builds a namespace that
// evaluates every lazy export of that module (fs.promises and its graph, for
// one): 1-4 ms each on every start. node:tls costs about 11 ms and only a
// team host's tls:// URL needs it. The proxy, the dashboard (ink, react) and
// node-pty are never a get's. bench/get.ts measures the time itself.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token: string;

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'startup-value');
  token = await rig.addAgent('coder', ['GitHub']);
});
after(() => rig.dispose());

/** The modules a real `get` loaded through the ESM loader, as the trace hook saw them. */
async function loadedByGet(): Promise<string[]> {
  const trace = join(rig.root, `modules-${Date.now()}.txt`);
  const r = await rig.agent(['get', 'GitHub'], token, {
    env: {
      NODE_OPTIONS: `--import=${join(ROOT, 'test/support/module-trace.mjs')}`,
      VAULT_TEST_MODULE_TRACE: trace,
    },
  });
  assert.equal(ok(r).trim(), 'startup-value');
  return readFileSync(trace, 'utf8').trim().split('\n');
}

test('get loads none of the proxy, the dashboard, node-pty or node:tls', async () => {
  const loaded = await loadedByGet();
  assert.ok(
    loaded.some((u) => u.endsWith('/src/cli/commands/get.js')),
    'the trace saw get itself',
  );
  const heavy = loaded.filter((u) =>
    /\/src\/proxy\/|\/tui\/|\/node_modules\/(ink|react|node-pty)\/|^node:tls$/.test(u),
  );
  assert.deepEqual(heavy, []);
});

test('get imports node:fs, net, tty and util by getBuiltinModule, never as ESM namespaces', async () => {
  const loaded = await loadedByGet();
  const namespaces = loaded.filter((u) => /^node:(fs|net|tty|util)$/.test(u));
  assert.deepEqual(namespaces, []);
});
