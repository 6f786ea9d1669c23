// What a `get`, a `totp` and a `render` load (issue 39: near Node's own
// start). Each module costs about 0.3 ms to load and compile, and Node's ESM
// loader about 4 ms to start, so bin/vault-cli runs these three from one
// CommonJS file, pipe.cjs (src/cli/pipe.cts), which compiles one bundle
// (src/cli/pipe-main.ts and all it imports, made by scripts/bundle.mjs at
// build time) with V8's code cache; run as main.js they load main.js,
// node-check.js and pipe.cjs. Nothing else of ours: no command table, help,
// owner.ts with its prompts, or command of the owner. Each ESM import of node:fs, node:net, node:tty or node:util builds a
// namespace that evaluates every lazy export of that module (fs.promises and
// its graph, for one): 1-4 ms each on every start; so does loading
// node:fs/promises or node:tty at all (about 2.7 and 1 ms). node:tls costs
// about 11 ms and only a team host's tls:// URL needs it. The proxy, the
// dashboard (ink, react), node-pty and koffi are never theirs.
// bench/get.ts measures the time itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, Rig, ok, runCli } from '../support/rig.js';

const BUNDLE = 'dist/src/cli/pipe-main.bundle.cjs';
const LAUNCHER = join(ROOT, 'bin', 'vault-cli');

