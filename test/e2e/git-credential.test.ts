// `git push` over HTTPS with the token filled from a reference: git asks
// `vault-cli git-credential` (its credential-helper protocol) and gets
// `password=vault://GitHub/token`, sends it as Basic credentials through the
// real `vault-cli proxy`, which fills it; a local git server (git http-backend
// as CGI behind Node's HTTPS, requiring the real token) takes the push. git,
// its configuration and its credential store only ever hold the reference.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { auditRecords, hex } from '../support/e2e-helpers.js';
import { makeTestCa, startProxy, type ProxyProcess, type TestCa } from '../support/proxy.js';
import { installBin } from '../support/pty.js';
import { Rig, ok, runCli } from '../support/rig.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * A git smart-HTTP server: `git http-backend` run as CGI for every request
 * that carries `expected` as its Authorization; any other gets 401 with a
 * Basic challenge, as GitHub answers. Records every Authorization it got.
 */
async function gitServer(ca: TestCa, projectRoot: string, expected: string) {
  const seen: string[] = [];
  const server: Server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    if (auth !== expected) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Length': '0' });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'https://git.test');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: projectRoot,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method,
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
      REMOTE_USER: 'pusher',
      REMOTE_ADDR: '127.0.0.1',
      ...(req.headers['content-length'] === undefined
        ? {}
        : { CONTENT_LENGTH: req.headers['content-length'] }),
    };
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let answered = false;
    cgi.stdout.on('data', (c: Buffer) => {
      if (answered) return void res.write(c);
      head = Buffer.concat([head, c]);
      const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
      if (end < 0) return;
      const sep = head.indexOf('\r\n\r\n') >= 0 ? 4 : 2;
      let status = 200;
      const headers: [string, string][] = [];
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers.push([name, value]);
      }
      answered = true;
      res.writeHead(status, headers.flat());
      res.write(head.subarray(end + sep));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    seen,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('git-credential: git push over HTTPS through the proxy, the token from a reference', () => {
  const rig = new Rig();
  const token = `ghp_${hex(18)}`;
  let ca: TestCa;
  let proxy: ProxyProcess;
  let server: Awaited<ReturnType<typeof gitServer>>;
  let agentHome: string;
  let work: string;
  let bare: string;
  let env: NodeJS.ProcessEnv;

  const git = (args: readonly string[], cwd = work) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  before(async () => {
    ca = makeTestCa(rig.root);
    await rig.create();
    await rig.set('GitHub', token, 'token');
    const agent = await rig.addAgent('coder', ['GitHub'], ['--per-minute', '100']);
    proxy = await startProxy(rig, agent, ca);
    const proxyCa = ok(await rig.agent(['proxy', 'ca'], agent)).trim();
    const projects = join(rig.root, 'srv');
    bare = join(projects, 'repo.git');
    mkdirSync(projects);
    execFileSync('git', ['init', '-q', '--bare', bare]);
    execFileSync('git', ['-C', bare, 'config', 'http.receivepack', 'true']);
    server = await gitServer(ca, projects, `Basic ${b64(`x-access-token:${token}`)}`);
    // The agent's side: its own home (git's global config and credential store), its work tree.
    agentHome = join(rig.root, 'agent-home');
    work = join(rig.root, 'work');
    mkdirSync(agentHome);
    mkdirSync(work);
    const bin = installBin(rig);
    const proxyUrl = proxy.url;
    env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: agentHome,
      XDG_CONFIG_HOME: join(agentHome, '.config'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'Agent',
      GIT_AUTHOR_EMAIL: 'agent@example.com',
      GIT_COMMITTER_NAME: 'Agent',
      GIT_COMMITTER_EMAIL: 'agent@example.com',
      // What `vault-cli proxy env --no-local-bypass` sets: the local server goes through the proxy.
      HTTPS_PROXY: proxyUrl,
      https_proxy: proxyUrl,
      NO_PROXY: '',
      no_proxy: '',
      GIT_SSL_CAINFO: proxyCa,
      VAULT_DIR: rig.vaultDir,
      VAULT_CONFIG_DIR: join(agentHome, 'vault-cli'),
    };
  });
  after(async () => {
    await proxy?.stop();
    await server?.close();
    await rig.dispose();
  });

  test('the helper speaks git’s protocol: get answers a reference, store and erase keep nothing', async () => {
    const input = 'protocol=https\nhost=github.com\n\n';
    const flags = ['git-credential', '--entry', 'GitHub', '--field', 'token'];
    const got = await runCli([...flags, 'get'], env, { input });
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, 'username=x-access-token\npassword=vault://GitHub/token\n');
    const named = await runCli([...flags, 'get'], env, { input: 'username=me\n\n' });
    assert.equal(named.stdout, 'username=me\npassword=vault://GitHub/token\n');
    const spaced = await runCli(['git-credential', '--entry', 'A/B 1', 'get'], env, { input });
    assert.equal(spaced.stdout, 'username=x-access-token\npassword=vault://A%2FB 1/password\n');
    for (const action of ['store', 'erase']) {
      const r = await runCli([...flags, action], env, { input: `${input}password=x\n` });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '');
    }
    const none = await runCli(['git-credential', 'get'], env, { input });
    assert.equal(none.code, 64);
    assert.match(none.stderr, /VLT-1001: vault-cli git-credential needs --entry/);
  });

  test('git push: the server gets the real token; git’s config and credential store hold only the reference', async () => {
    const remote = `https://localhost:${server.port}/repo.git`;
    const creds = join(agentHome, 'git-credentials');
    const key = `credential.https://localhost:${server.port}.helper`;
    const cfg = (...a: string[]) => execFileSync('git', ['config', '--global', ...a], { env });
    // A store helper first, as a user's cache would be: git tells it what worked.
    cfg(key, `store --file=${creds}`);
    cfg('--add', key, '!vault-cli git-credential --entry GitHub --field token');
    assert.equal((await git(['init', '-q', '-b', 'main'])).code, 0);
    writeFileSync(join(work, 'README'), 'pushed through the proxy\n');
    await git(['add', 'README']);
    await git(['commit', '-q', '-m', 'first']);
    const pushed = await git(['push', remote, 'main']);
    assert.equal(pushed.code, 0, pushed.stderr);
    // The push landed.
    const head = execFileSync('git', ['-C', bare, 'log', '--format=%s', 'main']).toString();
    assert.equal(head.trim(), 'first');
    // The server saw the real token (after the 401 that asked for credentials).
    assert.ok(server.seen.includes(`Basic ${b64(`x-access-token:${token}`)}`));
    // Nothing went around the proxy: the reference itself never reached the server.
    assert.ok(!server.seen.includes(`Basic ${b64('x-access-token:vault://GitHub/token')}`));
    // What git kept: the reference, never the token.
    const stored = readFileSync(creds, 'utf8');
    assert.match(decodeURIComponent(stored), /x-access-token:vault:\/\/GitHub\/token@localhost/);
    const config = readFileSync(join(agentHome, '.gitconfig'), 'utf8');
    for (const [where, text] of [
      ['credential store', stored],
      ['git config', config],
      ['git output', pushed.stdout + pushed.stderr],
    ] as const) {
      assert.ok(!text.includes(token), `${where} holds the token`);
    }
    const fills = (await auditRecords(rig)).filter((a) => a.action === 'fill');
    assert.ok(fills.length >= 1);
    assert.ok(fills.every((a) => a.entry === 'GitHub' && a.actor === 'cli:coder'));
  });
});
