// AWS SigV4 re-signing at the proxy (docs/proxy.md, AWS SigV4), driven by the
// real AWS CLI (Debian's /usr/bin/aws): the agent holds a surrogate key id
// and a public surrogate secret; the proxy recognises requests signed with
// them, the host releases the entry's key pair as a fill and signs with it,
// and a local S3/STS stand-in verifies every signature with the real key
// (test/support/aws-standin.ts, its own verifier) and rejects the surrogate's.
// What cannot be re-signed (a presigned URL, SigV4A, aws-chunked), malformed
// signatures and another session's surrogate are refused with a code, and
// nothing reaches the stand-in.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mintSurrogate, SURROGATE_SECRET } from '../../src/crypto/aws-surrogate.js';
import { AwsStandIn } from '../support/aws-standin.js';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { curl, makeTestCa, startProxy, type ProxyProcess, type TestCa } from '../support/proxy.js';
import { installBin, underPty } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';

const AWS = '/usr/bin/aws';
const rig = new Rig();
/** Planted sentinels: the secret keys and session token must never reach the agent's side. */
const secretKey = `SENTINELsecret${hex(12)}`;
const tempSecret = `SENTINELtemp${hex(12)}`;
const sessionToken = `SENTINELtoken${hex(16)}`;
const keyId = `AKIA${hex(8).toUpperCase()}`;
const tempId = `ASIA${hex(8).toUpperCase()}`;
let ca: TestCa;
let aws: AwsStandIn;
let proxy: ProxyProcess;
let token: string;
let other: string;
let home: string;
let base: NodeJS.ProcessEnv;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The real aws CLI in `env` alone (nothing of the test's environment). */
function awsCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(AWS, [...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `proxy env` as the agent, as a map. */
async function proxyEnvOf(entry: string, as: string): Promise<Record<string, string>> {
  const args = ['proxy', 'env', '--port', String(proxy.port), '--no-local-bypass', '--aws', entry];
  const out = ok(await rig.agent(args, as));
  const vars: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m === null) continue;
    const v = m[2] as string;
    vars[m[1] as string] = v.startsWith("'") ? v.slice(1, -1).replaceAll(`'\\''`, "'") : v;
  }
  assert.ok(!out.includes(secretKey) && !out.includes(keyId), 'proxy env holds no key');
  return vars;
}

const endpoint = () => `https://localhost:${aws.port}`;

/** Every file under `dir`, read. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push(readFileSync(p, 'latin1'));
  }
  return out;
}

const noSecret = (text: string, where: string) => {
  for (const s of [secretKey, tempSecret, sessionToken])
    assert.ok(!text.includes(s), `${where} holds a planted secret`);
};

before(async () => {
  ca = makeTestCa(rig.root);
  aws = await AwsStandIn.start(ca, [
    { id: keyId, secret: secretKey },
    { id: tempId, secret: tempSecret, sessionToken },
  ]);
  aws.up.routes.set('/standin-bucket', aws.up.routes.get('/') as never);
  await rig.create();
  await rig.set('AWS', keyId, 'access_key_id');
  await rig.set('AWS', secretKey, 'secret_access_key');
  await rig.set('AWS', 'us-east-1', 'region');
  await rig.set('Temp', tempId, 'access_key_id');
  await rig.set('Temp', tempSecret, 'secret_access_key');
  await rig.set('Temp', sessionToken, 'session_token');
  const limits = ['--per-minute', '100', '--per-hour', '100'];
  token = await rig.addAgent('ci', ['AWS', 'Temp'], limits);
  other = await rig.addAgent('other', ['AWS'], limits);
  proxy = await startProxy(rig, token, ca);
  home = join(rig.root, 'agent-home');
  mkdirSync(home, { recursive: true });
  const config = join(home, 'aws-config');
  writeFileSync(config, '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n');
  const creds = join(home, 'aws-credentials');
  writeFileSync(creds, '');
  base = {
    PATH: process.env.PATH,
    HOME: home,
    AWS_CONFIG_FILE: config,
    AWS_SHARED_CREDENTIALS_FILE: creds,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
  };
});
after(async () => {
  await proxy?.stop();
  await aws?.close();
  await rig.dispose();
});

describe('the real aws CLI through the proxy', () => {
  test('proxy env --aws gives a surrogate the CLI accepts; list-buckets is re-signed with the real key and audited as a fill', async () => {
    const vars = await proxyEnvOf('AWS', token);
    assert.equal(vars.AWS_ACCESS_KEY_ID, mintSurrogate(token, 'AWS'));
    assert.equal(vars.AWS_SECRET_ACCESS_KEY, SURROGATE_SECRET);
    assert.ok(vars.AWS_CA_BUNDLE?.endsWith('proxy-ca-bundle.pem'));
    const seen = aws.verdicts.length;
    const r = await awsCli(['s3api', 'list-buckets', '--endpoint-url', endpoint()], {
      ...base,
      ...vars,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /standin-bucket/);
    const v = aws.verdicts.slice(seen);
    assert.ok(v.length >= 1);
    assert.deepEqual(
      v.map((x) => [x.ok, x.keyId]),
      v.map(() => [true, keyId]),
    );
    noSecret(r.stdout + r.stderr, 'aws output');
    const fills = (await auditRecords(rig)).filter(
      (a) => a.action === 'fill' && a.entry === 'AWS' && a.outcome === 'ok',
    );
    assert.ok(fills.length >= 1);
    assert.equal((fills.at(-1) as { host?: string } | undefined)?.host, 'localhost');
  });

  test('aws s3 cp uploads a file in one PUT, re-signed; the stand-in checks the body against the signed hash', async () => {
    const vars = await proxyEnvOf('AWS', token);
    const file = join(home, 'upload.txt');
    const content = `hello from the agent ${hex(8)}\n`.repeat(50);
    writeFileSync(file, content);
    const seen = aws.verdicts.length;
    const r = await awsCli(
      ['s3', 'cp', file, 's3://standin-bucket/dir/upload.txt', '--endpoint-url', endpoint()],
      { ...base, ...vars },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(aws.objects.get('/standin-bucket/dir/upload.txt')?.toString(), content);
    const puts = aws.verdicts.slice(seen).filter((x) => x.method === 'PUT');
    assert.equal(puts.length, 1);
    assert.equal(puts[0]?.ok, true);
    const sent = aws.up.seen.filter((s) => s.method === 'PUT').at(-1);
    const hash = sent?.rawHeaders.find(
      (_, i, a) => a[i - 1]?.toLowerCase() === 'x-amz-content-sha256',
    );
    // What awscli 2.9 sends for a single PUT over HTTPS, through a proxy too.
    assert.equal(hash, 'UNSIGNED-PAYLOAD');
    noSecret(r.stdout + r.stderr, 'aws output');
  });

  test('with payload signing on, the PUT carries the body hash: re-signed, and the stand-in checks the body against it', async () => {
    const vars = await proxyEnvOf('AWS', token);
    const config = join(home, 'aws-config-signed');
    writeFileSync(
      config,
      '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n    payload_signing_enabled = true\n',
    );
    const file = join(home, 'signed.txt');
    const content = `signed body ${hex(8)}\n`;
    writeFileSync(file, content);
    const seen = aws.verdicts.length;
    const r = await awsCli(
      ['s3', 'cp', file, 's3://standin-bucket/signed.txt', '--endpoint-url', endpoint()],
      { ...base, ...vars, AWS_CONFIG_FILE: config },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(aws.objects.get('/standin-bucket/signed.txt')?.toString(), content);
    const sent = aws.up.seen.filter((s) => s.method === 'PUT').at(-1);
    const hash = sent?.rawHeaders.find(
      (_, i, a) => a[i - 1]?.toLowerCase() === 'x-amz-content-sha256',
    );
    assert.equal(hash, createHash('sha256').update(content).digest('hex'));
    assert.deepEqual(
      aws.verdicts.slice(seen).map((v) => v.ok),
      [true],
    );
  });

  test('aws sts get-caller-identity with a session token: the surrogate token is replaced by the real one, signed', async () => {
    const vars = await proxyEnvOf('Temp', token);
    const seen = aws.verdicts.length;
    const r = await awsCli(
      ['sts', 'get-caller-identity', '--endpoint-url', endpoint(), '--output', 'json'],
      { ...base, ...vars },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /123456789012/);
    const v = aws.verdicts.slice(seen);
    assert.deepEqual(
      v.map((x) => [x.ok, x.keyId]),
      [[true, tempId]],
    );
    // The stand-in names the key id it saw: the client gets the surrogate back.
    assert.ok(!r.stdout.includes(tempId), r.stdout);
    noSecret(r.stdout + r.stderr, 'aws output');
  });

  test('the stand-in rejects the surrogate itself: without the proxy, the request fails', async () => {
    const vars = await proxyEnvOf('AWS', token);
    const direct = { ...base, ...vars, NO_PROXY: '*', no_proxy: '*', AWS_CA_BUNDLE: ca.caFile };
    const seen = aws.verdicts.length;
    const r = await awsCli(['s3api', 'list-buckets', '--endpoint-url', endpoint()], direct);
    assert.notEqual(r.code, 0);
    const v = aws.verdicts.slice(seen);
    assert.ok(v.length >= 1 && v.every((x) => !x.ok && x.why === 'InvalidAccessKeyId'));
  });

  test('a presigned URL made with the surrogate is refused (VLT-2057) and never reaches the stand-in', async () => {
    const vars = await proxyEnvOf('AWS', token);
    const p = await awsCli(
      ['s3', 'presign', 's3://standin-bucket/dir/upload.txt', '--endpoint-url', endpoint()],
      { ...base, ...vars },
    );
    assert.equal(p.code, 0, p.stderr);
    const url = p.stdout.trim();
    assert.match(url, /X-Amz-Credential=VLT0/);
    const seen = aws.up.seen.length;
    const r = await curl(
      ['-sS', '-i', '--proxy', proxy.url, '--cacert', vars.AWS_CA_BUNDLE as string, url],
      { PATH: process.env.PATH, HOME: home },
    );
    assert.match(r.stdout, /^HTTP\/1\.1 400 VLT-2057 /m, r.stdout);
    assert.match(
      r.stdout,
      /vault-cli: VLT-2057: A presigned URL signed with a vault-cli surrogate key cannot be re-signed; nothing was sent\./,
    );
    assert.equal(aws.up.seen.length, seen);
  });
});

describe('refusals: nothing is forwarded', () => {
  const surrogate = () => mintSurrogate(token, 'AWS');
  const date = '20260101T000000Z';
  const sig = 'a'.repeat(64);
  const good = () =>
    `AWS4-HMAC-SHA256 Credential=${surrogate()}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${sig}`;

  async function send(headers: string[], path = '/'): Promise<string> {
    const args = [
      '-sS',
      '-i',
      '--proxy',
      proxy.url,
      '--cacert',
      join(rig.configDir, 'proxy-ca.pem'),
    ];
    const hs = headers.flatMap((h) => ['-H', h]);
    const r = await curl([...args, ...hs, `${endpoint()}${path}`], { PATH: process.env.PATH });
    return r.stdout;
  }

  const cases: [string, string[], string][] = [
    ['no signature', [`Authorization: AWS4-HMAC-SHA256 Credential=${'X'}`], 'VLT-2056'],
    ['scope too short', [], 'VLT-2056'],
    ['no X-Amz-Date', [], 'VLT-2056'],
    ['a date of another day', [], 'VLT-2056'],
    ['a signed header absent', [], 'VLT-2056'],
    ['a foreign session token', [], 'VLT-2056'],
    ['SigV4A', [], 'VLT-2057'],
    ['aws-chunked streaming', [], 'VLT-2057'],
  ];
  const build = (name: string): string[] => {
    const s = surrogate();
    const d = `X-Amz-Date: ${date}`;
    switch (name) {
      case 'no signature':
        return [
          `Authorization: AWS4-HMAC-SHA256 Credential=${s}/20260101/us-east-1/s3/aws4_request`,
          d,
        ];
      case 'scope too short':
        return [
          `Authorization: AWS4-HMAC-SHA256 Credential=${s}/20260101/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${sig}`,
          d,
        ];
      case 'no X-Amz-Date':
        return [`Authorization: ${good()}`];
      case 'a date of another day':
        return [`Authorization: ${good()}`, 'X-Amz-Date: 20260102T000000Z'];
      case 'a signed header absent':
        return [
          `Authorization: ${good().replace('host;x-amz-date', 'host;x-amz-date;x-custom')}`,
          d,
        ];
      case 'a foreign session token':
        return [`Authorization: ${good()}`, d, 'X-Amz-Security-Token: someone-elses-real-token'];
      case 'SigV4A':
        return [
          `Authorization: ${good().replace('AWS4-HMAC-SHA256', 'AWS4-ECDSA-P256-SHA256')}`,
          d,
        ];
      default:
        return [
          `Authorization: ${good()}`,
          d,
          'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        ];
    }
  };
  for (const [name, , code] of cases) {
    test(`${name}: ${code}, nothing reaches the stand-in`, async () => {
      const seen = aws.up.seen.length;
      const out = await send(build(name));
      assert.match(out, new RegExp(`^HTTP/1\\.1 40[0-9] ${code} `, 'm'), out);
      assert.match(out, new RegExp(`vault-cli: ${code}: `));
      assert.equal(aws.up.seen.length, seen);
    });
  }

  test('a surrogate minted for another agent is refused (VLT-2058), audited, and nothing reaches the stand-in', async () => {
    const theirs = mintSurrogate(other, 'AWS');
    const seen = aws.up.seen.length;
    const out = await send([
      `Authorization: ${good().replace(surrogate(), theirs)}`,
      `X-Amz-Date: ${date}`,
    ]);
    assert.match(out, /^HTTP\/1\.1 403 VLT-2058 /m, out);
    assert.equal(aws.up.seen.length, seen);
    const denied = (await auditRecords(rig)).filter((a) => a.outcome === 'VLT-2058');
    assert.ok(denied.length >= 1);
  });
});

test('under run --aws, sandboxed: the agent’s environment, output and files hold no secret key, and its aws CLI works', async () => {
  installBin(rig);
  const work = join(rig.root, 'run-work');
  mkdirSync(work, { recursive: true });
  const via = 'NO_PROXY= no_proxy=';
  const script = [
    `export HOME=${work} AWS_CONFIG_FILE=${base.AWS_CONFIG_FILE} AWS_SHARED_CREDENTIALS_FILE=${base.AWS_SHARED_CREDENTIALS_FILE} AWS_PAGER=`,
    `env > ${work}/env.txt`,
    `${via} ${AWS} sts get-caller-identity --endpoint-url ${endpoint()} --output json > ${work}/out.txt 2>&1`,
    `echo "aws-exit=$?"`,
    `cat ${work}/out.txt`,
    // A surrogate minted outside this session (for the agent's own token): not this session's.
    `${via} AWS_ACCESS_KEY_ID=${mintSurrogate(token, 'Temp')} AWS_MAX_ATTEMPTS=1 ${AWS} sts get-caller-identity --endpoint-url ${endpoint()} > /dev/null 2>&1`,
    `echo "foreign-exit=$?"`,
  ].join('; ');
  const before = aws.verdicts.length;
  const r = await underPty(rig, [
    'run',
    '--agent',
    'ci',
    '--aws',
    'Temp',
    '--upstream-ca',
    ca.caFile,
    // The stand-in is on the outer machine's loopback: the sandbox's proxy reaches it only when allowed.
    '--allow-net',
    `localhost:${aws.port}`,
    '--',
    'sh',
    '-c',
    script,
  ]).exited;
  assert.equal(r.exitCode, 0, r.output);
  assert.match(r.output, /aws-exit=0/);
  // The foreign surrogate: refused by the session's proxy (run lists the refusal), never verified upstream.
  assert.match(r.output, /foreign-exit=[1-9]/);
  assert.match(r.output, /VLT-2058/);
  assert.deepEqual(
    aws.verdicts.slice(before).map((v) => [v.ok, v.keyId]),
    [[true, tempId]],
  );
  assert.match(r.output, /123456789012/);
  const env = readFileSync(join(work, 'env.txt'), 'utf8');
  assert.match(env, /^AWS_ACCESS_KEY_ID=VLT0/m);
  assert.match(env, new RegExp(`^AWS_SECRET_ACCESS_KEY=${SURROGATE_SECRET}$`, 'm'));
  noSecret(r.output, 'the transcript');
  for (const f of filesUnder(work)) noSecret(f, 'a file the agent wrote');
  assert.ok(!env.includes(tempId) && !r.output.includes(tempId), 'not even the key id');
});

test('a profile’s aws setting gives the agent the surrogate without --aws; --aws overrides it', async () => {
  installBin(rig);
  const work = join(rig.root, 'profile-work');
  mkdirSync(work, { recursive: true });
  mkdirSync(rig.configDir, { recursive: true });
  writeFileSync(
    join(rig.configDir, 'profiles.json'),
    JSON.stringify({ awsshell: { summary: 'a shell with AWS', commands: [], aws: 'Temp' } }),
  );
  const runEnv = async (extra: string[], file: string) => {
    const r = await underPty(rig, [
      'run',
      '--agent',
      'ci',
      '--profile',
      'awsshell',
      ...extra,
      '--',
      'sh',
      '-c',
      `env > ${join(work, file)}`,
    ]).exited;
    assert.equal(r.exitCode, 0, r.output);
    return readFileSync(join(work, file), 'utf8');
  };
  const fromProfile = await runEnv([], 'profile.txt');
  assert.match(fromProfile, /^AWS_ACCESS_KEY_ID=VLT0/m);
  assert.match(fromProfile, new RegExp(`^AWS_SECRET_ACCESS_KEY=${SURROGATE_SECRET}$`, 'm'));
  assert.ok(!fromProfile.includes(tempId), 'no real key id');
  // The surrogate names its entry: --aws for another entry gives another one.
  const flag = await runEnv(['--aws', 'Other'], 'flag.txt');
  const id = (env: string) => /^AWS_ACCESS_KEY_ID=(.*)$/m.exec(env)?.[1];
  assert.ok(id(flag)?.startsWith('VLT0'));
  assert.notEqual(id(flag), id(fromProfile));
});
