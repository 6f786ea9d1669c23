// A CLI that explains itself (issue 25): help and --version from the built
// CLI, the launcher that runs it on the Node it was installed with whatever
// PATH says, and the small messages: VLT-3001 naming the vault and the fix,
// the audit listing naming whom an action was about, a short passphrase
// refused at the first prompt, the token's hint on a terminal, VLT-2042 in
// local time, `proxy ca` without a token, an agent told what an agent uses,
// and owner commands refused inside `vault-cli run` before any prompt.
import assert from 'node:assert/strict';
import { spawn as spawnChild, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
// eslint-disable-next-line no-restricted-imports -- a test drives the CLI under a pty, as a user's terminal
import { spawn as spawnPty } from 'node-pty';
import { assertRefused } from '../support/e2e-helpers.js';
import { installBin, underPty, until } from '../support/pty.js';
import { CLI, PASSPHRASE, ROOT, Rig, fate, ok, type Result } from '../support/rig.js';

const LAUNCHER = join(ROOT, 'bin', 'vault-cli');
const rig = new Rig();
let token = '';

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'sk-one');
  await rig.set('GitHub', 'gh-two');
  token = await rig.addAgent('bob', ['Stripe Prod', 'GitHub'], ['--per-minute', '1']);
});
after(() => rig.dispose());

function cli(args: readonly string[], env: NodeJS.ProcessEnv = rig.env): Result {
  const r = spawnSync(process.execPath, [CLI, ...args], { env });
  return {
    code: r.status,
    signal: r.signal,
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutBytes: r.stdout,
  };
}

