// Request caveats (issue 40) met as a user meets them: the real `gh`
// (/usr/bin/gh, Debian's 2.23) with its token a reference, through the real
// `vault-cli proxy`, to a local stand-in of a GitHub Enterprise API
// (https://<host>/api/v3/ and /api/graphql) that records every request.
// gh reads through a caveat of `GET /api/v3/repos/acme/**`; a `DELETE` is
// refused by the host before the value is released, so no byte of it reaches
// the stand-in; the refusal is audited and counted, and a second locks the
// agent. gh runs with a throwaway HOME, XDG dirs and GH_CONFIG_DIR.
//
// The stand-in's name resolves only for the proxy: it runs under bwrap with
// an /etc/hosts of the test's (gh, like any Go program, never proxies
// `localhost` or a loopback address, and resolves nothing itself when it
// proxies).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertRefused, auditRecords, hex } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa, startProxy, type ProxyProcess } from '../support/proxy.js';
import { Rig, fate, ok, type Result } from '../support/rig.js';

const NAME = 'github.acme.test';
const GH = '/usr/bin/gh';

describe('gh under the proxy, with request caveats', () => {
  const rig = new Rig();
  const secret = `ghp_${hex(18)}`;
  let up: Upstream;
  let proxy: ProxyProcess;
  let ourCa: string;
  let ghHome: string;

  const gh = async (args: readonly string[]): Promise<Result> => {
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/bin:/bin',
      HOME: ghHome,
      XDG_CONFIG_HOME: join(ghHome, 'config'),
      XDG_CACHE_HOME: join(ghHome, 'cache'),
      XDG_STATE_HOME: join(ghHome, 'state'),
      XDG_DATA_HOME: join(ghHome, 'data'),
      GH_CONFIG_DIR: join(ghHome, 'gh'),
      GH_HOST: `${NAME}:${up.port}`,
      // gh 2.23 reads the enterprise variable for a host other than github.com.
      GH_TOKEN: 'vault://GitHub/token',
      GH_ENTERPRISE_TOKEN: 'vault://GitHub/token',
      HTTPS_PROXY: proxy.url,
      SSL_CERT_FILE: ourCa,
      GH_NO_UPDATE_NOTIFIER: '1',
      GH_PROMPT_DISABLED: '1',
      GH_PAGER: 'cat',
      NO_COLOR: '1',
    };
    const child = spawn(GH, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    return fate(child);
  };

  /** Requests that reached the stand-in, as `METHOD /path`. */
  const reached = () => up.seen.map((s) => `${s.method} ${s.url.split('?')[0]}`);

  before(async () => {
    ghHome = join(rig.root, 'gh-home');
    mkdirSync(ghHome, { recursive: true });
    await rig.create();
    await rig.set('GitHub', secret, 'token');
    ok(await rig.owner(['entry', 'hosts', 'GitHub', NAME]));
    const token = await rig.addAgent(
      'coder',
      ['GitHub'],
      ['--per-minute', '100', '--per-hour', '100'],
    );
    const ca = makeTestCa(rig.root, [NAME]);
    up = await Upstream.start(ca);
    const repo = (name: string) => ({ id: 1, name, full_name: `acme/${name}`, private: true });
    up.routes.set('/api/v3/repos/acme', (req, res) => {
      const name = (req.url ?? '').split('/')[5] ?? 'x';
      if (req.method === 'DELETE') res.writeHead(204).end();
      else
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(repo(name)));
    });
    up.routes.set('/api/graphql', (_req, res, body) => {
      const query = body.toString();
      const data = query.includes('pullRequests')
        ? {
            repository: {
              pullRequests: {
                totalCount: 1,
                nodes: [
                  {
                    number: 7,
                    title: 'Fix the flaky build',
                    state: 'OPEN',
                    headRefName: 'fix-build',
                    url: `https://${NAME}/acme/x/pull/7`,
                    isDraft: false,
                    createdAt: '2026-11-01T00:00:00Z',
                  },
                ],
                pageInfo: { hasNextPage: false, endCursor: '' },
              },
            },
          }
        : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
    const hosts = join(rig.root, 'hosts');
    writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.1 ${NAME}\n`);
    const wrap = [
      'bwrap',
      '--die-with-parent',
      '--dev-bind',
      '/',
      '/',
      '--ro-bind',
      hosts,
      '/etc/hosts',
    ];
    proxy = await startProxy(rig, token, ca, {}, wrap);
    ourCa = ok(await rig.agent(['proxy', 'ca'], token)).trim();
  });
  after(async () => {
    await proxy?.stop();
    await up?.close();
    await rig.dispose();
  });

  test('without caveats: gh api and gh pr list work, the stand-in gets the real token', async () => {
    const r = await gh(['api', 'repos/acme/x']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).full_name, 'acme/x');
    const prs = await gh(['pr', 'list', '-R', 'acme/x']);
    assert.equal(prs.code, 0, prs.stderr);
    assert.match(prs.stdout, /Fix the flaky build/);
    assert.ok(up.header('authorization').every((a) => a === `token ${secret}`));
    assert.ok(up.header('authorization').length >= 2);
    assert.ok(!r.stdout.includes(secret) && !prs.stdout.includes(secret));
  });

  test('with caveats: reads go through, a DELETE is refused (VLT-2060) before any byte of it reaches the stand-in', async () => {
    const set = await rig.owner([
      'agent',
      'caveats',
      'coder',
      'GitHub',
      'GET /api/v3/repos/acme/**',
      'POST /api/graphql',
    ]);
    assert.equal(set.code, 0, set.stderr);
    const shown = ok(await rig.owner(['agent', 'show', 'coder']));
    assert.match(
      shown,
      /caveats .*\n {2}GitHub:\n {4}GET \/api\/v3\/repos\/acme\/\*\*\n {4}POST \/api\/graphql/,
    );

    const read = await gh(['api', 'repos/acme/x']);
    assert.equal(read.code, 0, read.stderr);
    const prs = await gh(['pr', 'list', '-R', 'acme/x']);
    assert.equal(prs.code, 0, prs.stderr);

    const before = reached().length;
    const del = await gh(['api', '-X', 'DELETE', 'repos/acme/x']);
    assert.notEqual(del.code, 0);
    assert.match(del.stdout + del.stderr, /VLT-2060/);
    assert.deepEqual(reached().slice(before), [], 'nothing of the DELETE reached the stand-in');
    assert.ok(!reached().some((r) => r.startsWith('DELETE')));
    // Another owner's repository, a path outside the caveat, by traversal too.
    for (const path of ['repos/other/x', 'repos/acme/../other/x', 'repos/acme/%2e%2e/other/x']) {
      const r = await gh(['api', path]);
      assert.notEqual(r.code, 0, path);
    }
    assert.deepEqual(reached().slice(before), []);
    assert.ok(!(del.stdout + del.stderr).includes(secret));

    const audit = await auditRecords(rig);
    const refused = audit.filter((a) => a.outcome === 'VLT-2060');
    assert.ok(refused.length >= 1, 'the refusal is in the audit');
    assert.ok(refused.every((a) => a.action === 'exfil' && a.entry === 'GitHub'));
  });

  test('a caveat refusal is a violation: the agent is locked by the second (VLT-2043), and stays so', async () => {
    const state = JSON.parse(ok(await rig.owner(['agent', 'show', 'coder', '--json']))) as {
      state: string;
    };
    assert.equal(state.state, 'locked', 'the DELETE and the next refused request locked it');
    const read = await gh(['api', 'repos/acme/x']);
    assert.notEqual(read.code, 0);
    assert.match(read.stdout + read.stderr, /VLT-2043/);
    const audit = await auditRecords(rig);
    assert.ok(audit.some((a) => a.action === 'locked' && a.outcome === 'VLT-2043'));
  });

  test('an entry under caveats is the proxy’s to fill only: get and render are refused (VLT-2061), audited, not counted', async () => {
    const token = await rig.addAgent('reader', ['GitHub']);
    ok(await rig.owner(['agent', 'caveats', 'reader', 'GitHub', 'GET /api/v3/repos/acme/**']));
    const got = await rig.agent(['get', 'GitHub', '--field', 'token'], token);
    assertRefused(got, 'VLT-2061');
    assert.ok(!got.stdout.includes(secret));
    const rendered = await rig.agent(['render', '-'], token, { input: 'T=vault://GitHub/token\n' });
    assert.notEqual(rendered.code, 0);
    assert.match(rendered.stderr, /VLT-2061/);
    assert.ok(!rendered.stdout.includes(secret));
    const state = JSON.parse(ok(await rig.owner(['agent', 'show', 'reader', '--json']))) as {
      state: string;
    };
    assert.equal(state.state, 'active', 'a get is refused, not counted as an exfiltration');
    const audit = await auditRecords(rig);
    assert.ok(audit.some((a) => a.outcome === 'VLT-2061' && a.actor.includes('reader')));
  });
});
