// The wall of `run`'s sandbox, tried from inside as a prompt-injected agent
// with a shell would (issue 24): the project directory's controls (what the
// owner's own tools run later), descriptors inherited from the owner's shell,
// the process table, token files outside the config directory, and the
// session socket held open by thousands of half-sent requests.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
// eslint-disable-next-line no-restricted-imports -- the owner's shell holding a descriptor is a terminal of the test's
import { spawn } from 'node-pty';
import { hex, hostPid } from '../support/e2e-helpers.js';
import { pidsWith } from '../support/procs.js';
import { installBin, runScript, said, underPty, until, type PtyFate } from '../support/pty.js';
import { CLI, Rig, ok } from '../support/rig.js';

const rig = new Rig();
const secret = `wall-${hex(12)}`;
const otherSecret = `other-${hex(12)}`;
let token = '';
let otherToken = '';

async function ran(script: string, flags: readonly string[] = [], env = {}): Promise<PtyFate> {
  const r = await runScript(rig, script, { flags, env }).exited;
  assert.equal(r.exitCode, 0, r.output);
  return r;
}

/** git as the owner runs it, outside: the rig's HOME, no system config. */
function ownerGit(args: readonly string[]): string {
  return execFileSync('git', args, {
    cwd: rig.root,
    env: { PATH: process.env.PATH, HOME: rig.root, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
  });
}

before(async () => {
  await rig.create();
  await rig.set('X', secret);
  token = await rig.addAgent('a', ['X'], ['--per-minute', '100', '--per-hour', '100']);
  await rig.set('Other', otherSecret);
  otherToken = await rig.addAgent('b', ['Other'], ['--per-minute', '100', '--per-hour', '100']);
  installBin(rig);
  ownerGit(['init', '-q']);
});
after(async () => {
  await rig.dispose();
});

describe('the project directory', () => {
  test("git config, hooks, .envrc and editor tasks cannot be changed or made inside; the owner's git status runs nothing", async () => {
    const pwned = join(rig.root, `pwned-${hex(4)}`);
    const before = readdirSync(rig.root).sort();
    const r = await ran(
      [
        `git config core.fsmonitor 'touch ${pwned}' 2>/dev/null; echo "fsmonitor=$?"`,
        `(printf '#!/bin/sh\\ntouch ${pwned}\\n' > .git/hooks/pre-commit) 2>/dev/null; echo "hook=$?"`,
        `(echo 'touch ${pwned}' > .envrc) 2>/dev/null; echo "envrc=$?"`,
        `(mkdir -p .vscode && echo '{}' > .vscode/tasks.json) 2>/dev/null; echo "vscode=$?"`,
        `(echo '[submodule "x"]' > .gitmodules) 2>/dev/null; echo "gitmodules=$?"`,
        // Renaming .git away with its read-only parts, then making a new one.
        `mv .git .git-moved 2>/dev/null; echo "rename=$?"`,
        `touch work-file; echo "work=$?"`,
        `git status --porcelain >/dev/null 2>&1; echo "git-inside=$?"`,
      ].join('; '),
    );
    const m = said(r.output);
    for (const k of ['fsmonitor', 'hook', 'envrc', 'vscode', 'gitmodules', 'rename'])
      assert.notEqual(m.get(k), '0', `${k}: ${r.output}`);
    assert.equal(m.get('work'), '0', r.output);
    assert.equal(m.get('git-inside'), '0', r.output);
    // Outside, afterwards: the owner's git runs nothing of the agent's.
    ownerGit(['status', '--porcelain']);
    assert.equal(existsSync(pwned), false, 'the owner’s git status ran the agent’s command');
    assert.equal(existsSync(join(rig.root, '.git', 'hooks', 'pre-commit')), false);
    // No placeholder is left in the owner's directory.
    const now = readdirSync(rig.root).filter((f) => f !== 'work-file');
    assert.deepEqual(now.sort(), before);
  });

  test('--allow-write naming a control opens it, with a warning line', async () => {
    const r = await ran('echo "export X=1" > .envrc; echo "envrc=$?"', ['--allow-write', '.envrc']);
    assert.match(
      r.output,
      /warning: --allow-write .*\.envrc: the agent may change what your own tools run/,
    );
    assert.equal(said(r.output).get('envrc'), '0', r.output);
    assert.equal(readFileSync(join(rig.root, '.envrc'), 'utf8'), 'export X=1\n');
    rmSync(join(rig.root, '.envrc'));
  });
});

describe('placeholders', () => {
  const controls = ['.envrc', '.gitmodules', '.mcp.json', '.vscode', '.idea', '.claude'];
  const left = () => controls.filter((c) => existsSync(join(rig.root, c)));

  test('two sessions in one directory: the first to end leaves the other protected; the last removes them', async () => {
    const a = runScript(rig, 'echo ready-a; read x');
    await until(() => a.output().includes('ready-a'), 'the first session');
    const b = runScript(
      rig,
      'echo ready-b; read x; (echo x > .envrc) 2>/dev/null; echo "envrc=$?"',
    );
    await until(() => b.output().includes('ready-b'), 'the second session');
    a.pty.write('\r');
    assert.equal((await a.exited).exitCode, 0);
    assert.deepEqual(left(), controls, 'the second session still has them');
    b.pty.write('\r');
    const rb = await b.exited;
    assert.notEqual(said(rb.output).get('envrc'), '0', rb.output);
    assert.deepEqual(left(), []);
  });

  test('a run killed with SIGKILL leaves them; the next run there takes them over and removes them', async () => {
    const killed = runScript(rig, 'echo ready; read x');
    await until(() => killed.output().includes('ready'), 'the session');
    process.kill(killed.pty.pid, 'SIGKILL');
    await killed.exited;
    await until(() => pidsWith('echo ready; read x').length === 0, 'the sandbox to go');
    assert.deepEqual(left(), controls);
    const r = await ran('(echo x > .envrc) 2>/dev/null; echo "envrc=$?"');
    assert.notEqual(said(r.output).get('envrc'), '0', r.output);
    assert.deepEqual(left(), []);
  });
});

describe('descriptors and token files', () => {
  test("a descriptor the owner's shell left open does not reach the agent", async () => {
    const passfile = join(rig.root, 'held-passphrase');
    writeFileSync(passfile, `held-${secret}\n`, { mode: 0o600 });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({
      ...rig.env,
      PATH: `${join(rig.root, 'bin')}:${process.env.PATH}`,
    }))
      if (v !== undefined) env[k] = v;
    // The owner's shell: the descriptor held, then run; the agent's script as a positional argument.
    const owner = `exec 260<${passfile}; exec "$@"`;
    const inner = 'cat <&260 2>/dev/null; echo "fd260=$?"; echo "open=$(ls /proc/self/fd | wc -l)"';
    const pty = spawn(
      '/bin/bash',
      [
        '-c',
        owner,
        'owner',
        process.execPath,
        CLI,
        'run',
        '--agent',
        'a',
        '--',
        'bash',
        '-c',
        inner,
      ],
      { cols: 100, rows: 30, cwd: rig.root, env },
    );
    let output = '';
    pty.onData((d) => (output += d));
    const code = await new Promise<number>((res) => pty.onExit(({ exitCode }) => res(exitCode)));
    assert.equal(code, 0, output);
    assert.ok(!output.includes(`held-${secret}`), output);
    assert.notEqual(said(output).get('fd260'), '0', output);
    // 0, 1, 2 and the one ls reads /proc/self/fd through.
    assert.equal(said(output).get('open'), '4', output);
  });

  test('VAULT_TOKEN_FILE, wherever it is, is hidden', async () => {
    const file = join(rig.root, `agent-token-${hex(4)}`);
    writeFileSync(file, token + '\n', { mode: 0o600 });
    const r = await ran(`echo "token=$(cat ${file} 2>/dev/null | wc -c)"`, [], {
      VAULT_TOKEN_FILE: file,
    });
    assert.equal(said(r.output).get('token'), '0', r.output);
    assert.ok(!r.output.includes(token));
  });
});