/** The CLI with no controlling terminal (a new session), stdin closed: as an agent's tool runs it. */
function detached(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Result> {
  const child = spawnChild(process.execPath, [CLI, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  return fate(child);
}

describe('help', () => {
  test('--help groups the commands; help <cmd> is <cmd> --help; --version names the Node', () => {
    const top = ok(cli(['--help']));
    assert.match(
      top,
      /^for the owner.*:\n(?: {2}.*\n)+\nfor agents.*:\n(?: {2}.*\n)+\nhost and set-up:/m,
    );
    assert.match(top, /^ {2}daemon stop {2,}/m);
    for (const c of [['run'], ['get'], ['agent', 'add']]) {
      assert.equal(ok(cli(['help', ...c])), ok(cli([...c, '--help'])), c.join(' '));
    }
    assert.match(ok(cli(['help', 'get'])), /stdout must be a pipe/);
    assert.doesNotMatch(ok(cli(['run', '--help'])), /\(repeatable\) \(repeatable\)|<allow-write>/);
    assertRefused(cli(['help', 'frobnicate']), 'VLT-1001');
    assert.match(ok(cli(['--version'])), /^vault-cli \d+\.\d+\.\d+, Node v\d+/);
  });
});

describe('the launcher', () => {
  const systemNode = '/usr/bin/node';
  const systemMajor = existsSync(systemNode)
    ? Number(spawnSync(systemNode, ['-p', 'process.versions.node.split(".")[0]']).stdout)
    : 0;
  const old = systemMajor > 0 && systemMajor < 22;
  const firstOnPath = {
    ...rig.env,
    PATH: `/usr/bin:${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
  };

  test('package.json names it; it runs the installed Node whatever node PATH finds first', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    assert.equal(pkg.bin['vault-cli'], 'bin/vault-cli');
    const own = join(ROOT, 'node_modules', 'node', 'bin', 'node');
    const v = spawnSync(LAUNCHER, ['--version'], { env: firstOnPath, encoding: 'utf8' });
    assert.equal(v.status, 0, v.stderr);
    assert.ok(v.stdout.includes(`(${own})`), v.stdout);
    assert.match(v.stdout, /Node v(2[2-9]|[3-9]\d)\./);
    // Owner and agent commands through it, with the system's node first on PATH:
    // the host it starts runs on the same Node (no VLT-3010), the proxy module loads.
    const env = { ...firstOnPath, VAULT_DIR: join(rig.root, 'launched') };
    const run = (args: string[], more: NodeJS.ProcessEnv = {}, input = '') =>
      spawnSync(LAUNCHER, args, { env: { ...env, ...more }, encoding: 'utf8', input });
    assert.equal(run(['vault', 'create']).status, 0);
    assert.equal(run(['entry', 'set', 'K'], {}, 'v').status, 0);
    assert.match(run(['entry', 'ls']).stdout, /K/);
    const t = run(['agent', 'add', 'x', '--scope', 'K']).stdout.trim();
    const proxyEnv = run(['proxy', 'env'], { VAULT_TOKEN: t, VAULT_PASSPHRASE_FILE: '' });
    assert.equal(proxyEnv.status, 0, proxyEnv.stderr);
    assert.match(proxyEnv.stdout, /HTTPS_PROXY/);
    assert.equal(run(['daemon', 'stop']).status, 0);
  });

  test("without its own Node it starts PATH's Node once: node --version, then the command", () => {
    // A stand-in node that logs its arguments: `node -p` here was a second whole Node start.
    const dir = join(rig.root, 'once');
    mkdirSync(join(dir, 'bin'), { recursive: true });
    mkdirSync(join(dir, 'fake'));
    copyFileSync(LAUNCHER, join(dir, 'bin', 'vault-cli'));
    const log = join(dir, 'calls');
    writeFileSync(
      join(dir, 'fake', 'node'),
      `#!/bin/sh\necho "$*" >> '${log}'\n[ "$1" = --version ] && echo v22.22.0\nexit 0\n`,
      { mode: 0o755 },
    );
    for (const argv of [
      ['get', 'K'],
      ['entry', 'ls'],
    ]) {
      const r = spawnSync('/bin/sh', [join(dir, 'bin', 'vault-cli'), ...argv], {
        env: { PATH: `${join(dir, 'fake')}:/usr/bin:/bin`, HOME: rig.root },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
    }
    // get, totp, render and --version start from pipe.cjs (no ESM loader), the rest from main.js.
    const cli = join(dir, 'dist', 'src', 'cli');
    assert.deepEqual(readFileSync(log, 'utf8').trimEnd().split('\n'), [
      '--version',
      `${join(cli, 'pipe.cjs')} get K`,
      '--version',
      `${join(cli, 'main.js')} entry ls`,
    ]);
  });

  test(
    'without its own Node and with an old node on PATH it refuses in one line',
    { skip: !old && '/usr/bin/node is not older than Node 22 here' },
    () => {
      // `node main.js` on the system's Node crashed in the proxy module: now one line.
      const crash = spawnSync(systemNode, [CLI, 'proxy', 'env'], {
        env: { ...rig.env, VAULT_TOKEN: token },
        encoding: 'utf8',
      });
      assert.equal(crash.status, 69, crash.stderr);
      assert.match(
        crash.stderr,
        /^vault-cli: VLT-3005: needs Node 22\.22 or later, and \/usr\/bin\/node is Node v\d+[^\n]*\n$/,
      );
      // A copy with no node_modules beside it: only PATH's node is left.
      const bare = join(rig.root, 'bare');
      mkdirSync(join(bare, 'bin'), { recursive: true });
      copyFileSync(LAUNCHER, join(bare, 'bin', 'vault-cli'));
      const r = spawnSync('/bin/sh', [join(bare, 'bin', 'vault-cli'), '--version'], {
        env: { PATH: '/usr/bin:/bin', HOME: rig.root },
        encoding: 'utf8',
      });
      assert.equal(r.status, 69);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0] ?? '',
        /^vault-cli: VLT-3005: needs Node 22\.22 or later, and \/usr\/bin\/node is Node v\d+/,
      );
    },
  );
});

describe('small messages', () => {
  test('VLT-3001 names the vault directory and the fix', () => {
    const missing = join(rig.root, 'nowhere');
    const r = cli(['entry', 'ls'], { ...rig.env, VAULT_DIR: missing });
    const message = assertRefused(r, 'VLT-3001');
    assert.ok(message.includes(missing), message);
    assert.match(message, /vault-cli vault create/);
    assert.match(message, /VAULT_DIR/);
  });

  test('the audit listing says whom an owner action was about', () => {
    const text = ok(cli(['audit']));
    assert.match(text, /^TIME\s+ACTION\s+ENTRY\s+ACTOR\s+ABOUT$/m);
    assert.match(text, /^\S+ \S+\s+agent_add\s+-\s+owner\s+bob$/m);
  });

  test('vault create refuses a short passphrase at the first prompt, before asking again', async () => {
    const fresh = new Rig();
    try {
      const run = underPty(fresh, ['vault', 'create'], { VAULT_PASSPHRASE_FILE: undefined });
      await until(() => run.output().includes('Vault passphrase: '), 'the prompt');
      for (const key of 'short') run.pty.write(key);
      run.pty.write('\r');
      const done = await run.exited;
      assert.equal(done.exitCode, 65, done.output);
      assert.match(done.output, /VLT-1002: Passphrases are at least 8 characters\./);
      assert.doesNotMatch(done.output, /again/);
      assert.ok(!existsSync(join(fresh.vaultDir, 'vault.mdb')));
    } finally {
      await fresh.dispose();
    }
  });

  test('agent add on a terminal: the token on stdout, one line of what to do on stderr', async () => {
    const err = join(rig.root, 'add.err');
    const pty = spawnPty(
      '/bin/sh',
      ['-c', `"$0" "$1" agent add carol 2>"$2"`, process.execPath, CLI, err],
      {
        env: Object.fromEntries(
          Object.entries(rig.env).filter(([, v]) => v !== undefined),
        ) as Record<string, string>,
        cwd: rig.root,
      },
    );
    let out = '';
    pty.onData((d) => (out += d));
    const code = await new Promise<number>((resolve) => pty.onExit((e) => resolve(e.exitCode)));
    assert.equal(code, 0, out);
    const tokenOut = out.trim();
    assert.match(tokenOut, /^vlt_\w+$/);
    const hint = readFileSync(err, 'utf8');
    assert.equal(hint.trimEnd().split('\n').length, 1, hint);
    assert.match(hint, /vault-cli init/);
    assert.ok(!hint.includes(tokenOut), 'never the token on stderr');
    // Piped (TOKEN=$(...)), nothing is added.
    const piped = cli(['agent', 'add', 'dave']);
    assert.equal(piped.stderr, '');
  });

  test('VLT-2042 says when to retry in local time, to the second', () => {
    const env = {
      ...rig.env,
      VAULT_PASSPHRASE_FILE: undefined,
      VAULT_TOKEN: token,
      TZ: 'Asia/Kathmandu',
    };
    const pipe = (args: string[]) =>
      spawnSync(
        '/bin/sh',
        ['-c', '"$0" "$@" | cat >/dev/null; exit 0', process.execPath, CLI, ...args],
        {
          env,
          encoding: 'utf8',
        },
      );
    pipe(['get', 'Stripe Prod']);
    const limited = pipe(['get', 'GitHub']);
    const m = /vault-cli: VLT-2042: .*retry after (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.$/m.exec(
      limited.stderr,
    );
    assert.ok(m, limited.stderr);
    assert.doesNotMatch(limited.stderr, /\d\d:\d\d:\d\d\.\d|Z\b/);
    // Kathmandu is 5 h 45 min east of UTC: the time shown is within the next minute there.
    const shown = Date.parse(`${(m[1] as string).replace(' ', 'T')}+05:45`);
    assert.ok(shown > Date.now() - 5_000 && shown < Date.now() + 65_000, m[1]);
  });

  test('proxy ca prints the CA’s path without a token once the CA exists', () => {
    const withToken = ok(cli(['proxy', 'ca'], { ...rig.env, VAULT_TOKEN: token }));
    const without = cli(['proxy', 'ca'], {
      ...rig.env,
      VAULT_TOKEN: undefined,
      VAULT_PASSPHRASE_FILE: undefined,
    });
    assert.equal(without.code, 0, without.stderr);
    assert.equal(without.stdout, withToken);
  });

  test('an agent that runs an owner command is told what an agent uses instead', async () => {
    const env = { ...rig.env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token };
    const message = assertRefused(await detached(['entry', 'ls'], env), 'VLT-1003');
    assert.match(message, /vault-cli entry ls is an owner command/);
    assert.match(message, /get, totp, render or the proxy/);
    assert.doesNotMatch(message, /VAULT_PASSPHRASE_FILE/);
  });
});

describe(
  'inside vault-cli run',
  { skip: !existsSync('/usr/bin/bwrap') && 'needs bubblewrap and socat' },
  () => {
    test('owner commands are refused with VLT-2051 before any prompt', async () => {
      installBin(rig);
      const run = underPty(rig, [
        'run',
        '--agent',
        'bob',
        '--',
        'bash',
        '-c',
        'for c in "entry ls" "agent add eve" "daemon stop" "vault create"; do vault-cli $c </dev/null; echo "status=$?"; done',
      ]);
      const done = await run.exited;
      assert.equal(done.exitCode, 0, done.output);
      assert.doesNotMatch(done.output, /passphrase:/i);
      const refusals = done.output.match(/vault-cli: VLT-2051: .*another terminal.*/g) ?? [];
      assert.equal(refusals.length, 4, done.output);
      assert.equal((done.output.match(/status=77/g) ?? []).length, 4, done.output);
      assert.ok(!done.output.includes(PASSPHRASE));
    });
  },
);
