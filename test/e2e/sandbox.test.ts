// The `run` sandbox, tried as a prompt-injected agent with a shell would try
// it (issue 14): every attack runs inside `vault-cli run -- bash -c ...` on a
// real pty and must fail, while the agent's own work (get, render, the proxy
// with curl, Node and Python, plain HTTPS through the proxy) still works.
// Values are always piped (`| cat`): what is printed is what the test reads.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkInterfaces } from 'node:os';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { alive, assertRefused, auditRecords, hex, hostPid } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa, type TestCa } from '../support/proxy.js';
import { livePidsWith } from '../support/procs.js';
import { installBin, runScript, said, underPty, until, type PtyFate } from '../support/pty.js';
import { CLI, PASSPHRASE, ROOT, Rig, ok } from '../support/rig.js';

const rig = new Rig();
const secret = `sandbox-${hex(12)}`;
const otherSecret = `other-${hex(12)}`;
let token = '';
let otherToken = '';
let ca: TestCa;
let up: Upstream;

/** `run --agent a ... -- bash -c script`, under a pty in the rig's directory. */
function inside(script: string, flags: readonly string[] = []) {
  return runScript(rig, script, { flags: ['--upstream-ca', join(rig.root, 'ca.pem'), ...flags] });
}

async function ran(script: string, flags: readonly string[] = []): Promise<PtyFate> {
  const r = await inside(script, flags).exited;
  assert.equal(r.exitCode, 0, r.output);
  return r;
}

before(async () => {
  ca = makeTestCa(rig.root);
  up = await Upstream.start(ca);
  await rig.create();
  await rig.set('X', secret);
  await rig.set('Other', otherSecret);
  token = await rig.addAgent('a', ['X'], ['--per-minute', '100', '--per-hour', '100']);
  otherToken = await rig.addAgent('b', ['Other'], ['--per-minute', '100', '--per-hour', '100']);
  installBin(rig);
  // What an owner has beside the vault: a config directory (wraps, the init
  // token), and shell start-up files in the home directory (the rig's root).
  mkdirSync(rig.configDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(rig.configDir, 'wraps.json'), '{"claude":{"agent":"a"}}\n');
  writeFileSync(join(rig.configDir, 'token'), token + '\n', { mode: 0o600 });
  writeFileSync(join(rig.root, '.bashrc'), '# the owner\n');
  writeFileSync(join(rig.root, 'template.json'), '{"key": "vault://X/password"}\n');
});
after(async () => {
  await up.close();
  await rig.dispose();
});

describe('what the agent can still do', () => {
  test('get and render through the session socket, piped', async () => {
    const r = await ran(
      'echo "get=$(vault-cli get X)"; echo "render=$(vault-cli render template.json)"',
    );
    const m = said(r.output);
    assert.equal(m.get('get'), secret);
    assert.equal(m.get('render'), `{"key": "${secret}"}`);
  });

  test('a reference through the proxy with curl, Node fetch and Python; plain HTTPS too', async () => {
    const url = `https://localhost:${up.port}`;
    const node = `fetch('${url}/node',{headers:{authorization:'Bearer vault://X/password'}}).then(r=>console.log('node='+r.status))`;
    const python = [
      'import urllib.request as u',
      `r = u.urlopen(u.Request('${url}/python', headers={'Authorization': 'Bearer vault://X/password'}))`,
      "print('python=%d' % r.status)",
    ].join('; ');
    // The upstream is on the outer machine's loopback: not the agent's own localhost, so no NO_PROXY.
    const via = 'NO_PROXY= no_proxy=';
    const before = up.seen.length;
    const r = await ran(
      [
        `echo "curl=$(${via} curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer vault://X/password' ${url}/curl)"`,
        `echo "plain=$(${via} curl -s -o /dev/null -w '%{http_code}' ${url}/plain)"`,
        `${via} ${JSON.stringify(process.execPath)} -e ${JSON.stringify(node)}`,
        `${via} python3 -c ${JSON.stringify(python)}`,
      ].join('; '),
      // The upstream is a service of this machine: only an owner's --allow-net lets the proxy reach it.
      ['--allow-net', `localhost:${up.port}`],
    );
    const m = said(r.output);
    assert.equal(m.get('curl'), '200', r.output);
    assert.equal(m.get('plain'), '200', r.output);
    assert.equal(m.get('node'), '200', r.output);
    assert.equal(m.get('python'), '200', r.output);
    const auth = up.seen.slice(before).map((s) => `${s.url} ${s.rawHeaders.join(' ')}`);
    for (const path of ['/curl', '/node', '/python'])
      assert.ok(
        auth.some((a) => a.startsWith(path) && a.includes(`Bearer ${secret}`)),
        `${path} went out filled`,
      );
    assert.ok(!r.output.includes(secret), 'the value never reaches the agent’s terminal');
  });
});