describe('processes', () => {
  test('--max-procs bounds what the agent can start, on the machine too', async (t) => {
    const marker = String(600_000 + Math.floor(Math.random() * 90_000));
    const limit = 40;
    const spawner = [
      'import subprocess, sys',
      'n = 0',
      'err = 0',
      `for i in range(${limit * 3}):`,
      '    try:',
      `        subprocess.Popen(['sleep', '${marker}']); n += 1`,
      '    except OSError as e:',
      '        err = e.errno; break',
      "print('spawned=%d' % n); print('errno=%d' % err); sys.stdout.flush()",
      'sys.stdin.readline()',
    ].join('\n');
    const run = underPty(rig, [
      'run',
      '--agent',
      'a',
      '--max-procs',
      String(limit),
      '--',
      'python3',
      '-c',
      spawner,
    ]);
    await until(() => /errno=[0-9]+/.test(run.output()), 'the spawner to stop');
    const onMachine = pidsWith(`sleep\0${marker}`).length;
    run.pty.write('\r');
    const r = await run.exited;
    const m = said(r.output);
    t.diagnostic(
      `spawned ${m.get('spawned')} under a limit of ${limit}; ${onMachine} on the machine`,
    );
    assert.equal(m.get('errno'), '11', r.output); // EAGAIN
    assert.ok(Number(m.get('spawned')) < limit, r.output);
    assert.ok(onMachine < limit, `${onMachine} sleeps on the machine`);
    await until(() => pidsWith(`sleep\0${marker}`).length === 0, 'the sleeps to end with run');
    // A pids cgroup run made for the sandbox goes with it.
    for (const base of ['/sys/fs/cgroup/pids', '/sys/fs/cgroup']) {
      const left = existsSync(base)
        ? readdirSync(base).filter((d) => d.startsWith(`vault-cli-run-${run.pty.pid}-`))
        : [];
      assert.deepEqual(left, [], base);
    }
  });

  test('--max-procs is in --help and refuses nonsense', async () => {
    const help = ok(await rig.owner(['run', '--help']));
    assert.match(help, /--max-procs.*default 1024/);
    const r = await rig.owner(['run', '--agent', 'a', '--max-procs', '3', '--', '/bin/true']);
    assert.match(r.stderr, /VLT-1002: --max-procs takes a whole number from 16 up/);
  });
});

