// OAuth2 refresh in the host (issue 40), as an agent meets it: the real
// `vault-cli proxy`, a real host under libfaketime (so the test moves its
// clock past an access token's expiry), a local HTTPS token endpoint that
// rotates refresh tokens and refuses a stale one (as GitHub Apps and
// Microsoft do), and an upstream that echoes what it was sent.
// `Authorization: Bearer vault://App/access_token` is filled with a current
// access token; 100 fills across an expiry cost exactly two refreshes; the
// rotated refresh token is kept; the refresh token and client secret appear
// nowhere outside the host (planted sentinels, scanned for in the proxy's
// environment and argv, the audit, every file under the test's root, what the
// agent and the upstream saw); a token endpoint that answers garbage, an
// error or nothing is a refusal (VLT-2063) with nothing forwarded; the
// limits, a lock and request caveats apply to refreshed fills.
import assert from 'node:assert/strict';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertRefused, auditRecords, hex } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import {
  Tunnel,
  Upstream,
  makeTestCa,
  startProxy,
  type ProxyProcess,
  type TestCa,
} from '../support/proxy.js';
import { Rig, ok } from '../support/rig.js';

const skip = LIBFAKETIME === null ? 'libfaketime not installed' : false;

/** A token endpoint: rotates the refresh token on each use, refuses a stale one. */
class TokenEndpoint {
  readonly posts: Record<string, string>[] = [];
  mode: 'ok' | 'garbage' | 'error' | 'hang' = 'ok';
  current: string;
  issued = 0;
  port = 0;
  #server!: Server;

  constructor(
    first: string,
    readonly clientSecret: string,
  ) {
    this.current = first;
  }

  async start(ca: TestCa): Promise<void> {
    this.#server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
        this.posts.push(form);
        if (this.mode === 'hang') return;
        if (this.mode === 'error') return void res.writeHead(500).end('{"error":"server"}');
        if (this.mode === 'garbage') return void res.writeHead(200).end('<html>not a token');
        const good =
          req.method === 'POST' &&
          form.grant_type === 'refresh_token' &&
          form.refresh_token === this.current &&
          form.client_id === 'app-client' &&
          form.client_secret === this.clientSecret;
        if (!good) return void res.writeHead(400).end('{"error":"invalid_grant"}');
        this.issued++;
        this.current = `rt-${this.issued + 1}-${hex(6)}`;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            access_token: `at-${this.issued}`,
            token_type: 'bearer',
            expires_in: 3600,
            refresh_token: this.current,
          }),
        );
      });
    });
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((r) => this.#server.close(() => r()));
  }
}

