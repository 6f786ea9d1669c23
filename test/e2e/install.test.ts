// The package as a user installs it: `npm pack`, then `npm install -g` of the
// tarball into a temp prefix with a throwaway HOME, npm cache and config (npm's
// defaults on a fresh machine: no devDependencies, so no node@24; install
// scripts as npm decides), and the demo's steps with the installed command.
// npm fetches the dependencies from the registry (about 15 s); the suite's
// build is what gets packed (--ignore-scripts: pack's prepare would rebuild
// the dist/ other test files are running; package.json's prepare builds it
// when a user packs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, makeTestCa, Upstream } from '../support/proxy.js';
import { ROOT, fate, terminate, type Result } from '../support/rig.js';

const root = mkdtempSync(join(tmpdir(), 'vault-cli-install-test-'));
const prefix = join(root, 'prefix');
const home = join(root, 'home');
const installed = join(prefix, 'lib', 'node_modules', 'vault-cli');
const passphrase = join(root, 'passphrase');
/** The Node 24 that runs the suite, first on PATH: the installed launcher falls back to it. */
const nodeBin = dirname(process.execPath);

const NETWORK = [
  'NODE_EXTRA_CA_CERTS',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
];
/** A fresh machine's environment: nothing of the test's, npm's config and cache in `root`. */
const base: NodeJS.ProcessEnv = {
  PATH: `${prefix}/bin:${nodeBin}:/usr/local/bin:/usr/bin:/bin`,
  HOME: home,
  LANG: 'C.UTF-8',
  TMPDIR: join(root, 'tmp'),
  npm_config_prefix: prefix,
  npm_config_cache: join(root, 'npm-cache'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  NODE_DISABLE_COMPILE_CACHE: '1',
  // The way to the registry is the machine's, as a user's npm would have it.
  ...Object.fromEntries(
    NETWORK.flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]]])),
  ),
};
/** The owner's environment for the installed command. */
const owner: NodeJS.ProcessEnv = {
  ...base,
  VAULT_DIR: join(root, 'vault'),
  VAULT_CONFIG_DIR: join(root, 'config'),
  VAULT_PASSPHRASE_FILE: passphrase,
  VAULT_TEST_WEAK_KDF: '1',
  VAULT_HOST_IDLE_MS: '60000',
};
const agent = (token: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...owner, VAULT_TOKEN: token };
  delete env.VAULT_PASSPHRASE_FILE;
  return env;
};

/** `cmd args` in `env`, from `root` (which `run` binds into its sandbox); its fate. */
function sh(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, input = '') {
  const child = spawn(cmd, [...args], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  child.stdin.end(input);
  return fate(child);
}

function ok(r: Result, what: string): string {
  assert.equal(r.code, 0, `${what} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

let tarball = '';

before(async () => {
  mkdirSync(home);
  mkdirSync(join(root, 'tmp'));
  writeFileSync(passphrase, 'install test passphrase\n', { mode: 0o600 });
  const packed = await fate(
    spawn('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], {
      cwd: ROOT,
      env: base,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const [info] = JSON.parse(ok(packed, 'npm pack')) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  assert.ok(info);
  tarball = join(root, info.filename);
  const paths = info.files.map((f) => f.path);
  console.log(
    `# tarball: ${info.filename}, ${info.size} bytes (${info.unpackedSize} unpacked), ${paths.length} files`,
  );
  assert.deepEqual(
    paths.filter((p) => /^(test|bench)\//.test(p) || /fixtures/.test(p)),
    [],
  );
  // A code cache is made for one Node binary, by the first run beside the bundle: never packed.
  assert.deepEqual(
    paths.filter((p) => p.endsWith('.cache')),
    [],
  );
  for (const p of [
    'bin/vault-cli',
    'dist/src/cli/main.js',
    // get, totp and render as one file (scripts/bundle.mjs): npm pack's prepare builds it.
    'dist/src/cli/pipe-main.bundle.cjs',
    'dist/src/cli/pipe.cjs',
    'completions/vault-cli.bash',
  ])
    assert.ok(paths.includes(p), `${p} is not in the tarball`);
  ok(await sh('npm', ['install', '-g', tarball], base), 'npm install -g');
});

after(async () => {
  await sh('vault-cli', ['daemon', 'stop'], owner);
  rmSync(root, { recursive: true, force: true });
});

test('installed without devDependencies, the command runs on the node PATH finds', async () => {
  assert.ok(!existsSync(join(installed, 'node_modules', 'node')), 'node@24 was installed');
  assert.ok(!existsSync(join(installed, 'node_modules', 'typescript')));
  const v = ok(await sh('vault-cli', ['--version'], base), '--version');
  assert.ok(v.includes(`(${process.execPath})`), v);
});

test("the demo's steps with the installed command", async () => {
  ok(await sh('vault-cli', ['vault', 'create'], owner), 'vault create');
  ok(await sh('vault-cli', ['entry', 'set', 'Stripe'], owner, 'sk_live_x'), 'entry set');
  const token = ok(
    await sh('vault-cli', ['agent', 'add', 'bot', '--scope', 'Stripe'], owner),
    'agent add',
  ).trim();

  const got = await sh('sh', ['-c', 'vault-cli get Stripe | wc -c'], agent(token));
  // The value and get's newline.
  assert.equal(ok(got, 'get | wc -c').trim(), '10');

  writeFileSync(join(root, 'app.env'), 'KEY=vault://Stripe/password\n');
  const rendered = await sh('sh', ['-c', 'vault-cli render app.env | cat'], agent(token));
  assert.equal(ok(rendered, 'render'), "KEY='sk_live_x'\n");

  // A proxy fill: curl sends a reference, the local upstream gets the value.
  const ca = makeTestCa(root);
  const up = await Upstream.start(ca);
  const proxy = spawn(
    'vault-cli',
    ['proxy', '--port', String(await freePort()), '--upstream-ca', ca.caFile],
    {
      cwd: root,
      env: agent(token),
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      proxy.stderr.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /proxy on (http:\/\/127\.0\.0\.1:[0-9]+)/.exec(err);
        if (m) resolve(m[1] as string);
      });
      proxy.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${err}`)));
    });
    const ourCa = ok(await sh('vault-cli', ['proxy', 'ca'], agent(token)), 'proxy ca').trim();
    const curl = await sh(
      'curl',
      ['-sS', '--noproxy', '', '--proxy', url, '--cacert', ourCa]
        .concat(['-H', 'Authorization: Bearer vault://Stripe/password'])
        .concat([`https://localhost:${up.port}/`]),
      base,
    );
    ok(curl, 'curl through the proxy');
    assert.deepEqual(up.header('authorization'), ['Bearer sk_live_x']);
  } finally {
    await terminate(proxy);
    await up.close();
  }

  // `run`: a short command in the sandbox, as agent bot, with pipes (no terminal here).
  const run = await sh(
    'vault-cli',
    ['run', '--agent', 'bot', '--', 'sh', '-c', 'vault-cli get Stripe | wc -c; echo ran'],
    owner,
  );
  assert.match(ok(run, 'run'), /^10\nran\n$/);
  assert.match(run.stderr, /in the sandbox/);
});