const withoutUndefined = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));

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
async function loadedBy(args: readonly string[], launcher = false): Promise<string[]> {
  const trace = join(rig.root, `modules-${Date.now()}.txt`);
  const env = {
    ...rig.env,
    VAULT_PASSPHRASE_FILE: undefined,
    VAULT_TOKEN: token,
    NODE_OPTIONS: `--import=${join(ROOT, 'test/support/module-trace.mjs')}`,
    VAULT_TEST_MODULE_TRACE: trace,
  };
  if (launcher) {
    // bin/vault-cli is a sh script: run as a user runs it, not under node.
    const r = spawnSync(LAUNCHER, args, { env: withoutUndefined(env), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  } else ok(await runCli(args, rig.env, { env }));
  return readFileSync(trace, 'utf8').trim().split('\n');
}

/** The files of ours a run loaded, from dist/ on. */
const oursIn = (loaded: readonly string[]) =>
  loaded
    .filter((u) => u.startsWith('file://') && !u.includes('/node_modules/'))
    .map((u) => u.slice(u.indexOf('/dist/') + 1));

/** Node's built-in modules a run loaded, by any means: import, require or getBuiltinModule. */
const builtins = (loaded: readonly string[]) =>
  loaded.filter((u) => u.startsWith('builtin:')).map((u) => u.slice('builtin:'.length));

const RUNS: readonly { readonly args: readonly string[]; readonly module: string }[] = [
  { args: ['get', 'GitHub'], module: 'get' },
  { args: ['totp', 'GitHub'], module: 'totp' },
  { args: ['render', '--format', 'env', '__TEMPLATE__'], module: 'render' },
];

const argsOf = (args: readonly string[]) => args.map((a) => (a === '__TEMPLATE__' ? template : a));

test('the build holds the bundle get, totp and render load, and the file that loads it', () => {
  assert.ok(existsSync(join(ROOT, BUNDLE)), 'npm run build makes it');
  assert.ok(existsSync(join(ROOT, 'dist/src/cli/pipe.cjs')));
});

/** A copy of the build in the rig's root, for tests that change its files; returns its cli dir. */
function copyOfDist(name: string): string {
  const copy = join(rig.root, name);
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  const cli = join(copy, 'dist/src/cli');
  for (const f of readdirSync(cli)) if (f.endsWith('.cache')) rmSync(join(cli, f));
  return cli;
}

const agentEnv = () => ({ ...rig.env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token });

test('a tree built by tsc alone (no bundle): get and render run from their own modules', async () => {
  const cli = copyOfDist('tsc-only');
  rmSync(join(cli, 'pipe-main.bundle.cjs'));
  const env = agentEnv();
  for (const entry of ['main.js', 'pipe.cjs']) {
    const script = join(cli, entry);
    assert.equal(ok(await runCli(['get', 'GitHub'], rig.env, { env }, script)), 'startup-value\n');
    const rendered = ok(
      await runCli(['render', '--format', 'env', template], rig.env, { env }, script),
    );
    assert.equal(rendered, "TOKEN='startup-value'\n", entry);
  }
});

/** The code caches beside the copy's bundle. */
const caches = (cli: string) => readdirSync(cli).filter((f) => f.endsWith('.cache'));

test('the code cache: written by the first get, used as it is by the next', async () => {
  const cli = copyOfDist('cached');
  const script = join(cli, 'pipe.cjs');
  const env = agentEnv();
  assert.equal(ok(await runCli(['get', 'GitHub'], rig.env, { env }, script)), 'startup-value\n');
  const made = caches(cli);
  assert.deepEqual(made, [`pipe-main.bundle.cjs.${process.version}-${process.arch}.cache`]);
  const file = join(cli, made[0] as string);
  const first = statSync(file);
  assert.equal(ok(await runCli(['totp', 'GitHub'], rig.env, { env }, script)).length, 7);
  assert.equal(ok(await runCli(['get', 'GitHub'], rig.env, { env }, script)), 'startup-value\n');
  const later = statSync(file);
  // Not written again: V8 took it (a cache it refused would be replaced at exit).
  assert.deepEqual([later.ino, later.mtimeMs], [first.ino, first.mtimeMs]);
  assert.deepEqual(caches(cli), made, 'no temp file left');
});

test('a code cache holds no value, token or TOTP code of the run that wrote it', async () => {
  const cli = copyOfDist('sentinel');
  const script = join(cli, 'pipe.cjs');
  const env = agentEnv();
  const value = ok(await runCli(['get', 'GitHub'], rig.env, { env }, script));
  const code = ok(await runCli(['totp', 'GitHub'], rig.env, { env }, script)).trim();
  const rendered = ok(
    await runCli(['render', '--format', 'env', template], rig.env, { env }, script),
  );
  assert.equal(rendered, "TOKEN='startup-value'\n");
  const [name] = caches(cli);
  assert.ok(name !== undefined);
  const bytes = readFileSync(join(cli, name)).toString('latin1');
  for (const secret of [value.trim(), token, code, 'JBSWY3DPEHPK3PXP'])
    assert.ok(!bytes.includes(secret), `the cache holds ${secret.slice(0, 4)}...`);
});

test('a code cache made from another bundle of the same length is not used', async () => {
  // V8 checks a cache against the source's length only: two builds of one
  // length would run the first one's code. Here the second bundle differs
  // from the first in its version line's words alone.
  const cli = copyOfDist('swapped');
  const script = join(cli, 'pipe.cjs');
  const bundle = join(cli, 'pipe-main.bundle.cjs');
  const env = agentEnv();
  const before = ok(await runCli(['--version'], rig.env, { env }, script));
  assert.match(before, /^vault-cli /);
  assert.equal(caches(cli).length, 1);
  const text = readFileSync(bundle, 'utf8');
  const swapped = text.replace('`vault-cli ${pkg.version', '`VAULT-CLI ${pkg.version');
  assert.notEqual(swapped, text, 'the version line is in the bundle');
  assert.equal(swapped.length, text.length);
  writeFileSync(bundle, swapped);
  const after = ok(await runCli(['--version'], rig.env, { env }, script));
  assert.match(after, /^VAULT-CLI /, 'the new bundle ran, not the cached one');
});

/** The modules of ours the bundle holds, by the section comments esbuild writes ("// dist/src/..."). */
function bundled(): string[] {
  const text = readFileSync(join(ROOT, BUNDLE), 'utf8');
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
      loaded.some((u) => u.endsWith('/dist/src/cli/pipe.cjs')),
      'the trace saw the file that compiles the bundle',
    );
    const heavy = loaded.filter((u) =>
      /\/src\/proxy\/|\/tui\/|\/node_modules\/(ink|react|node-pty)\/|^node:tls$/.test(u),
    );
    assert.deepEqual(heavy, []);
  });

  test(`${module} takes node:fs, net, tty and util by getBuiltinModule, never as ESM namespaces`, async () => {
    const loaded = await loadedBy(argsOf(args));
    const namespaces = loaded.filter((u) => /^node:(fs|net|tty|util)$/.test(u));
    assert.deepEqual(namespaces, []);
  });

  test(`${module} through bin/vault-cli loads one file of ours, pipe.cjs: no ESM loader`, async () => {
    assert.deepEqual(oursIn(await loadedBy(argsOf(args), true)), ['dist/src/cli/pipe.cjs']);
  });

  test(`${module} as main.js loads three files of ours: main.js, node-check.js and pipe.cjs`, async () => {
    assert.deepEqual(oursIn(await loadedBy(argsOf(args))), [
      'dist/src/cli/main.js',
      'dist/src/cli/node-check.js',
      'dist/src/cli/pipe.cjs',
    ]);
  });

  test(`${module} loads neither node:fs/promises, node:tty nor koffi`, async () => {
    const loaded = await loadedBy(argsOf(args), true);
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
