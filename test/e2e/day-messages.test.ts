// Issue 38: refusals that blame the wrong thing now say what happened and
// what to do (docs/errors.md: the cause, then the command). One test per
// message, each asserting the code and the command it names.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused } from '../support/e2e-helpers.js';
import { CLI, ok, Rig, runCli } from '../support/rig.js';

const rig = new Rig();
let port = 0;
let hostCert = '';
let impostorCert = '';

/** A self-signed certificate for 127.0.0.1, made by openssl in `dir`. */
function certificate(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
      .concat(['-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`])
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
    { encoding: 'utf8' },
  );
  assert.equal(made.status, 0, made.stderr);
  return { cert, key };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return p;
}

/** The remote machine: its own HOME and an empty VAULT_DIR, no host, no store. */
function remoteEnv(url: string, ca: string): NodeJS.ProcessEnv {
  const root = join(rig.root, 'remote');
  mkdirSync(join(root, 'vault'), { recursive: true });
  return {
    PATH: process.env.PATH,
    HOME: root,
    LANG: 'C.UTF-8',
    VAULT_DIR: join(root, 'vault'),
    VAULT_CONFIG_DIR: join(root, 'config'),
    VAULT_HOST_URL: url,
    VAULT_HOST_CA: ca,
  };
}

before(async () => {
  await rig.create();
  await rig.set('DB', 'db-value-4e1a');
  const tls = certificate(rig.root, 'host');
  hostCert = tls.cert;
  impostorCert = certificate(rig.root, 'impostor').cert;
  port = await freePort();
  rig.env.VAULT_LISTEN_TLS = `127.0.0.1:${port}`;
  rig.env.VAULT_TLS_CERT = tls.cert;
  rig.env.VAULT_TLS_KEY = tls.key;
  await rig.stop();
  ok(await rig.owner(['entry', 'ls'])); // the host again, now listening on TCP too
});
after(() => rig.dispose());

test('a revoked token: ask the owner for a new token, then vault-cli init', async () => {
  const token = await rig.addAgent('gone', ['DB']);
  ok(await rig.owner(['agent', 'revoke', 'gone']));
  const msg = assertRefused(await rig.agent(['get', 'DB'], token), 'VLT-2040', 'revoked');
  assert.match(msg, /ask the owner for a new token/);
  assert.match(msg, /`vault-cli init`/);
});

test('a remote agent whose CA does not sign the host certificate: VLT-3060 names VAULT_HOST_CA, nothing sent', async () => {
  const token = await rig.addAgent('remote-ci', ['DB']);
  // The host as it is, trusted: the read works.
  const good = await runCli(['get', 'DB'], {
    ...remoteEnv(`tls://127.0.0.1:${port}`, hostCert),
    VAULT_TOKEN: token,
  });
  assert.equal(good.code, 0, good.stderr);
  const r = await runCli(['get', 'DB'], {
    ...remoteEnv(`tls://127.0.0.1:${port}`, impostorCert),
    VAULT_TOKEN: token,
  });
  assert.equal(r.stdout, '');
  assert.equal(r.code, 77, r.stderr);
  assert.match(r.stderr, /^vault-cli: VLT-3060: /);
  assert.match(r.stderr, /does not vouch for/);
  assert.match(r.stderr, /set VAULT_HOST_CA/);
  assert.doesNotMatch(r.stderr, /stopped before replying/);
});

test('a wrong port in VAULT_HOST_URL: nothing answered there, check VAULT_HOST_URL; nothing "started"', async () => {
  const token = await rig.addAgent('remote-typo', ['DB']);
  const wrong = await freePort();
  const r = await runCli(['get', 'DB'], {
    ...remoteEnv(`tls://127.0.0.1:${wrong}`, hostCert),
    VAULT_TOKEN: token,
  });
  assert.equal(r.code, 69, r.stderr);
  assert.match(r.stderr, /^vault-cli: VLT-3005: No vault host answered at tls:\/\/127\.0\.0\.1:/);
  assert.match(r.stderr, /ECONNREFUSED/);
  assert.match(r.stderr, /VAULT_HOST_URL/);
  assert.doesNotMatch(r.stderr, /could not be started/);
});

test('import --prefix with /: refused before anything is read, saying why and what to use', async () => {
  const file = join(rig.root, 'app.env');
  writeFileSync(file, 'GITHUB_TOKEN=ghp-e2e-4d1f\n', { mode: 0o600 });
  const before = ok(await rig.owner(['entry', 'ls']));
  const r = await rig.owner(['import', file, '--prefix', 'myapp/']);
  assert.equal(r.code, 65, r.stderr);
  assert.match(r.stderr, /^vault-cli: VLT-1002: A prefix may not hold "\/"/);
  assert.match(r.stderr, /Use --prefix "myapp-"/);
  assert.equal(ok(await rig.owner(['entry', 'ls'])), before, 'nothing imported');
  ok(await rig.owner(['import', file, '--prefix', 'myapp-']));
  assert.match(ok(await rig.owner(['entry', 'ls'])), /myapp-GITHUB_TOKEN/);
});

/**
 * The CLI with `ro` mounted read-only (bubblewrap): a read-only file system
 * as the system reports it, which running as root does not stop otherwise.
 */
function underReadOnly(ro: string, args: string[], env: NodeJS.ProcessEnv, input = '') {
  const bwrap = ['--bind', '/', '/', '--ro-bind', ro, ro, '--dev', '/dev', '--proc', '/proc'];
  return spawnSync('bwrap', [...bwrap, process.execPath, CLI, ...args], {
    env,
    input,
    encoding: 'utf8',
  });
}
const noBwrap = existsSync('/usr/bin/bwrap') ? false : 'needs bubblewrap (.ci/run installs it)';

test(
  'a read-only parent of VAULT_DIR at vault create: VLT-3005 names the directory and VAULT_DIR, not VLT-3007',
  { skip: noBwrap },
  () => {
    const ro = join(rig.root, 'ro-parent');
    mkdirSync(ro);
    const r = underReadOnly(ro, ['vault', 'create'], { ...rig.env, VAULT_DIR: join(ro, 'vault') });
    assert.equal(r.status, 69, r.stderr);
    assert.match(
      r.stderr,
      /^vault-cli: VLT-3005: The vault host could not be started: the vault directory .*ro-parent\/vault is not writable \(EROFS\)/,
    );
    assert.match(r.stderr, /set VAULT_DIR to a directory you can write/);
    assert.doesNotMatch(r.stderr, /VLT-3007/);
  },
);

test(
  'a read-only config dir at init: VLT-3061 names the file and VAULT_CONFIG_DIR, not VLT-3007',
  { skip: noBwrap },
  async () => {
    const token = await rig.addAgent('readonly-init', ['DB']);
    const cfg = join(rig.root, 'ro-config');
    mkdirSync(cfg);
    const env = { ...rig.env, VAULT_CONFIG_DIR: cfg, VAULT_TOKEN: undefined };
    const r = underReadOnly(cfg, ['init'], env, token + '\n');
    assert.equal(r.status, 73, r.stderr);
    assert.match(
      r.stderr,
      /^vault-cli: VLT-3061: Cannot write .*ro-config\/token[^ ]* \(EROFS: a read-only file system\)/,
    );
    assert.match(
      r.stderr,
      /set VAULT_CONFIG_DIR to a directory you can write, then run this again/,
    );
    assert.doesNotMatch(r.stderr, /VLT-3007/);
  },
);

test('did you mean: an agent and an entry the owner misspelt', async () => {
  await rig.addAgent('claude', ['DB']);
  const agent = await rig.owner(['agent', 'show', 'claud']);
  assert.equal(agent.code, 67, agent.stderr);
  assert.match(
    agent.stderr,
    /^vault-cli: VLT-4002: No such agent: "?claud"? \(did you mean "claude"\?\)\./,
  );
  const entry = await rig.owner(['entry', 'show', 'DBB']);
  assert.equal(entry.code, 66, entry.stderr);
  assert.match(
    entry.stderr,
    /^vault-cli: VLT-4001: No such entry: "?DBB"? \(did you mean "DB"\?\)\./,
  );
  const cmd = await rig.owner(['entry', 'list']);
  assert.match(cmd.stderr, /did you mean "entry ls"/);
});

test('a template with more references than the limit: VLT-2042 names agent limits and agent group, nothing released, no violation', async () => {
  const names = ['Cfg1', 'Cfg2', 'Cfg3', 'Cfg4'];
  for (const n of names) await rig.set(n, `value of ${n}`);
  const token = await rig.addAgent('renderer', names);
  const template = names.map((n) => `${n}: vault://${n}/password`).join('\n') + '\n';
  const said = assertRefused(
    await rig.agent(['render', '-'], token, { input: template }),
    'VLT-2042',
    'four references under 3 a minute',
  );
  assert.match(said, /nothing was released and no violation recorded/);
  assert.match(said, /\(vault-cli agent limits renderer --per-minute 4\)/);
  assert.match(said, /vault-cli agent group renderer <group> <entry>\.\.\./);
  const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'renderer', '--json']))) as {
    state: string;
    violations: unknown[];
  };
  assert.deepEqual([shown.state, shown.violations.length], ['active', 0]);
  // The command it names lets the same template through.
  ok(await rig.owner(['agent', 'limits', 'renderer', '--per-minute', '4']));
  assert.match(ok(await rig.agent(['render', '-'], token, { input: template })), /value of Cfg4/);
});
