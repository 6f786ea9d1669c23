// Trying the proxy against a local test service. `proxy env` prints
// NO_PROXY=localhost,127.0.0.1,::1, so a service on this machine is reached
// directly and gets the literal reference; `proxy env --no-local-bypass`
// prints an empty NO_PROXY and the same curl goes through the proxy and is
// filled. Real bash evaluating what `proxy env` printed, real curl, the real
// `vault-cli proxy`, a local HTTPS upstream.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import {
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { installBin } from '../support/pty.js';
import { Rig } from '../support/rig.js';

describe('proxy env --no-local-bypass: a local service through the proxy', () => {
  const rig = new Rig();
  const secret = `local-${hex(12)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let token: string;
  let bin: string;

  /** `eval "$(vault-cli proxy env FLAGS)"`, then `after`, in bash, as the agent. */
  function shell(flags: string, after: string) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const env = {
          ...rig.env,
          PATH: `${bin}:${process.env.PATH}`,
          VAULT_TOKEN: token,
          VAULT_PASSPHRASE_FILE: undefined,
        };
        const script = `eval "$(vault-cli proxy env --port ${proxy.port} ${flags})"; echo "no-proxy=$NO_PROXY"; ${after}`;
        const child = spawn('bash', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      },
    );
  }

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('Local', secret, 'token');
    token = await rig.addAgent('dev', ['Local'], ['--per-minute', '100']);
    proxy = await startProxy(rig, token, ca);
    bin = installBin(rig);
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  const ref = "-H 'Authorization: Bearer vault://Local/token'";

  test('by default a local service is reached directly: it gets the literal reference', async () => {
    const r = await shell(
      '',
      `curl -sS -o /dev/null --cacert ${ca.caFile} ${ref} https://localhost:${up.port}/direct`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^no-proxy=localhost,127\.0\.0\.1,::1$/m);
    const seen = up.seen.filter((s) => s.url === '/direct').at(-1);
    assert.ok(seen?.rawHeaders.includes('Bearer vault://Local/token'));
  });

  test('--no-local-bypass: NO_PROXY is empty and the same request goes through the proxy, filled', async () => {
    const r = await shell(
      '--no-local-bypass',
      `curl -sS ${ref} https://localhost:${up.port}/proxied`,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^no-proxy=$/m);
    assert.match(r.stdout, /you sent: Bearer vault:\/\/Local\/token/);
    assert.ok(!r.stdout.includes(secret));
    const seen = up.seen.filter((s) => s.url === '/proxied').at(-1);
    assert.ok(seen?.rawHeaders.includes(`Bearer ${secret}`));
  });
});
