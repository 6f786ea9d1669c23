// Exfiltration attempts count as violations (issue 27): a reference sent to a
// host its entry is not bound to (VLT-2045, judged by the host when it
// resolves) and a reference sent with a Host that is not the tunnel's
// destination (VLT-2048, seen by the proxy and reported to the host with the
// caller's token) each record one violation of the agent's limits, audited as
// `exfil` with the destination host, and the second locks the agent until the
// owner unlocks it with a hardware key. An honest agent's fills and
// pass-through requests never count, and no report can count against anyone
// but the token's own agent. Real curl and Node clients, the real `vault-cli
// proxy` process, a real HTTPS upstream, the real host; the unlock goes
// through the ceremony page with a software key.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call } from '../../src/client/client.js';
import type { ClientOptions } from '../../src/client/options.js';
import { VaultError, type ErrorCode } from '../../src/core/errors.js';
import { formatToken } from '../../src/crypto/token.js';
import { Authority } from '../../src/proxy/ca.js';
import { proxyUrl } from '../../src/proxy/caller.js';
import { startProxy as startInProcess } from '../../src/proxy/server.js';
import { enrolKey, unlockWithKey, type CeremonyHooks } from '../../src/webauthn/ceremony.js';
import { assertRefused, hex } from '../support/e2e-helpers.js';
import {
  Tunnel,
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { installBin, underPty } from '../support/pty.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import { SoftKey, UP } from '../support/soft-key.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

interface Out {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Everything any client printed, for the test that looks for the values. */
const outputs: string[] = [];

function curl(args: readonly string[]): Promise<Out> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-i', '--noproxy', '', ...args], {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('latin1')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      outputs.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The final response curl printed (after the CONNECT's `200 Connection Established`). */
function answer(out: string): { status: number; code: string | null; body: string } {
  const at = out.lastIndexOf('HTTP/1.1 ');
  const text = out.slice(at);
  const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(text)?.[1]);
  const code = /\r\nX-Vault-Error: (VLT-[0-9]{4})\r\n/i.exec(text)?.[1] ?? null;
  return { status, code, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

interface Record {
  readonly seq: number;
  readonly action: string;
  readonly actor: string;
  readonly outcome: string;
  readonly entry: string | null;
  readonly field: string | null;
  readonly host: string | null;
}

describe('exfiltration attempts count as violations', () => {
  const rig = new Rig();
  const apiValue = `api-${hex(16)}`;
  const boundValue = `bound-${hex(16)}`;
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  let ourCaPem: string;
  let client: ClientOptions;
  const target = () => `localhost:${up.port}`;
  const url = (path: string) => `https://localhost:${up.port}${path}`;

  before(async () => {
    ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    // API may go to this upstream (localhost); Bound only to api.example.com.
    await rig.set('API', apiValue, 'token');
    await rig.set('Bound', boundValue, 'token');
    ok(await rig.owner(['entry', 'hosts', 'API', 'localhost']));
    ok(await rig.owner(['entry', 'hosts', 'Bound', 'api.example.com']));
    // The proxy's own agent (init): every test's requests name their own caller.
    const own = await rig.addAgent('proxy-owner', ['API', 'Bound'], roomy);
    proxy = await startProxy(rig, own, ca);
    ourCa = ok(await rig.agent(['proxy', 'ca'], own)).trim();
    ourCaPem = readFileSync(ourCa, 'utf8');
    client = {
      vaultDir: rig.vaultDir,
      daemon: { node: process.execPath, script: CLI, env: rig.env },
      autoStart: false,
    };
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  const add = (name: string) => rig.addAgent(name, ['API', 'Bound'], roomy);

  /** curl -v through the proxy as `token`'s agent, with `headers`, to `path` on the upstream. */
  const via = (token: string, path: string, ...headers: string[]) =>
    curl([
      '-v',
      '--proxy',
      proxyUrl(proxy.port, token),
      '--cacert',
      ourCa,
      ...headers.flatMap((h) => ['-H', h]),
      url(path),
    ]);

  async function agent(name: string): Promise<{ id: string; state: string; violations: number[] }> {
    return JSON.parse(ok(await rig.owner(['agent', 'show', name, '--json']))) as {
      id: string;
      state: string;
      violations: number[];
    };
  }

  async function records(): Promise<Record[]> {
    return ok(await rig.owner(['audit', '--json']))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record);
  }

  async function lastSeq(): Promise<number> {
    return (await records()).at(-1)?.seq ?? 0;
  }

  /** The agent is locked: its reads in every mode get VLT-2043. */
  async function assertLocked(name: string, token: string): Promise<void> {
    assert.equal((await agent(name)).state, 'locked');
    assertRefused(await rig.agent(['get', 'API', '--field', 'token'], token), 'VLT-2043');
    // Refused at the CONNECT (the host is asked again once it found the agent locked) or inside.
    const r = await via(token, '/after-lock', 'X-Key: vault://API/token');
    assert.match(r.stdout + r.stderr, /HTTP\/1\.1 423 VLT-2043 /);
  }

  test('a reference to a host its entry is not bound to is one violation; the second locks the agent', async () => {
    const token = await add('unbound');
    const seen = up.seen.length;
    const first = answer(
      (await via(token, '/away', 'Authorization: Bearer vault://Bound/token')).stdout,
    );
    assert.equal(first.status, 403);
    assert.equal(first.code, 'VLT-2045');
    assert.match(first.body, /^vault-cli: VLT-2045: .*Violation recorded/);
    const a = await agent('unbound');
    assert.equal(a.state, 'violation');
    assert.equal(a.violations.length, 1);
    // A first violation does not lock: the agent's own fills still go.
    const fill = answer((await via(token, '/fine', 'X-Key: vault://API/token')).stdout);
    assert.equal(fill.status, 200);
    const second = answer((await via(token, '/away2', 'X-Key: vault://Bound/token')).stdout);
    assert.equal(second.status, 423);
    assert.equal(second.code, 'VLT-2043');
    assert.match(
      second.body,
      /Second violation \(a reference sent to a host its entry is not bound to\)/,
    );
    assert.ok(!up.seen.slice(seen).some((s) => s.url.startsWith('/away')), 'nothing went upstream');
    const mine = (await records()).filter((r) => r.actor === 'cli:unbound');
    assert.deepEqual(
      mine.filter((r) => r.action === 'exfil').map((r) => [r.outcome, r.entry, r.field, r.host]),
      [
        ['VLT-2045', 'Bound', 'token', 'localhost'],
        ['VLT-2045', 'Bound', 'token', 'localhost'],
      ],
    );
    assert.deepEqual(
      mine.filter((r) => r.action === 'locked').map((r) => [r.outcome, r.host]),
      [['VLT-2043', 'localhost']],
    );
    await assertLocked('unbound', token);
  });

  test('a reference with a Host that is not the tunnel’s destination is one violation, reported by the proxy; the second locks', async () => {
    const token = await add('fronting');
    const seen = up.seen.length;
    // Node, raw inside the tunnel: the proxy sees the Host, the host never does.
    const t = await Tunnel.open(proxy.port, target(), ourCaPem, token);
    t.send(`GET /fronted HTTP/1.1\r\nHost: other.example\r\nX-Key: vault://API/token\r\n\r\n`);
    const first = await t.reply();
    await t.close();
    assert.equal(first.status, 400);
    assert.match(first.head, /\r\nx-vault-error: VLT-2048/i);
    assert.match(
      first.body,
      /not the destination .*Violation recorded \(a reference sent with a Host that is not its destination\)/,
    );
    assert.equal((await agent('fronting')).state, 'violation');
    // curl, the same attempt again: the second violation.
    const second = answer(
      (await via(token, '/fronted2', 'Host: other.example', 'X-Key: vault://API/token')).stdout,
    );
    assert.equal(second.status, 423);
    assert.equal(second.code, 'VLT-2043');
    assert.match(
      second.body,
      /Second violation \(a reference sent with a Host that is not its destination\)/,
    );
    assert.ok(
      !up.seen.slice(seen).some((s) => s.url.startsWith('/fronted')),
      'nothing went upstream',
    );
    const mine = (await records()).filter((r) => r.actor === 'cli:fronting');
    assert.deepEqual(
      mine.filter((r) => r.action === 'exfil').map((r) => [r.outcome, r.entry, r.field, r.host]),
      [
        ['VLT-2048', 'API', 'token', 'localhost'],
        ['VLT-2048', 'API', 'token', 'localhost'],
      ],
    );
    assert.equal(mine.filter((r) => r.action === 'locked').length, 1);
    await assertLocked('fronting', token);
    // The proxy's own agent, whose token the proxy holds, was not the one counted.
    assert.equal((await agent('proxy-owner')).state, 'active');
  });

  test('the two kinds add up: an unbound host, then a Host mismatch, locks', async () => {
    const token = await add('mixed');
    assert.equal(
      answer((await via(token, '/m1', 'X-Key: vault://Bound/token')).stdout).code,
      'VLT-2045',
    );
    const r = answer(
      (await via(token, '/m2', 'Host: other.example', 'X-Key: vault://API/token')).stdout,
    );
    assert.equal(r.code, 'VLT-2043');
    assert.equal((await agent('mixed')).state, 'locked');
  });

  test('an honest agent: fills, pass-through requests, and requests without a reference anywhere never count', async () => {
    const token = await add('honest');
    const from = await lastSeq();
    for (let i = 0; i < 6; i++) {
      const r = answer(
        (await via(token, `/honest/${i}`, 'Authorization: Bearer vault://API/token')).stdout,
      );
      assert.equal(r.status, 200);
      assert.equal(r.body, 'you sent: Bearer vault://API/token\n', 'the echo is scrubbed');
    }
    assert.ok(up.header('authorization').includes(`Bearer ${apiValue}`));
    // No reference: the Host and the destination are nothing to the vault.
    const plain = answer((await via(token, '/honest/plain', 'Host: other.example')).stdout);
    assert.equal(plain.status, 200);
    const t = await Tunnel.open(proxy.port, `127.0.0.1:${up.port}`, ourCaPem, token);
    // 127.0.0.1 is a host API is not bound to; without a reference, nothing is at stake.
    t.send(
      `GET /honest/unbound HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nX-Plain: vault-less\r\n\r\n`,
    );
    assert.equal((await t.reply()).status, 200);
    t.send(`GET /honest/mismatch HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n`);
    assert.equal((await t.reply()).status, 200);
    await t.close();
    // Node fetch through the proxy (NODE_USE_ENV_PROXY), filled like curl's.
    const node = await new Promise<Out>((resolve, reject) => {
      const script = `fetch(${JSON.stringify(url('/honest/node'))}, { headers: { authorization: 'Bearer vault://API/token' } }).then(async (r) => console.log(r.status, await r.text()))`;
      const child = spawn(process.execPath, ['-e', script], {
        env: {
          PATH: process.env.PATH,
          HTTPS_PROXY: proxyUrl(proxy.port, token),
          NO_PROXY: '',
          NODE_USE_ENV_PROXY: '1',
          NODE_EXTRA_CA_CERTS: ourCa,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        outputs.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
    });
    assert.equal(node.stdout, '200 you sent: Bearer vault://API/token\n\n', node.stderr);
    const a = await agent('honest');
    assert.equal(a.state, 'active');
    assert.deepEqual(a.violations, []);
    const since = (await records()).filter((r) => r.seq > from && r.actor === 'cli:honest');
    assert.equal(since.filter((r) => r.action === 'fill').length, 7);
    assert.deepEqual(
      since.filter((r) => r.action !== 'fill'),
      [],
      'nothing but fills',
    );
  });

  test('a forged report cannot lock another agent: garbage, another agent’s id with a wrong secret, a field naming it', async () => {
    const victim = await add('victim');
    const attacker = await add('attacker');
    const victimId = (await agent('victim')).id;
    const signal = {
      kind: 'host_mismatch' as const,
      host: 'evil.example',
      refs: [{ entry: 'API', field: 'token' }],
    };
    const refused = async (token: string): Promise<ErrorCode> => {
      try {
        await call(client, 'report', { token, ...signal });
      } catch (err) {
        assert.ok(err instanceof VaultError, String(err));
        return err.code;
      }
      return assert.fail('accepted');
    };
    const forged = formatToken(Buffer.from(victimId, 'hex'), randomBytes(32));
    for (let i = 0; i < 3; i++) {
      assert.equal(await refused('not-a-token'), 'VLT-2040');
      assert.equal(await refused(`vlt_${hex(30)}`), 'VLT-2040');
      assert.equal(await refused(forged), 'VLT-2040');
    }
    // The attacker's own token, with a field naming the victim: the token decides, the field is nothing.
    const named = { token: attacker, agent: 'victim', name: 'victim', ...signal };
    assert.deepEqual(await call(client, 'report', named), { outcome: 'recorded' });
    assert.deepEqual(await call(client, 'report', named), { outcome: 'lockdown' });
    assert.equal((await agent('attacker')).state, 'locked');
    // Through the proxy: a tunnel needs a token the host knows (403 at CONNECT).
    const garbage = await via(forged, '/forged', 'Host: x.example', 'X-Key: vault://API/token');
    assert.match(garbage.stderr, /< HTTP\/1\.1 403 VLT-2040 /);
    const v = await agent('victim');
    assert.equal(v.state, 'active');
    assert.deepEqual(v.violations, []);
    assert.equal(ok(await rig.agent(['get', 'API', '--field', 'token'], victim)), `${apiValue}\n`);
    const all = await records();
    assert.ok(
      !all.some((r) => r.actor === 'cli:victim' && (r.action === 'exfil' || r.action === 'locked')),
    );
  });

  test('a flood of reports adds a bounded number of audit records, none after the lock', async () => {
    const token = await add('flooder');
    const from = await lastSeq();
    const refs = Array.from({ length: 1000 }, (_, i) => ({ entry: `guess-${i}`, field: 'token' }));
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(client, 'report', {
        token,
        kind: 'host_mismatch',
        host: 'evil.example',
        refs,
      });
      outcomes.push(r.outcome);
    }
    assert.deepEqual(outcomes, ['recorded', 'lockdown', ...Array(18).fill('locked')]);
    const added = (await records()).filter((r) => r.seq > from);
    // Per counted report: 16 references by name and one record for the rest; and the lock.
    assert.equal(added.filter((r) => r.action === 'exfil').length, 2 * 17);
    assert.equal(added.filter((r) => r.action === 'locked').length, 1);
    assert.equal(added.length, 2 * 17 + 1);
    const seqAfterLock = await lastSeq();
    await Promise.all(
      Array.from({ length: 10 }, () =>
        call(client, 'report', { token, kind: 'host_mismatch', host: 'evil.example', refs }),
      ),
    );
    assert.equal(await lastSeq(), seqAfterLock, 'a locked agent’s reports write nothing');
  });

  test('the lock holds until the owner unlocks with a hardware key; the violations go with it', async () => {
    const token = await add('strikes');
    await via(token, '/s1', 'X-Key: vault://Bound/token');
    await via(token, '/s2', 'X-Key: vault://Bound/token');
    await assertLocked('strikes', token);
    // No key enrolled: the passphrase alone lifts nothing.
    assertRefused(await rig.owner(['agent', 'unlock', 'strikes', '--no-browser']), 'VLT-4004');
    assert.equal((await agent('strikes')).state, 'locked');
    // A software key, enrolled and then presented through the ceremony page.
    const key = new SoftKey();
    const enrolled = await throughPage(
      client,
      (hooks) => enrolKey(PASSPHRASE, 'soft', hooks),
      (p) => {
        const r = key.registration(p.challenge);
        const clientDataJSON = key
          .clientData('webauthn.create', p.challenge, p.origin)
          .toString('base64url');
        return JSON.stringify({
          credential: { ...r, response: { ...r.response, clientDataJSON } },
        });
      },
    );
    assert.ok(enrolled.ok, String(!enrolled.ok && enrolled.err));
    const unlocked = await throughPage(
      client,
      (hooks) => unlockWithKey('strikes', PASSPHRASE, hooks),
      (p) => {
        const authData = key.authData(UP, 1, false);
        const clientData = key.clientData('webauthn.get', p.challenge, p.origin);
        return JSON.stringify({
          credential: SoftKey.assertionJSON(key.id, {
            authData,
            clientDataJSON: clientData,
            signature: key.sign(authData, clientData),
          }),
        });
      },
    );
    assert.ok(unlocked.ok, String(!unlocked.ok && unlocked.err));
    assert.equal(ok(await rig.agent(['get', 'API', '--field', 'token'], token)), `${apiValue}\n`);
    // The next attempt is a first violation again, not a lock.
    const again = answer((await via(token, '/s3', 'X-Key: vault://Bound/token')).stdout);
    assert.equal(again.code, 'VLT-2045');
    assert.equal((await agent('strikes')).state, 'violation');
  });

  test('a fill asks the host once, as before: the proxy reports only a request it refused', async () => {
    const token = await add('counted');
    const calls = { resolve: 0, report: 0, whoami: 0 };
    const caFile = join(rig.root, 'counting-ca.pem');
    const counting = await startInProcess({
      port: 0,
      authority: Authority.ephemeral({
        cert: caFile,
        bundle: join(rig.root, 'counting-bundle.pem'),
        systemRoots: ca.caFile,
      }),
      upstreamCa: [readFileSync(ca.caFile, 'utf8')],
      resolve: async (refs, host, caller) => {
        calls.resolve++;
        const r = await call(client, 'resolve', { token: caller ?? token, refs: [...refs], host });
        return r.values.map((v) => Buffer.from(v, 'base64'));
      },
      admit: async (caller) => {
        calls.whoami++;
        await call(client, 'whoami', { token: caller });
      },
      report: (signal, caller) => {
        calls.report++;
        return call(client, 'report', {
          token: caller ?? token,
          ...signal,
          refs: [...signal.refs],
        });
      },
    });
    try {
      const t = await Tunnel.open(counting.port, target(), readFileSync(caFile, 'utf8'), token);
      for (let i = 0; i < 5; i++) {
        t.send(`GET /count/${i} HTTP/1.1\r\nHost: ${target()}\r\nX-Key: vault://API/token\r\n\r\n`);
        assert.equal((await t.reply()).status, 200);
      }
      t.send(`GET /count/plain HTTP/1.1\r\nHost: other.example\r\n\r\n`);
      assert.equal((await t.reply()).status, 200);
      assert.deepEqual(calls, { resolve: 5, report: 0, whoami: 1 });
      t.send(`GET /count/x HTTP/1.1\r\nHost: other.example\r\nX-Key: vault://API/token\r\n\r\n`);
      assert.equal((await t.reply()).status, 400);
      await t.close();
      assert.deepEqual(calls, { resolve: 5, report: 1, whoami: 1 });
      assert.equal((await agent('counted')).state, 'violation');
    } finally {
      await counting.close();
    }
  });

  test('no value in any client output, audit record, host log or proxy output', async () => {
    const audit = ok(await rig.owner(['audit', '--json']));
    assert.ok(audit.includes('"exfil"'));
    const log = readFileSync(join(rig.vaultDir, 'host.log'), 'utf8');
    for (const value of [apiValue, boundValue]) {
      assert.ok(!audit.includes(value), 'audit');
      assert.ok(!log.includes(value), 'host log');
      assert.ok(!proxy.stderr().includes(value), 'proxy stderr');
      assert.ok(!outputs.some((o) => o.includes(value)), 'client output');
    }
    assert.ok(
      !up.seen.some((s) => s.rawHeaders.some((h) => h.includes(boundValue))),
      'Bound went nowhere',
    );
  });
});

describe('under vault-cli run: the session proxy reports as the session, the host counts for its agent', () => {
  const rig = new Rig();
  let up: Upstream;

  before(async () => {
    const ca = makeTestCa(rig.root);
    up = await Upstream.start(ca);
    await rig.create();
    await rig.set('API', `api-${hex(16)}`, 'token');
    await rig.set('Bound', `bound-${hex(16)}`, 'token');
    ok(await rig.owner(['entry', 'hosts', 'Bound', 'api.example.com']));
    await rig.addAgent('claude', ['API', 'Bound'], roomy);
    await rig.addAgent('bystander', ['API'], roomy);
    installBin(rig);
  });
  after(async () => {
    await up.close();
    await rig.dispose();
  });

  test('run: a Host mismatch, then a reference to an unbound host, lock the agent; its next read inside is VLT-2043', async () => {
    const url = `https://localhost:${up.port}`;
    const c = `NO_PROXY= no_proxy= curl -sS -o /dev/null -w '%{http_code}'`;
    const script = [
      `echo "fronted=$(${c} -H 'Host: other.example' -H 'X-Key: vault://API/token' ${url}/f1)"`,
      `echo "unbound=$(${c} -H 'X-Key: vault://Bound/token' ${url}/f2)"`,
      `echo "read=$(vault-cli get API --field token 2>&1 >/dev/null | cut -c1-20)"`,
    ].join('; ');
    const r = await underPty(rig, [
      'run',
      '--agent',
      'claude',
      '--upstream-ca',
      join(rig.root, 'ca.pem'),
      '--allow-net',
      `localhost:${up.port}`,
      '--',
      'bash',
      '-c',
      script,
    ]).exited;
    const said = new Map(
      [...r.output.matchAll(/^(fronted|unbound|read)=(.*?)\r?$/gm)].map((m) => [m[1], m[2]]),
    );
    assert.equal(said.get('fronted'), '400', r.output);
    assert.equal(said.get('unbound'), '423', r.output);
    assert.equal(said.get('read'), 'vault-cli: VLT-2043:', r.output);
    assert.ok(!up.seen.some((s) => s.url === '/f1' || s.url === '/f2'), 'nothing went upstream');
    const show = (name: string) =>
      rig
        .owner(['agent', 'show', name, '--json'])
        .then((x) => JSON.parse(ok(x)) as { state: string });
    assert.equal((await show('claude')).state, 'locked');
    assert.equal((await show('bystander')).state, 'active');
    const audit = ok(await rig.owner(['audit', '--json']))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record);
    assert.deepEqual(
      audit.filter((a) => a.action === 'exfil').map((a) => [a.actor, a.outcome, a.entry, a.host]),
      [
        ['cli:claude', 'VLT-2048', 'API', 'localhost'],
        ['cli:claude', 'VLT-2045', 'Bound', 'localhost'],
      ],
    );
  });
});

type Fate<T> = { ok: true; value: T } | { ok: false; err: unknown };

/**
 * Runs one ceremony through its page to the host: `start` is enrolKey or
 * unlockWithKey; once the page is up, `body` (given the page's challenge and
 * origin) is posted to it as the browser's result (test/attack/webauthn-fuzz.test.ts).
 */
async function throughPage<T>(
  client: ClientOptions,
  start: (hooks: CeremonyHooks) => Promise<T>,
  body: (page: { challenge: string; origin: string }) => string,
): Promise<Fate<T>> {
  let onUrl: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (onUrl = resolve));
  const fate = start({
    call: (op, b) => call(client, op, b),
    onUrl: (u) => onUrl(u),
    timeoutMs: 20_000,
  }).then(
    (value): Fate<T> => ({ ok: true, value }),
    (err: unknown): Fate<T> => ({ ok: false, err }),
  );
  const first = await Promise.race([url, fate]);
  if (typeof first !== 'string') return first;
  const html = await (await fetch(first)).text();
  const m = /const OPTIONS = (.*);\n/.exec(html);
  assert.ok(m?.[1] !== undefined, 'options in the page');
  const { challenge } = JSON.parse(m[1]) as { challenge: string };
  await fetch(first + '/result', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body({ challenge, origin: new URL(first).origin }),
  });
  return fate;
}