describe('the session socket', () => {
  test("10,000 half-sent requests from inside hold few of the host's descriptors; the owner and another agent go on", async (t) => {
    const flood = [
      'import os, resource, socket, sys',
      '_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)',
      'resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))',
      "path = os.path.join(os.environ['VAULT_DIR'], 'host.sock')",
      'held = []',
      'for i in range(10000):',
      '    c = socket.socket(socket.AF_UNIX)',
      '    try:',
      '        c.connect(path)',
      "        c.sendall(b'POST /whoami HTTP/1.1\\r\\nHost: h\\r\\nContent-Length: 4096\\r\\n\\r\\n{')",
      '        held.append(c)',
      '    except OSError:',
      '        c.close()',
      "print('flooded=%d' % len(held)); sys.stdout.flush()",
      'sys.stdin.readline()',
      'for c in held: c.close()',
      'import subprocess',
      "v = subprocess.run(['vault-cli', 'get', 'X'], capture_output=True).stdout.decode().strip()",
      "print('own-get=%d' % len(v))",
    ].join('\n');
    const host = await hostPid(rig);
    const fds = () => readdirSync(`/proc/${host}/fd`).length;
    const base = fds();
    const run = underPty(rig, ['run', '--agent', 'a', '--', 'python3', '-c', flood]);
    try {
      await until(() => /flooded=[0-9]+/.test(run.output()), 'the flood');
      const during = fds();
      // Outside, meanwhile: the owner's command and another agent's read.
      ok(await rig.owner(['agent', 'ls']));
      assert.equal(ok(await rig.agent(['get', 'Other'], otherToken)), `${otherSecret}\n`);
      t.diagnostic(`the host's descriptors: ${base} before, ${during} during the flood`);
      assert.ok(during - base < 200, `the host went from ${base} to ${during} descriptors`);
    } finally {
      run.pty.write('\r');
    }
    const r = await run.exited;
    assert.equal(r.exitCode, 0, r.output);
    // The agent starved only itself, and only while it held them.
    assert.equal(said(r.output).get('own-get'), String(secret.length), r.output);
  });
});
