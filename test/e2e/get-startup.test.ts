// What a `get`, a `totp` and a `render` load (issue 39: near Node's own
// start). Each module costs about 0.3 ms to load and compile, so these three
// load main.js, node-check.js and one bundle (src/cli/pipe-main.ts and all it
// imports, made by scripts/bundle.mjs at build time), and nothing else of
// ours: no command table, help, owner.ts with its prompts, or command of the
// owner. Each ESM import of node:fs, node:net, node:tty or node:util builds a
// namespace that evaluates every lazy export of that module (fs.promises and
// its graph, for one): 1-4 ms each on every start; so does loading
// node:fs/promises or node:tty at all (about 2.7 and 1 ms). node:tls costs
// about 11 ms and only a team host's tls:// URL needs it. The proxy, the
// dashboard (ink, react), node-pty and koffi are never theirs.
// bench/get.ts measures the time itself.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, Rig, ok, runCli } from '../support/rig.js';

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

/**
 * The modules a real run of `args` loaded through the ESM loader, as the trace
 * hook saw them, then the built-ins it loaded by any means (process.moduleLoadList).
 */
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

/** Node's built-in modules a run loaded, by any means: import, require or getBuiltinModule. */
const builtins = (loaded: readonly string[]) =>
  loaded.filter((u) => u.startsWith('builtin:')).map((u) => u.slice('builtin:'.length));

const RUNS: readonly { readonly args: readonly string[]; readonly module: string }[] = [
  { args: ['get', 'GitHub'], module: 'get' },
  { args: ['totp', 'GitHub'], module: 'totp' },
  { args: ['render', '--format', 'env', '__TEMPLATE__'], module: 'render' },
];

const argsOf = (args: readonly string[]) => args.map((a) => (a === '__TEMPLATE__' ? template : a));

test('the build holds the bundle get, totp and render load', () => {
  assert.ok(existsSync(join(ROOT, 'dist/src/cli/pipe-main.bundle.js')), 'npm run build makes it');
});

test('a tree built by tsc alone (no bundle): get and render run from their own modules', async () => {
  const copy = join(rig.root, 'tsc-only');
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  rmSync(join(copy, 'dist/src/cli/pipe-main.bundle.js'));
  const cli = join(copy, 'dist/src/cli/main.js');
  const env = { ...rig.env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token };
  assert.equal(ok(await runCli(['get', 'GitHub'], rig.env, { env }, cli)), 'startup-value\n');
  const rendered = ok(await runCli(['render', '--format', 'env', template], rig.env, { env }, cli));
  assert.equal(rendered, "TOKEN='startup-value'\n");
});

/** The modules of ours the bundle holds, by the section comments esbuild writes ("// dist/src/..."). */
function bundled(): string[] {
  const text = readFileSync(join(ROOT, 'dist/src/cli/pipe-main.bundle.js'), 'utf8');
  return [...new Set([...text.matchAll(/^\/\/ (dist\/\S+\.js)$/gm)].map((m) => m[1] as string))];
}

test('the bundle holds get, totp and render, and neither the command table, the help, nor owner.ts', () => {
  const files = bundled();
  for (const m of ['get', 'totp', 'render'])
    assert.ok(files.includes(`dist/src/cli/commands/${m}.js`), `${m} is in the bundle`);
  assert.ok(files.includes('dist/src/commands/pipe-side.js'), 'the definitions it parses with');
  // Every file of src/commands but types.ts, parse.ts and pipe-side.ts is the table or its help.
  const cut = files.filter(
    (f) =>
      /\/src\/commands\/(?!(types|parse|pipe-side)\.js$)/.test(f) ||
      /\/src\/cli\/(owner|ceremony|key-offer|full)\.js$/.test(f) ||
      /\/src\/cli\/commands\/(?!(get|totp|render)\.js$)/.test(f) ||
      /\/src\/(core\/suggest|kernel\/unix)\.js$/.test(f) ||
      /\/(src\/proxy|src\/host|src\/store|src\/crypto\/(?!secret)|tui|shell)\//.test(f),
  );
  assert.deepEqual(cut, []);
});

for (const { args, module } of RUNS) {
  test(`${module} loads none of the proxy, the dashboard, node-pty or node:tls`, async () => {
    const loaded = await loadedBy(argsOf(args));
    assert.ok(
      loaded.some((u) => u.endsWith('/dist/src/cli/pipe-main.bundle.js')),
      'the trace saw the bundle',
    );
    const heavy = loaded.filter((u) =>
      /\/src\/proxy\/|\/tui\/|\/node_modules\/(ink|react|node-pty)\/|^node:tls$/.test(u),
    );
    assert.deepEqual(heavy, []);
  });

  test(`${module} imports node:fs, net, tty and util by getBuiltinModule, never as ESM namespaces`, async () => {
    const loaded = await loadedBy(argsOf(args));
    const namespaces = loaded.filter((u) => /^node:(fs|net|tty|util)$/.test(u));
    assert.deepEqual(namespaces, []);
  });

  test(`${module} loads three files of ours: main.js, node-check.js and the bundle`, async () => {
    const loaded = await loadedBy(argsOf(args));
    const ours = loaded
      .filter((u) => u.startsWith('file://') && !u.includes('/node_modules/'))
      .map((u) => u.slice(u.indexOf('/dist/') + 1));
    assert.deepEqual(ours, [
      'dist/src/cli/main.js',
      'dist/src/cli/node-check.js',
      'dist/src/cli/pipe-main.bundle.js',
    ]);
  });

  test(`${module} loads neither node:fs/promises, node:tty nor koffi`, async () => {
    const loaded = await loadedBy(argsOf(args));
    assert.deepEqual(
      builtins(loaded).filter((m) => /^(fs\/promises|tty|tls|child_process)$/.test(m)),
      [],
    );
    assert.deepEqual(
      loaded.filter((u) => /\/node_modules\/(koffi|chokidar)\//.test(u)),
      [],
    );
  });
}
