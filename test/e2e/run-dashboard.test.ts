// `vault-cli run` as a user meets it, in a tmux pane: a shell as the agent,
// its proxy and its session token, Ctrl-] to the dashboard and back, a
// rotation made in the dashboard, a lockdown seen live, resize, Ctrl-C, exit.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { alive } from '../support/e2e-helpers.js';
import { Upstream, makeTestCa } from '../support/proxy.js';
import { installBin, underPty, until } from '../support/pty.js';
import { Rig, ok } from '../support/rig.js';
import { Tmux } from '../support/tmux.js';

let hasTmux = true;
try {
  execFileSync('tmux', ['-V'], { stdio: 'ignore' });
} catch {
  hasTmux = false;
}
const skip = hasTmux ? false : 'needs tmux (.ci/run installs it)';

const rig = new Rig();
const ROTATED = 'rotated-S3cret-5e7f';
let upstream: Upstream;
let caFile = '';
let t: Tmux;
const file = (name: string) => join(rig.root, name);

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('X', 'hunter2');
  for (const e of ['Y', 'Z', 'W']) await rig.set(e, `value-${e}`);
  await rig.addAgent('a', ['X', 'Y', 'Z', 'W']);
  installBin(rig);
  const ca = makeTestCa(rig.root);
  caFile = ca.caFile;
  upstream = await Upstream.start(ca);
  t = Tmux.start(
    rig,
    // The test reads what the agent writes in the rig's directory (its vault stays hidden).
    [
      'run',
      '--agent',
      'a',
      '--upstream-ca',
      caFile,
      '--allow-write',
      rig.root,
      // The upstream is a service of this machine: the sandbox's proxy reaches it only when allowed.
      '--allow-net',
      `localhost:${upstream.port}`,
      '--',
      'bash',
      '--norc',
      '--noprofile',
      '-i',
    ],
    { HISTFILE: '/dev/null' },
    { cols: 110, rows: 32 },
  );
  await t.waitFor(/[$#]\s*$/m, 'the agent shell');
  t.line(`PS1='agent$ '`);
  await t.waitFor(/^agent\$\s*$/m, 'the agent shell');
});

after(async () => {
  if (skip) return;
  t.kill();
  await upstream.close();
  await rig.dispose();
});

/**
 * Leaves the dashboard and waits until the agent has its keys again: keys typed
 * while the dashboard is still closing are dropped (never the agent's), so a
 * probe line is typed until the shell answers it.
 */
let probes = 0;
async function backToAgent(): Promise<void> {
  t.press('C-]');
  await t.waitFor((s) => !/AGENT\s+KIND\s+STATE/.test(s), 'the agent screen');
  for (;;) {
    const probe = `probe-${++probes}`;
    t.line(`echo ${probe}`);
    try {
      await t.waitFor(new RegExp(`^${probe}\\s*$`, 'm'), probe, 2_000);
      return;
    } catch (err) {
      if (probes > 20) throw err;
    }
  }
}

/** Runs a line in the agent's shell and waits for `marker` on the screen. */
async function shell(line: string, marker: RegExp, label = line): Promise<string> {
  t.line(line);
  return t.waitFor(marker, label);
}

