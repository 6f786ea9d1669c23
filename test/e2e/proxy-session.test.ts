// A `run` session's proxy admits only its session's token (issue 24). Before,
// it resolved with whatever token came in Proxy-Authorization: with the
// agent's long-lived token (found in a config or project directory), a
// `run --scope GitHub` session filled `vault://Payroll/password`, audited as
// if the session had. Now any other token is refused (403, VLT-2051) before
// the host is asked anything, and curl shows the code. Driven from inside
// `vault-cli run -- bash -c` on a real pty, with real curl.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa } from '../support/proxy.js';
import { installBin, underPty } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();
const github = `ghp_${hex(12)}`;
const payroll = `payroll-${hex(12)}`;
let up: Upstream;

/** `marker=<what the line says>` lines of the output, as a map. */
function said(output: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of output.split(/\r?\n/)) {
    const hit = /^([a-z-]+)=(.*)$/.exec(line.trim());
    if (hit !== null) m.set(hit[1] as string, hit[2] as string);
  }
  return m;
}

before(async () => {
  const ca = makeTestCa(rig.root);
  up = await Upstream.start(ca);
  await rig.create();
  await rig.set('GitHub', github);
  await rig.set('Payroll', payroll);
  const token = await rig.addAgent(
    'claude',
    ['GitHub', 'Payroll'],
    ['--per-minute', '100', '--per-hour', '100'],
  );
  installBin(rig);
  // Where an attacker found it: a file in the project directory.
  writeFileSync(join(rig.root, 'leaked-token'), token + '\n');
});
after(async () => {
  await up.close();
  await rig.dispose();
});

test('run --scope GitHub: the long-lived token through the session proxy fills nothing (VLT-2051); the session token still works', async () => {
  const url = `https://localhost:${up.port}`;
  const curl = `NO_PROXY= no_proxy= curl -sS -v -o /dev/null -w '%{http_code}'`;
  const script = [
    'T=$(cat leaked-token)',
    // The attack: the same proxy, the agent's own token as the proxy URL's user-info.
    `status=$(${curl} --proxy "http://vault:$T@127.0.0.1:1983" -H 'Authorization: Bearer vault://Payroll/password' ${url}/stolen 2>&1 | grep '^< HTTP/' | head -1)`,
    'echo "attack=${status#< }"',
    // The session's own token (its HTTPS_PROXY) fills what its scope holds, and only that.
    `echo "own=$(${curl} -H 'Authorization: Bearer vault://GitHub/password' ${url}/own 2>/dev/null)"`,
    `echo "narrow=$(${curl} -H 'Authorization: Bearer vault://Payroll/password' ${url}/narrow 2>/dev/null)"`,
  ].join('; ');
  const r = await underPty(rig, [
    'run',
    '--agent',
    'claude',
    '--scope',
    'GitHub',
    '--upstream-ca',
    join(rig.root, 'ca.pem'),
    '--allow-net',
    `localhost:${up.port}`,
    '--',
    'bash',
    '-c',
    script,
  ]).exited;
  assert.equal(r.exitCode, 0, r.output);
  const m = said(r.output);
  assert.match(m.get('attack') ?? '', /^HTTP\/1\.1 403 VLT-2051 /, r.output);
  assert.equal(m.get('own'), '200', r.output);
  assert.equal(m.get('narrow'), '403', r.output);
  assert.ok(!up.seen.some((s) => s.url === '/stolen'), 'the attack reached nothing');
  assert.ok(
    !up.seen.some((s) => s.rawHeaders.some((h) => h.includes(payroll))),
    'Payroll went nowhere',
  );
  assert.ok(up.header('authorization').includes(`Bearer ${github}`));
  const records = await auditRecords(rig);
  assert.ok(!records.some((a) => a.entry === 'Payroll' && a.action === 'fill'));
  assert.ok(records.some((a) => a.entry === 'GitHub' && a.action === 'fill'));
});
