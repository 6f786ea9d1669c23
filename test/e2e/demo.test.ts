// `npm run demo`, the README's first command, run as a new user would with a
// HOME of their own that has coding agents installed: it works, values reach
// only pipes, and it leaves that HOME as it found it (no guardrail skill, no
// vault, no config), its temp dir removed and no host left running.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { ROOT, fate } from '../support/rig.js';

const root = mkdtempSync(join(tmpdir(), 'vault-cli-demo-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Every file and directory under `dir` with its mode, size, mtime and content hash. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const p = join(e.parentPath, e.name);
      const st = statSync(p);
      const hash = e.isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex') : '-';
      return `${relative(dir, p)} ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`;
    })
    .sort();
}

/** Pids of processes whose environment names a path under `dir` (a host the demo left behind). */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.some((v) => v.startsWith('VAULT_DIR=') && v.includes(dir))) pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

test('npm run demo works and leaves HOME, the XDG dirs and TMPDIR as it found them', async () => {
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  // A user's home: every coding agent `init` would leave a skill for, and XDG dirs.
  for (const d of ['.claude', '.codex', '.cursor', '.gemini', '.agents', '.config', '.cache'])
    mkdirSync(join(home, d), { recursive: true });
  mkdirSync(join(home, '.local', 'share'), { recursive: true });
  mkdirSync(join(home, '.local', 'state'), { recursive: true });
  mkdirSync(tmp);
  const before = snapshot(home);

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    // npm's own cache and logs are npm's, not the demo's: kept out of HOME.
    npm_config_cache: join(root, 'npm-cache'),
    npm_config_logs_dir: join(root, 'npm-logs'),
    npm_config_update_notifier: 'false',
    // npm on Node 22+ turns on Node's compile cache in TMPDIR (node-compile-cache/).
    NODE_DISABLE_COMPILE_CACHE: '1',
  };
  const r = await fate(
    spawn('npm', ['run', '--silent', 'demo'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 0, out);
  assert.deepEqual(snapshot(home), before, 'HOME changed');

  // The agent's side: a file is refused, pipes work, the scope holds, no value shown.
  const agentSide = out.slice(out.indexOf('vault-cli init --no-skill'));
  assert.match(agentSide, /vault-cli: VLT-2050: Values go only into a pipe, and stdout is a file/);
  assert.match(agentSide, /^8$/m);
  assert.match(agentSide, /the app got a 9-character key/);
  assert.match(agentSide, /vault-cli: VLT-2041: Access denied\./);
  for (const value of ['hunter2', 'sk_live_x', 'payroll-password'])
    assert.ok(!agentSide.includes(value), `${value} reached the terminal`);
  assert.match(out, /ai_read\s+"Stripe Prod"\s+cli:claude/);

  assert.deepEqual(readdirSync(tmp), [], 'the demo left its temp dir');
  // `daemon stop` returns once the host has been told; give it a moment to go.
  let left = processesUnder(tmp);
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await new Promise((res) => setTimeout(res, 50));
    left = processesUnder(tmp);
  }
  assert.deepEqual(left, [], 'the demo left a vault host running');
});
