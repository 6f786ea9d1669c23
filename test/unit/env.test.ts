// The supervised child's environment: one pure function, what passes, what is stripped, what is set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnv, secretValue, strippedLine } from '../../shell/env.js';

const SESSION = 'vlt_' + 'S'.repeat(71);
const PROXY: [string, string][] = [
  ['HTTPS_PROXY', 'http://127.0.0.1:1983'],
  ['NODE_EXTRA_CA_CERTS', '/c/proxy-ca.pem'],
];
const build = (parent: Record<string, string | undefined>, more = {}) =>
  childEnv({ parent, sessionToken: SESSION, proxy: PROXY, ...more });

test('ordinary variables pass through unchanged', () => {
  const parent = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/u',
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    PWD: '/work',
    EDITOR: 'vim',
    GIT_COMMIT: 'd5154e3',
    LS_COLORS: 'rs=0:di=01;34:ln=01;36',
  };
  const { env, stripped } = build(parent);
  for (const [k, v] of Object.entries(parent)) assert.equal(env[k], v, k);
  assert.deepEqual(stripped, []);
});

test('secret-looking names are stripped', () => {
  const names = [
    'GITHUB_TOKEN',
    'MY_API_KEY',
    'OPENAI_APIKEY',
    'DB_PASSWORD',
    'SMTP_PASSWD',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'SSH_PRIVATE_KEY',
    'GOOGLE_CREDENTIALS',
    'CLIENT_SECRET',
    'npm_config__auth',
    'DATABASE_URL',
  ];
  const { env, stripped } = build(Object.fromEntries(names.map((n) => [n, 'x'])));
  for (const n of names) assert.equal(env[n], undefined, n);
  assert.deepEqual(stripped, [...names].sort());
});

test('secret-looking values are stripped whatever the name', () => {
  const values = {
    A: 'vlt_' + '0'.repeat(77),
    B: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----',
    C: 'postgres://app:s3cret@db:5432/app',
    D: 'sk-proj-AbCdEfGhIjKlMnOpQrSt',
    E: 'Zx8pQ2rT7vW1yB4nM6kL9jH3gF5dS0aC',
  };
  const { env, stripped } = build(values);
  assert.deepEqual(
    Object.keys(values).filter((k) => k in env),
    [],
  );
  assert.deepEqual(stripped, Object.keys(values));
  assert.equal(secretValue('/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/opt/x'), false);
  assert.equal(secretValue('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), false);
});

test('--keep-env keeps a secret-looking variable by name, and only that one', () => {
  const { env, stripped } = build(
    { GITHUB_TOKEN: 'ghp_x', NPM_TOKEN: 'y' },
    { keep: ['GITHUB_TOKEN'] },
  );
  assert.equal(env.GITHUB_TOKEN, 'ghp_x');
  assert.equal(env.NPM_TOKEN, undefined);
  assert.deepEqual(stripped, ['NPM_TOKEN']);
});

test('the owner’s vault variables never pass, even when kept', () => {
  const parent = {
    VAULT_PASSPHRASE_FILE: '/p',
    VAULT_NEW_PASSPHRASE_FILE: '/q',
    VAULT_CONFIG_DIR: '/c',
    VAULT_TOKEN: 'vlt_long_lived',
    VAULT_DIR: '/v',
  };
  const { env } = build(parent, { keep: Object.keys(parent) });
  assert.equal(env.VAULT_PASSPHRASE_FILE, undefined);
  assert.equal(env.VAULT_NEW_PASSPHRASE_FILE, undefined);
  assert.equal(env.VAULT_CONFIG_DIR, undefined);
  assert.equal(env.VAULT_DIR, '/v');
  assert.equal(env.VAULT_TOKEN, SESSION);
});

test('the long-lived token never passes under any name, kept or not', () => {
  const long = 'vlt_LONGLIVED';
  const { env, stripped } = build(
    { HARMLESS: long, ALSO: `x ${long} y` },
    { keep: ['HARMLESS', 'ALSO'], forbiddenValues: [long] },
  );
  assert.deepEqual(stripped, ['ALSO', 'HARMLESS']);
  assert.ok(!Object.values(env).some((v) => v.includes(long)));
});

test('the session token and the proxy block are set, and win over the parent', () => {
  const { env } = build({ HTTPS_PROXY: 'http://elsewhere:8080', NODE_EXTRA_CA_CERTS: '/x' });
  assert.equal(env.VAULT_TOKEN, SESSION);
  assert.equal(env.HTTPS_PROXY, 'http://127.0.0.1:1983');
  assert.equal(env.NODE_EXTRA_CA_CERTS, '/c/proxy-ca.pem');
});

test('pure: same input, same output; the input is not touched', () => {
  const parent = Object.freeze({ PATH: '/bin', API_KEY: 'k' });
  assert.deepEqual(build(parent), build(parent));
  assert.deepEqual(parent, { PATH: '/bin', API_KEY: 'k' });
});

test('a variable holding a vault:// reference passes whatever its name: the proxy fills it', () => {
  const parent = {
    ANTHROPIC_API_KEY: 'vault://Anthropic/key',
    GITHUB_TOKEN: '{{ vault://GitHub/token }}',
    DB_PASSWORD: 'vault://Prod%2FDB/password',
    // Not a reference and nothing else: stripped as before.
    OPENAI_API_KEY: 'Bearer vault://OpenAI/key',
    SLACK_TOKEN: 'vault://no-field',
  };
  const { env, stripped } = build(parent);
  assert.equal(env.ANTHROPIC_API_KEY, 'vault://Anthropic/key');
  assert.equal(env.GITHUB_TOKEN, '{{ vault://GitHub/token }}');
  assert.equal(env.DB_PASSWORD, 'vault://Prod%2FDB/password');
  assert.deepEqual(stripped, ['OPENAI_API_KEY', 'SLACK_TOKEN']);
});

test('a reference does not carry a forbidden value or an owner variable through', () => {
  const long = 'vlt_LONGLIVED';
  const { env, stripped } = build(
    { VAULT_PASSPHRASE_FILE: 'vault://a/b', X: `vault://${long}/f` },
    { forbiddenValues: [long] },
  );
  assert.equal(env.VAULT_PASSPHRASE_FILE, undefined);
  assert.equal(env.X, undefined);
  assert.deepEqual(stripped, ['VAULT_PASSPHRASE_FILE', 'X']);
});

test('stripped names every variable not passed, the owner’s vault variables included', () => {
  const { stripped } = build({
    VAULT_PASSPHRASE_FILE: '/p',
    VAULT_CONFIG_DIR: '/c',
    VAULT_TOKEN: 'vlt_long_lived',
    NPM_TOKEN: 'n',
    PATH: '/bin',
  });
  // VAULT_TOKEN is not in it: the child has one, the session's.
  assert.deepEqual(stripped, ['NPM_TOKEN', 'VAULT_CONFIG_DIR', 'VAULT_PASSPHRASE_FILE']);
});

test('the stripped line names each variable, never a value, and says how to pass one', () => {
  const secret = 'ghp_' + 'q'.repeat(36);
  const { stripped } = build({ GITHUB_TOKEN: secret, PLAIN: 'x', 'ODD\x1b]0;x_TOKEN': 'k' }, {});
  const line = strippedLine(stripped);
  assert.equal(
    line,
    'vault-cli: not passed to the agent: GITHUB_TOKEN "ODD\\u001b]0;x_TOKEN" (--keep-env NAME passes one; a vault:// reference passes as it is)',
  );
  assert.ok(!line.includes(secret));
  assert.equal(strippedLine(build({ PLAIN: 'x' }).stripped), null);
});