/** Processes whose environment holds this session token (the agent and its children). */
function holding(token: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^[0-9]+$/.test(d))
    .filter((d) => {
      try {
        const env = readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
        const state = readFileSync(`/proc/${d}/status`, 'utf8');
        return env.includes(`VAULT_TOKEN=${token}`) && !/^State:\s+Z/m.test(state);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Whether a process of the session runs `argv` as the foreground process
 * group of its terminal: where a Ctrl-C typed now lands. The echo of the typed
 * line on the screen comes before bash forks, and a SIGINT in between goes
 * to bash, which goes on to run the command (the full run saw `sleep 100`
 * outlive its Ctrl-C once).
 */
function inForeground(token: string, argv: readonly string[]): boolean {
  return holding(token).some((pid) => {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== argv.join('\0') + '\0') return false;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "(comm)": state, ppid, pgrp, session, tty_nr, tpgid.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return f[2] !== undefined && f[2] === f[5];
    } catch {
      return false;
    }
  });
}

const curl = (path: string) =>
  `env -u no_proxy -u NO_PROXY curl -s -H 'Authorization: Bearer vault://X/password' https://localhost:${upstream.port}${path}; echo`;

test(
  'the agent gets a session token, the proxy URL carries it, and a get and a proxied request work',
  { skip },
  async () => {
    await shell(
      `printf %s "$VAULT_TOKEN" > ${file('token')}; case "$HTTPS_PROXY" in "http://vault:$VAULT_TOKEN@127.0.0.1:"*) echo URL-CARRIES-SESSION;; esac`,
      /^URL-CARRIES-SESSION/m,
    );
    assert.match(readFileSync(file('token'), 'utf8'), /^vlt_/);
    await shell('vault-cli get X | cat', /^hunter2/m);
    const screen = await shell(curl('/first'), /you sent: Bearer vault:\/\/X\/password/);
    assert.ok(!/you sent: Bearer hunter2/.test(screen), 'the echoed value was scrubbed');
    assert.deepEqual(upstream.header('authorization').slice(-1), ['Bearer hunter2']);
  },
);

test(
  'Ctrl-] shows the dashboard with the read counted; keys typed there never reach the agent; the screen comes back',
  { skip },
  async () => {
    t.press('C-]');
    await t.waitFor(/a\s+ai\s+● active\s+1\/3\s+1\/10/, 'the dashboard with the read counted');
    t.type('Z9Z9Z9');
    await backToAgent();
    const back = await shell('echo came-back', /^came-back/m);
    // The agent's screen was repainted: what it printed before is there again.
    assert.match(back, /^hunter2/m);
    assert.ok(!back.includes('Z9Z9Z9'), back);
  },
);

test(
  'a rotation typed in the dashboard is what the agent gets next, in get, render and the proxy',
  { skip },
  async () => {
    t.press('C-]');
    await t.waitFor(/a\s+ai\s+● active/, 'the dashboard');
    t.press('Tab');
    await t.waitFor(/^\s*> W\b/m, 'the entries view');
    t.press('j');
    await t.waitFor(/^\s*> X\b/m, 'X selected');
    t.press('r');
    await t.waitFor(/Rotate a field of X/, 'the rotate form');
    t.press('Enter');
    t.press('Enter');
    t.type(ROTATED);
    const typing = t.screen();
    assert.ok(!typing.includes(ROTATED), 'the value is typed without echo');
    t.press('Enter');
    await t.waitFor(/password\D*2/, 'version 2 of X/password');
    assert.ok(!t.screen().includes(ROTATED));
    await backToAgent();

    await shell(
      'vault-cli get X | cat; echo got-it',
      new RegExp(`^${ROTATED}\\s*\\n(.*\\n)?got-it`, 'm'),
    );
    await shell(
      `echo 'v=vault://X/password' | vault-cli render - | cat`,
      new RegExp(`^v=${ROTATED}`, 'm'),
    );
    await shell(
      curl('/second'),
      /you sent: Bearer vault:\/\/X\/password[\s\S]*you sent: Bearer vault:\/\/X\/password/,
    );
    assert.deepEqual(upstream.header('authorization').slice(-1), [`Bearer ${ROTATED}`]);
  },
);

test(
  'over the limit: the violation and then the lockdown show in the dashboard live',
  { skip },
  async () => {
    await shell(
      'vault-cli get Y >/dev/null; vault-cli get Z >/dev/null; vault-cli get W >/dev/null; echo "status=$?"',
      /^status=75/m,
    );
    t.press('C-]');
    await t.waitFor(/a\s+ai\s+▲ violation recorded\s+3\/3/, 'the violation');
    // The owner locks the agent from another terminal; the open dashboard shows it.
    ok(await rig.owner(['agent', 'lock', 'a']));
    await t.waitFor(/a\s+ai\s+■ LOCKED/, 'the lockdown');
    await backToAgent();
    await shell('vault-cli get X >/dev/null; echo "status=$?"', /^status=77/m);
  },
);

test(
  "resize and Ctrl-C reach the agent; its exit status is run's; nothing outlives it",
  { skip },
  async () => {
    t.resize(90, 28);
    await shell('stty size', /^28 90/m);
    t.line('sleep 100');
    await t.waitFor(/sleep 100\s*$/m, 'sleep');
    const token = readFileSync(file('token'), 'utf8');
    await until(() => inForeground(token, ['sleep', '100']), 'sleep in the foreground');
    t.press('C-c');
    await shell('echo after-interrupt', /^after-interrupt/m);
    // The agent's pid is its sandbox's; from here it is found by its session token.
    assert.ok(holding(token).length > 0, 'the agent runs');
    t.line('exit 7');
    assert.equal(await t.exited(), 7);
    assert.deepEqual(holding(token).filter(alive), []);
    const r = await rig.agent(['get', 'X'], token);
    assert.equal(r.code, 77);
    assert.match(r.stderr, /^vault-cli: VLT-2040: /);
  },
);

test(
  'vault-cli dashboard from another terminal: the same agents, q leaves with status 0',
  { skip },
  async () => {
    const d = Tmux.start(rig, ['dashboard', '--no-browser'], {}, { cols: 100, rows: 24 });
    try {
      await d.waitFor(/a\s+ai\s+■ LOCKED/, 'the locked agent');
      d.press('q');
      assert.equal(await d.exited(), 0);
    } finally {
      d.kill();
    }
  },
);

test(
  'vault-cli dashboard refuses without a terminal, and a wrong passphrase before the screen changes',
  { skip },
  async () => {
    const piped = await rig.owner(['dashboard']);
    assert.equal(piped.code, 64);
    assert.equal(piped.stderr, 'vault-cli: VLT-1001: The dashboard needs a terminal.\n');

    writeFileSync(file('wrong'), 'not the passphrase\n', { mode: 0o600 });
    const wrong = await underPty(rig, ['dashboard'], { VAULT_PASSPHRASE_FILE: file('wrong') })
      .exited;
    assert.equal(wrong.exitCode, 77);
    assert.match(wrong.output, /vault-cli: VLT-3002: /);
    // Refused on the plain screen: the dashboard's alternate screen was never entered.
    assert.ok(!wrong.output.includes('\x1b[?1049h'), JSON.stringify(wrong.output));
  },
);