describe('files', () => {
  test("the owner's other credentials and the sockets that lead outside are hidden; --allow-read shows one", async () => {
    const planted = `planted-${hex(8)}`;
    mkdirSync(join(rig.root, '.ssh'), { recursive: true });
    writeFileSync(join(rig.root, '.ssh', 'id_ed25519'), planted);
    mkdirSync(join(rig.root, '.aws'), { recursive: true });
    writeFileSync(join(rig.root, '.aws', 'credentials'), planted);
    writeFileSync(join(rig.root, '.netrc'), planted);
    // The user's runtime directory, with a socket as the service manager's bus would be.
    const runtime = join(rig.root, 'runtime');
    mkdirSync(runtime, { mode: 0o700 });
    let reached = 0;
    const bus = createServer((c) => {
      reached++;
      c.destroy();
    });
    await new Promise<void>((r) => bus.listen(join(runtime, 'bus'), r));
    const flags = ['--agent', 'a', '--upstream-ca', join(rig.root, 'ca.pem')];
    const script = [
      `echo "ssh=$(cat ~/.ssh/id_ed25519 2>/dev/null | wc -c)"`,
      `echo "aws=$(cat ~/.aws/credentials 2>/dev/null | wc -c)"`,
      `echo "netrc=$(cat ~/.netrc 2>/dev/null | wc -c)"`,
      `echo "netrc-write=$(echo x 2>/dev/null > ~/.netrc && echo yes || echo no)"`,
      `socat -u OPEN:/dev/null UNIX-CONNECT:$XDG_RUNTIME_DIR/bus 2>/dev/null; echo "bus=$?"`,
    ].join('; ');
    try {
      const hid = await underPty(rig, ['run', ...flags, '--', 'bash', '-c', script], {
        XDG_RUNTIME_DIR: runtime,
      }).exited;
      assert.equal(hid.exitCode, 0, hid.output);
      const m = said(hid.output);
      assert.equal(m.get('ssh'), '0', hid.output);
      assert.equal(m.get('aws'), '0', hid.output);
      assert.equal(m.get('netrc'), '0', hid.output);
      assert.equal(m.get('netrc-write'), 'no', hid.output);
      assert.notEqual(m.get('bus'), '0', hid.output);
      assert.equal(reached, 0, 'no connection reached the runtime socket');
      assert.ok(!hid.output.includes(planted));
      const shown = await underPty(
        rig,
        ['run', ...flags, '--allow-read', join(rig.root, '.ssh'), '--', 'bash', '-c', script],
        { XDG_RUNTIME_DIR: runtime },
      ).exited;
      const s = said(shown.output);
      assert.equal(s.get('ssh'), String(planted.length), shown.output);
      assert.equal(s.get('aws'), '0', shown.output);
      const wrong = await underPty(rig, ['run', ...flags, '--allow-read', '/etc', '--', 'true'])
        .exited;
      assert.notEqual(wrong.exitCode, 0);
      assert.match(wrong.output, /VLT-1002: --allow-read takes one of the credential stores/);
    } finally {
      bus.close();
    }
    assert.equal(readFileSync(join(rig.root, '.netrc'), 'utf8'), planted);
  });

  test('the store, the config directory and the passphrase file cannot be read, copied or changed', async () => {
    const store = join(rig.vaultDir, 'vault.mdb');
    const r = await ran(
      [
        `cp ${store} copy.mdb 2>/dev/null && echo copy=yes || echo copy=no`,
        `echo "vault-ls=$(ls -A ${rig.vaultDir} | wc -l)"`,
        `(echo x >> ${store}) 2>/dev/null && echo store-write=yes || echo store-write=no`,
        `touch ${rig.vaultDir}/new 2>/dev/null && echo vault-write=yes || echo vault-write=no`,
        `echo "wraps=$(cat ${rig.configDir}/wraps.json 2>/dev/null | wc -c)"`,
        `echo "init-token=$(cat ${rig.configDir}/token 2>/dev/null | wc -c)"`,
        `echo "passphrase=$(cat ${rig.passphraseFile} 2>/dev/null | wc -c)"`,
        `echo '{}' > ${rig.configDir}/wraps.json 2>/dev/null && echo wraps-write=yes || echo wraps-write=no`,
      ].join('; '),
    );
    const m = said(r.output);
    assert.equal(m.get('copy'), 'no', r.output);
    assert.equal(m.get('vault-ls'), '0', r.output);
    assert.equal(m.get('store-write'), 'no', r.output);
    assert.equal(m.get('vault-write'), 'no', r.output);
    assert.equal(m.get('wraps'), '0', r.output);
    assert.equal(m.get('init-token'), '0', r.output);
    assert.equal(m.get('passphrase'), '0', r.output);
    assert.equal(m.get('wraps-write'), 'no', r.output);
    assert.equal(
      readFileSync(join(rig.configDir, 'wraps.json'), 'utf8'),
      '{"claude":{"agent":"a"}}\n',
    );
    assert.ok(!r.output.includes(PASSPHRASE));
  });

  test('the installed CLI and the shell start-up files are read-only; cwd, /tmp and --allow-write are writable', async () => {
    const extra = join(rig.root, 'extra');
    mkdirSync(extra, { recursive: true });
    const outsideCwd = join(ROOT, `sandbox-probe-${hex(4)}`);
    const r = await ran(
      [
        `echo evil >> ${join(rig.root, 'bin', 'vault-cli')} 2>/dev/null && echo cli-write=yes || echo cli-write=no`,
        `echo evil >> ${CLI} 2>/dev/null && echo dist-write=yes || echo dist-write=no`,
        `echo evil >> ${join(rig.root, '.bashrc')} 2>/dev/null && echo bashrc-write=yes || echo bashrc-write=no`,
        `echo "bashrc=$(cat ${join(rig.root, '.bashrc')})"`,
        `touch ${outsideCwd} 2>/dev/null && echo elsewhere=yes || echo elsewhere=no`,
        `touch work-file && echo cwd=yes || echo cwd=no`,
        `touch /tmp/private-${hex(4)} && echo tmp=yes || echo tmp=no`,
        `echo "tmp-ls=$(ls -A /tmp | wc -l)"`,
        `touch ${extra}/allowed && echo allowed=yes || echo allowed=no`,
      ].join('; '),
      ['--allow-write', extra],
    );
    const m = said(r.output);
    assert.equal(m.get('cli-write'), 'no', r.output);
    assert.equal(m.get('dist-write'), 'no', r.output);
    assert.equal(m.get('bashrc-write'), 'no', r.output);
    assert.equal(m.get('bashrc'), '# the owner', r.output);
    assert.equal(m.get('elsewhere'), 'no', r.output);
    assert.equal(m.get('cwd'), 'yes', r.output);
    assert.equal(m.get('tmp'), 'yes', r.output);
    assert.equal(m.get('allowed'), 'yes', r.output);
    // The private /tmp holds only the session's own directory and what the agent made.
    assert.ok(Number(m.get('tmp-ls')) <= 3, r.output);
    assert.equal(readFileSync(join(rig.root, '.bashrc'), 'utf8'), '# the owner\n');
    assert.doesNotMatch(readFileSync(join(rig.root, 'bin', 'vault-cli'), 'utf8'), /evil/);
  });
});

