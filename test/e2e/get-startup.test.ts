// What a `get`, a `totp` and a `render` load (issue 39: near Node's own
// start). Each module costs about 0.3 ms to load and compile, so these three
// load neither the command table (main.ts parses them by
// src/commands/pipe-side.ts alone) nor the help, owner.ts with its prompts,
// or any command of the owner. Each ESM import of node:fs, node:net, node:tty
// or node:util builds a namespace that evaluates every lazy export of that
// module (fs.promises and its graph, for one): 1-4 ms each on every start.
// node:tls costs about 11 ms and only a team host's tls:// URL needs it. The
// proxy, the dashboard (ink, react) and node-pty are never theirs.
// bench/get.ts measures the time itself.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, Rig, ok } from '../support/rig.js';

const rig = new Rig();
let token: string;
let template: string;

before(async () => {
  await rig.create();
  await rig.set('GitHub', 'startup-value');
  await rig.set('GitHub', 'JBSWY3DPEHPK3PXP', 'totp');
  token = await rig.addAgent('coder', ['GitHub']);
  template = join(rig.root, 'app.env');
  writeFileSync(template, 'TOKEN=vault://GitHub/password\n');
});
after(() => rig.dispose());

/** The modules a real run of `args` loaded through the ESM loader, as the trace hook saw them. */
async function loadedBy(args: readonly string[]): Promise<string[]> {
  const trace = join(rig.root, `modules-${Date.now()}.txt`);
  const r = await rig.agent(args, token, {
    env: {
      NODE_OPTIONS: `--import=${join(ROOT, 'test/support/module-trace.mjs')}`,
      VAULT_TEST_MODULE_TRACE: trace,
    },
  });
  ok(r);
  return readFileSync(trace, 'utf8').trim().split('\n');
}

const RUNS: readonly { readonly args: readonly string[]; readonly module: string }[] = [
  { args: ['get', 'GitHub'], module: 'get' },
  { args: ['totp', 'GitHub'], module: 'totp' },
  { args: ['render', '--format', 'env', '__TEMPLATE__'], module: 'render' },
];

const argsOf = (args: readonly string[]) => args.map((a) => (a === '__TEMPLATE__' ? template : a));

for (const { args, module } of RUNS) {
  test(`${module} loads none of the proxy, the dashboard, node-pty or node:tls`, async () => {
    const loaded = await loadedBy(argsOf(args));
    assert.ok(
      loaded.some((u) => u.endsWith(`/src/cli/commands/${module}.js`)),
      `the trace saw ${module} itself`,
    );
    const heavy = loaded.filter((u) =>
      /\/src\/proxy\/|\/tui\/|\/node_modules\/(ink|react|node-pty)\/|^node:tls$/.test(u),
    );
    assert.deepEqual(heavy, []);
  });

  test(`${module} loads neither the command table, the help, nor owner.ts`, async () => {
    const loaded = await loadedBy(argsOf(args));
    assert.ok(
      loaded.some((u) => u.endsWith('/src/commands/pipe-side.js')),
      'the trace saw the definitions it parsed with',
    );
    // Every file of src/commands but types.ts, parse.ts and pipe-side.ts is the table or its help.
    const cut = loaded.filter(
      (u) =>
        /\/src\/commands\/(?!(types|parse|pipe-side)\.js$)/.test(u) ||
        /\/src\/cli\/(owner|io|ceremony|key-offer)\.js$/.test(u) ||
        /\/src\/core\/(suggest|audit)\.js$/.test(u),
    );
    assert.deepEqual(cut, []);
  });

  test(`${module} imports node:fs, net, tty and util by getBuiltinModule, never as ESM namespaces`, async () => {
    const loaded = await loadedBy(argsOf(args));
    const namespaces = loaded.filter((u) => /^node:(fs|net|tty|util)$/.test(u));
    assert.deepEqual(namespaces, []);
  });
}