/** Every file under `dir`, read whole (what a process might have logged or left). */
function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (st.isDirectory()) out.push(...allFiles(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

describe('OAuth2 refresh through the proxy', { skip }, () => {
  const rig = new Rig();
  const clock = new FakeClock(rig);
  const refreshToken = `rt-1-${hex(12)}`;
  const clientSecret = `cs-${hex(16)}`;
  const endpoint = new TokenEndpoint(refreshToken, clientSecret);
  let ca: TestCa;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  let token: string;
  const seenByAgent: string[] = [];

  /**
   * `n` fills on one tunnel to `path` (stopping at the first refusal): each
   * reply, and the Authorization the upstream received for it (the proxy
   * scrubs the value out of the echo the agent gets back).
   */
  async function fills(
    n: number,
    path = '/api/x',
  ): Promise<{ status: number; body: string; sent: string | null }[]> {
    const t = await Tunnel.open(proxy.port, `localhost:${up.port}`, ourCa, null);
    const out: { status: number; body: string; sent: string | null }[] = [];
    try {
      for (let i = 0; i < n; i++) {
        t.send(
          `GET ${path} HTTP/1.1\r\nHost: localhost:${up.port}\r\nAuthorization: Bearer vault://App/access_token\r\n\r\n`,
        );
        const before = up.seen.length;
        const r = await t.reply();
        seenByAgent.push(r.head, r.body);
        const got = up.seen.length > before ? up.seen.at(-1) : undefined;
        const auth = got?.rawHeaders.findIndex((h) => h.toLowerCase() === 'authorization') ?? -1;
        const sent = got === undefined || auth < 0 ? null : (got.rawHeaders[auth + 1] ?? null);
        out.push({ status: r.status, body: r.body, sent });
        if (r.status !== 200) break;
      }
    } finally {
      await t.close();
    }
    return out;
  }

  before(async () => {
    ca = makeTestCa(rig.root);
    await endpoint.start(ca);
    up = await Upstream.start(ca);
    const env = rig.env as Record<string, string>;
    env.VAULT_OAUTH_CA_FILE = ca.caFile;
    env.VAULT_OAUTH_TIMEOUT_MS = '1500';
    await clock.start();
    await rig.create();
    await rig.set('App', 'app-client', 'client_id');
    await rig.set('App', clientSecret, 'client_secret');
    await rig.set('App', refreshToken, 'refresh_token');
    await rig.set('App', `https://localhost:${endpoint.port}/token`, 'token_url');
    token = await rig.addAgent('svc', ['App'], ['--per-minute', '100', '--per-hour', '100']);
    await rig.liftValuesLimit('svc');
    proxy = await startProxy(rig, token, ca);
    ourCa = readFileSync(ok(await rig.agent(['proxy', 'ca'], token)).trim(), 'utf8');
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await endpoint.close();
    await clock.stop();
    await rig.dispose();
  });

  test('100 fills across an expiry: exactly two refreshes, the rotated refresh token used and kept', async () => {
    const first = await fills(50);
    assert.equal(first.length, 50);
    assert.ok(first.every((r) => r.status === 200 && r.sent === 'Bearer at-1'));
    assert.equal(endpoint.posts.length, 1, 'one refresh for the first 50');
    // Within the last minute of the token's hour: the host refreshes before it expires.
    clock.set(3600 - 30);
    const second = await fills(50);
    assert.ok(second.every((r) => r.status === 200 && r.sent === 'Bearer at-2'));
    assert.equal(endpoint.posts.length, 2, 'one more refresh after the expiry, no more');
    assert.equal(endpoint.posts[0]?.refresh_token, refreshToken);
    assert.notEqual(endpoint.posts[1]?.refresh_token, refreshToken, 'the rotated one was used');
    const kept = ok(
      await rig.owner(['entry', 'show', 'App', '--reveal', '--field', 'refresh_token']),
    ).trim();
    assert.equal(kept, endpoint.current, 'the refresh token rotated last is the one stored');
    const audit = await auditRecords(rig);
    const filled = audit.filter((a) => a.action === 'fill' && a.outcome === 'ok');
    assert.ok(filled.length >= 100, 'each fill audited');
    assert.ok(filled.every((a) => a.entry === 'App' && a.field === 'access_token'));
    assert.equal(audit.filter((a) => a.action === 'oauth_rotate').length, 2);
  });

  test('get --field access_token releases the access token; the refresh token and client secret never (VLT-2064)', async () => {
    assert.equal(
      ok(await rig.agent(['get', 'App', '--field', 'access_token'], token)).trim(),
      'at-2',
    );
    assertRefused(await rig.agent(['get', 'App', '--field', 'refresh_token'], token), 'VLT-2064');
    assertRefused(await rig.agent(['get', 'App', '--field', 'client_secret'], token), 'VLT-2064');
    const t = await Tunnel.open(proxy.port, `localhost:${up.port}`, ourCa, null);
    const before = up.seen.length;
    t.send(
      `GET /x HTTP/1.1\r\nHost: localhost:${up.port}\r\nAuthorization: Bearer vault://App/refresh_token\r\n\r\n`,
    );
    const r = await t.reply();
    await t.close();
    assert.equal(r.status, 403);
    assert.match(r.head, /VLT-2064/);
    assert.equal(up.seen.length, before);
  });

  for (const mode of ['garbage', 'error', 'hang'] as const) {
    test(`a token endpoint that answers ${mode}: VLT-2063, audited, nothing forwarded`, async () => {
      clock.set(clock.seconds + 3600);
      endpoint.mode = mode;
      const before = up.seen.length;
      const posts = endpoint.posts.length;
      const [r] = await fills(1);
      assert.equal(r?.status, 502, r?.body);
      assert.match(r?.body ?? '', /VLT-2063/);
      assert.equal(up.seen.length, before, 'nothing reached the upstream');
      assert.equal(endpoint.posts.length, posts + 1);
      const audit = await auditRecords(rig);
      assert.ok(audit.some((a) => a.outcome === 'VLT-2063' && a.entry === 'App'));
      endpoint.mode = 'ok';
    });
  }

  // Ten processes, each its own connection to the host (one proxy's fills share
  // one channel, and reach the host one after another).
  test('after a failed refresh, ten gets at once: one refresh between them, and fills go on with its token', async () => {
    const posts = endpoint.posts.length;
    const gets = await Promise.all(
      Array.from({ length: 10 }, () => rig.agent(['get', 'App', '--field', 'access_token'], token)),
    );
    assert.equal(endpoint.posts.length, posts + 1, 'one refresh in flight at a time');
    for (const g of gets) assert.equal(ok(g).trim(), 'at-3');
    const [r] = await fills(1);
    assert.equal(r?.sent, 'Bearer at-3');
    assert.equal(r?.body, 'you sent: Bearer vault://App/access_token\n', 'the echo scrubbed');
    assert.equal(endpoint.posts.length, posts + 1);
  });

  test('request caveats apply to a refreshed fill: outside them, refused before any refresh (VLT-2060)', async () => {
    ok(await rig.owner(['agent', 'caveats', 'svc', 'App', 'GET /api/**']));
    clock.set(clock.seconds + 3600);
    const posts = endpoint.posts.length;
    const before = up.seen.length;
    const [r] = await fills(1, '/admin/x');
    assert.equal(r?.status, 403);
    assert.match(r?.body ?? '', /VLT-2060/);
    assert.equal(endpoint.posts.length, posts, 'no refresh for a refused request');
    assert.equal(up.seen.length, before);
    const [allowed] = await fills(1, '/api/y');
    assert.equal(allowed?.status, 200);
    assert.equal(endpoint.posts.length, posts + 1);
  });

  test('the limits apply to refreshed fills (the second violation locks: VLT-2043), and a lock comes before any refresh', async () => {
    ok(
      await rig.owner(['agent', 'limits', 'svc', '--per-minute', '2', '--values-per-minute', '2']),
    );
    const limited = await fills(5, '/api/z');
    assert.equal(limited.length, 3, 'two values a minute, the third refused');
    // The caveat refusal above was this agent's first violation: the limit's is its second.
    assert.equal(limited.at(-1)?.status, 423);
    assert.match(limited.at(-1)?.body ?? '', /VLT-2043.*Second rate-limit violation/);
    assert.equal(limited.at(-1)?.sent, null);
    ok(await rig.owner(['agent', 'lock', 'svc']));
    clock.set(clock.seconds + 3600);
    const posts = endpoint.posts.length;
    const [r] = await fills(1, '/api/z');
    assert.equal(r?.status, 423);
    assert.match(r?.body ?? '', /VLT-2043/);
    assert.equal(endpoint.posts.length, posts, 'a locked agent causes no refresh');
  });

  test('the refresh token and client secret appear nowhere outside the host', async () => {
    const sentinels = [refreshToken, clientSecret, ...endpoint.posts.map((p) => p.refresh_token)];
    const pid = proxy.proc.pid as number;
    // The proxy runs as node <cli> proxy: its own environment and argv.
    const places: [string, string][] = [
      ['proxy environ', readFileSync(`/proc/${pid}/environ`, 'latin1')],
      ['proxy argv', readFileSync(`/proc/${pid}/cmdline`, 'latin1')],
      ['proxy stderr', proxy.stderr()],
      ['audit', ok(await rig.owner(['audit', '--json']))],
      ['what the agent saw', seenByAgent.join('\n')],
      ['what the upstream saw', up.seen.map((s) => s.rawHeaders.join('\n')).join('\n')],
    ];
    for (const f of allFiles(rig.root)) places.push([f, readFileSync(f, 'latin1')]);
    for (const [where, text] of places) {
      for (const s of sentinels) {
        if (s === undefined) continue;
        assert.ok(!text.includes(s), `a refresh token or client secret in ${where}`);
      }
    }
  });
});