describe('processes', () => {
  test('neither run, nor the host, nor another agent can be seen, signalled or read', async () => {
    const host = await hostPid(rig);
    const marker = String(800_000 + Math.floor(Math.random() * 90_000));
    // Another agent, supervised at the same time, with its own session token.
    const other = underPty(rig, [
      'run',
      '--agent',
      'b',
      '--',
      'bash',
      '-c',
      `echo ready; sleep ${marker}`,
    ]);
    try {
      await until(() => other.output().includes('ready'), 'the other agent');
      const r = await ran(
        [
          `echo "procs=$(ls /proc | grep -c '^[0-9]')"`,
          `kill -0 ${host} 2>/dev/null && echo host-signal=yes || echo host-signal=no`,
          `echo "host-proc=$(ls /proc/${host} 2>/dev/null | wc -l)"`,
          // Split, so this script's own command line does not hold the marker.
          `a=${marker.slice(0, 3)}; b=${marker.slice(3)}`,
          `n=0; for f in /proc/[0-9]*/cmdline; do [[ "$(tr '\\0' ' ' < $f 2>/dev/null)" == *"$a$b"* ]] && n=$((n+1)); done; echo "marker=$n"`,
          `echo "parent-env=$(tr '\\0' '\\n' < /proc/$PPID/environ | grep -c VAULT_PASSPHRASE)"`,
          `echo "tokens=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep '^VAULT_TOKEN=' | sort -u | wc -l)"`,
        ].join('; '),
      );
      const m = said(r.output);
      assert.ok(Number(m.get('procs')) < 10, r.output);
      assert.equal(m.get('host-signal'), 'no', r.output);
      assert.equal(m.get('host-proc'), '0', r.output);
      assert.equal(m.get('marker'), '0', r.output);
      assert.equal(m.get('parent-env'), '0', r.output);
      assert.equal(m.get('tokens'), '1', r.output);
      assert.ok(alive(host));
      assert.ok(livePidsWith(marker).length > 0, 'the other agent runs on');
    } finally {
      other.pty.kill('SIGTERM');
      await other.exited;
    }
  });

  test('run killed by SIGKILL: a setsid grandchild dies and the session token is refused', async () => {
    const marker = String(700_000 + Math.floor(Math.random() * 90_000));
    const tokenFile = join(rig.root, `session-${hex(4)}`);
    const run = inside(
      `echo "$VAULT_TOKEN" > ${tokenFile}; setsid sleep ${marker} & echo started; wait`,
    );
    await until(
      () => run.output().includes('started') && livePidsWith(marker).length > 0,
      'the grandchild',
    );
    const session = readFileSync(tokenFile, 'utf8').trim();
    assert.match(session, /^vlt_/);
    process.kill(run.pty.pid, 'SIGKILL');
    await run.exited;
    await until(() => livePidsWith(marker).length === 0, 'the grandchild to die');
    // The host notices the dropped hold within moments: polled, bounded, never timed.
    let refused = '';
    for (let i = 0; i < 100 && !refused.startsWith('vault-cli: VLT-2040: '); i++) {
      refused = (await rig.agent(['get', 'X'], session)).stderr;
      if (!refused.startsWith('vault-cli: VLT-2040: '))
        await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(refused, /^vault-cli: VLT-2040: /);
  });
});

describe('network', () => {
  test('no direct egress; --allow-net opens one destination', async () => {
    const direct = `curl -s --noproxy '*' --cacert ${join(rig.root, 'ca.pem')} -o /dev/null -w '%{http_code}' https://localhost:${up.port}/direct`;
    const closed = said((await ran(`echo "direct=$(${direct})"`)).output);
    assert.equal(closed.get('direct'), '000');
    const open = said(
      (await ran(`echo "direct=$(${direct})"`, ['--allow-net', `localhost:${up.port}`])).output,
    );
    assert.equal(open.get('direct'), '200');
  });
});

describe('the proxy does not lead back into this machine', () => {
  test('loopback, unspecified and interface addresses are refused (VLT-2053) unless --allow-net names them', async () => {
    const via = 'NO_PROXY= no_proxy=';
    const outward = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address;
    const targets = [
      `https://localhost:${up.port}/tunnel`,
      `https://127.0.0.1:${up.port}/tunnel-ip`,
      `https://[::1]:${up.port}/tunnel-ip6`,
      `https://0.0.0.0:${up.port}/tunnel-any`,
      ...(outward === undefined ? [] : [`https://${outward}:${up.port}/tunnel-eth`]),
    ];
    const before = up.seen.length;
    const r = await ran(
      [
        ...targets.map(
          (t, i) =>
            `echo "connect-${'abcdef'[i]}=$(${via} curl -s -o /dev/null -w '%{http_connect}' -H 'Authorization: Bearer vault://X/password' ${t})"`,
        ),
        `echo "plain=$(${via} curl -s -w ' %{http_code}' http://localhost:${up.port}/plain | tr -d '\\r\\n')"`,
      ].join('; '),
    );
    const m = said(r.output);
    for (const [i, t] of targets.entries())
      assert.equal(m.get(`connect-${'abcdef'[i]}`), '403', `${t}: ${r.output}`);
    assert.match(m.get('plain') ?? '', /VLT-2053.* 403$/, r.output);
    assert.equal(up.seen.length, before, 'nothing reached the upstream');
    assert.ok(!r.output.includes(secret));
  });
});

describe('owner power stays outside', () => {
  test('daemon stop, owner operations and another token are refused inside', async () => {
    const pass = join(rig.root, 'guess');
    writeFileSync(pass, PASSPHRASE + '\n');
    chmodSync(pass, 0o600);
    const r = await ran(
      [
        'vault-cli daemon stop; echo "stop=$?"',
        // A host of its own on the real vault (under faketime, say, to reset its rate state).
        `timeout 10 env VAULT_DIR=${rig.vaultDir} vault-cli daemon >/dev/null 2>&1; echo "own-host=$?"`,
        `VAULT_PASSPHRASE_FILE=${pass} vault-cli agent ls; echo "owner=$?"`,
        `VAULT_TOKEN=${otherToken} vault-cli get Other | cat; echo "foreign=\${PIPESTATUS[0]}"`,
      ].join('; '),
    );
    const m = said(r.output);
    assert.equal(m.get('stop'), '77', r.output);
    assert.notEqual(m.get('own-host'), '0', r.output);
    assert.notEqual(m.get('own-host'), '124', `${r.output}: a host ran inside`);
    assert.equal(m.get('owner'), '77', r.output);
    assert.equal(m.get('foreign'), '77', r.output);
    // The owner's client inside does not even read the passphrase: the host is
    // outside the sandbox's PID namespace, so an owner command is refused before
    // anything else (issue 25; the host check, VLT-3010 of issue 16, is next).
    assert.match(r.output, /VLT-2051: vault-cli agent ls is an owner command/);
    assert.equal((r.output.match(/VLT-2051/g) ?? []).length, 3, r.output);
    assert.ok(!r.output.includes(otherSecret));
    assert.ok(alive(await hostPid(rig)));
  });

  test('outside the sandbox, shutdown needs the owner’s passphrase', async () => {
    const host = await hostPid(rig);
    const r = await rig.agent(['daemon', 'stop'], token);
    assert.notEqual(r.code, 0, r.stderr);
    assert.ok(alive(host));
    const wrong = join(rig.root, 'wrong');
    writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
    assertRefused(
      await rig.owner(['daemon', 'stop'], { env: { VAULT_PASSPHRASE_FILE: wrong } }),
      'VLT-3002',
    );
    assert.ok(alive(host));
  });
});

describe('sessions and fallbacks', () => {
  test('a host that starts ends the sessions an earlier host minted', async () => {
    const client = {
      vaultDir: rig.vaultDir,
      daemon: { node: process.execPath, script: CLI, env: rig.env },
      autoStart: false,
    };
    const { token: session } = await call(client, 'session.start', {
      passphrase: PASSPHRASE,
      agent: 'a',
      scope: [],
    });
    assert.equal(ok(await rig.agent(['get', 'X'], session)), `${secret}\n`);
    await rig.stop();
    assertRefused(await rig.agent(['get', 'X'], session), 'VLT-2040');
  });

  test('no silent fallback: without bubblewrap, run refuses and says what to install', async () => {
    const empty = join(rig.root, 'no-bwrap');
    mkdirSync(empty, { recursive: true });
    const r = await rig.owner(['run', '--agent', 'a', '--', '/bin/true'], {
      env: { PATH: empty },
    });
    const message = assertRefused(r, 'VLT-1005');
    assert.match(message, /bubblewrap/);
    assert.match(message, /--no-sandbox/);
  });

  test('--no-sandbox warns on stderr and says so in the session_start record', async () => {
    const r = await underPty(rig, [
      'run',
      '--agent',
      'a',
      '--no-sandbox',
      '--',
      'bash',
      '-c',
      `ls ${rig.vaultDir} | grep -cx vault.mdb`,
    ]).exited;
    assert.match(r.output, /warning: --no-sandbox/);
    // Without the sandbox the agent sees the store: the documented trade.
    assert.match(r.output, /^1\r?$/m);
    const starts = (await auditRecords(rig)).filter((a) => a.action === 'session_start');
    assert.equal(starts.at(-1)?.field, 'no-sandbox');
    assert.ok(starts.some((a) => a.field === 'sandbox'));
  });
});
