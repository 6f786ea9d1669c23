// A SigV4 re-sign is a release like any fill (docs/proxy.md, AWS SigV4): the
// agent's rate limits charge it, a key pair bound by `entry hosts` elsewhere
// counts as an exfiltration attempt toward the two-strike lockdown, a locked
// agent gets nothing re-signed, and each is audited. Real aws CLI, real
// proxy, the stand-in verifying signatures (test/support/aws-standin.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { awsEnv } from '../../src/crypto/aws-surrogate.js';
import { AwsStandIn } from '../support/aws-standin.js';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { makeTestCa, startProxy, type ProxyProcess } from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
const secret = `SENTINELsecret${hex(12)}`;
const keyId = `AKIA${hex(8).toUpperCase()}`;
let stand: AwsStandIn;
let proxy: ProxyProcess;
let base: NodeJS.ProcessEnv;
let runner: string;

/** `aws s3api list-buckets` as the agent with `token`, for `entry`'s surrogate: one attempt. */
async function listBuckets(token: string, entry: string) {
  // The proxy's CA variables as its own agent sees them (`proxy env` as another
  // token would make that token's CA); this agent's surrogate, bound to its token,
  // which names the caller in the proxy URL.
  const out = ok(await rig.agent(['proxy', 'env', '--no-local-bypass'], runner));
  const vars: Record<string, string> = Object.fromEntries(awsEnv(token, entry));
  for (const m of out.matchAll(/^export ([A-Za-z_0-9]+)=(.*)$/gm))
    vars[m[1] as string] = (m[2] as string).replace(/^'(.*)'$/, '$1');
  const via = `http://vault:${encodeURIComponent(token)}@127.0.0.1:${proxy.port}`;
  const env = { ...base, ...vars, HTTPS_PROXY: via, https_proxy: via };
  const args = ['s3api', 'list-buckets', '--endpoint-url', `https://localhost:${stand.port}`];
  return new Promise<{ code: number; out: string }>((resolve) =>
    execFile('/usr/bin/aws', args, { env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : 1, out: stdout + stderr }),
    ),
  );
}

before(async () => {
  const ca = makeTestCa(rig.root);
  stand = await AwsStandIn.start(ca, [{ id: keyId, secret }]);
  await rig.create();
  for (const e of ['AWS', 'Second', 'Bound']) {
    await rig.set(e, keyId, 'access_key_id');
    await rig.set(e, secret, 'secret_access_key');
  }
  ok(await rig.owner(['entry', 'hosts', 'Bound', 's3.amazonaws.com']));
  runner = await rig.addAgent('runner', ['AWS'], ['--per-minute', '100']);
  proxy = await startProxy(rig, runner, ca);
  const home = join(rig.root, 'home');
  mkdirSync(home);
  const config = join(home, 'config');
  writeFileSync(config, '[default]\nregion = us-east-1\n');
  base = {
    PATH: process.env.PATH,
    HOME: home,
    AWS_CONFIG_FILE: config,
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_MAX_ATTEMPTS: '1',
  };
});
after(async () => {
  await proxy?.stop();
  await stand?.close();
  await rig.dispose();
});

test('rate limits charge re-signs: a second credential within the minute is 429 VLT-2042, and nothing reaches the stand-in', async () => {
  const tight = await rig.addAgent('tight', ['AWS', 'Second'], ['--per-minute', '1']);
  const first = await listBuckets(tight, 'AWS');
  assert.equal(first.code, 0, first.out);
  const seen = stand.up.seen.length;
  const second = await listBuckets(tight, 'Second');
  assert.notEqual(second.code, 0);
  assert.match(second.out, /429/);
  assert.equal(stand.up.seen.length, seen);
  const records = (await auditRecords(rig)).filter((a) => a.actor === 'cli:tight');
  assert.ok(records.some((a) => a.action === 'fill' && a.entry === 'AWS' && a.outcome === 'ok'));
  assert.ok(records.some((a) => a.action === 'limited' && a.outcome === 'VLT-2042'));
});

test('a key pair bound to other hosts: each re-sign to this one is an exfil attempt; the second locks the agent, who then gets nothing re-signed', async () => {
  const agent = await rig.addAgent('bound', ['Bound', 'AWS'], ['--per-minute', '100']);
  const seen = stand.up.seen.length;
  const one = await listBuckets(agent, 'Bound');
  assert.notEqual(one.code, 0);
  assert.match(one.out, /403/);
  const two = await listBuckets(agent, 'Bound');
  assert.match(two.out, /423/);
  // Locked: even the entry it may send here is not re-signed (the proxy's
  // CONNECT is refused 423 now; the aws CLI reports that as a proxy failure).
  const three = await listBuckets(agent, 'AWS');
  assert.notEqual(three.code, 0);
  assert.match(three.out, /423|Failed to connect to proxy/);
  assert.equal(stand.up.seen.length, seen);
  const records = (await auditRecords(rig)).filter((a) => a.actor === 'cli:bound');
  // Audited as a fill's references are: each field refused by name (the key id and the secret).
  const exfil = records.filter((a) => a.action === 'exfil' && a.outcome === 'VLT-2045');
  assert.deepEqual(
    exfil.map((a) => a.field),
    ['access_key_id', 'secret_access_key', 'access_key_id', 'secret_access_key'],
  );
  assert.ok(records.some((a) => a.action === 'locked'));
});

test('request caveats apply to re-signs: GET / is signed, a request outside them is refused (VLT-2060) before the host signs', async () => {
  const scoped = await rig.addAgent('scoped', ['AWS'], ['--per-minute', '100']);
  ok(await rig.owner(['agent', 'caveats', 'scoped', 'AWS', 'GET /']));
  const listed = await listBuckets(scoped, 'AWS');
  assert.equal(listed.code, 0, listed.out);
  ok(await rig.owner(['agent', 'caveats', 'scoped', 'AWS', 'GET /only-this']));
  const seen = stand.up.seen.length;
  const refused = await listBuckets(scoped, 'AWS');
  assert.notEqual(refused.code, 0, refused.out);
  assert.equal(stand.up.seen.length, seen, 'nothing reached the stand-in');
  const records = (await auditRecords(rig)).filter((a) => a.actor === 'cli:scoped');
  assert.ok(
    records.some((a) => a.outcome === 'VLT-2060' && a.entry === 'AWS'),
    'audited as VLT-2060',
  );
});
