// The terminal hand-over, under a real terminal: the supervisor and a stand-in
// dashboard (test/support/handover-harness.ts) run in a tmux pane, keys go in
// with send-keys and the screen comes back with capture-pane, so the test sees
// what a person would. What reached the agent is read from the log it keeps of
// every line it read, not from the screen.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { until } from '../support/pty.js';
import { Tmux } from '../support/tmux.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = join(ROOT, 'test/support/handover-harness.ts');
const skip = spawnSync('tmux', ['-V']).status === 0 ? false : 'tmux is not installed';

/** One harness in a private tmux server's pane, with the logs it keeps. */
class Pane extends Tmux {
  constructor(
    mode: 'hand-over' | 'plain' = 'hand-over',
    cols = 80,
    rows = 20,
    readonly dir = mkdtempSync(join(tmpdir(), 'handover-')),
  ) {
    const node = [process.execPath, '--import', 'tsx', HARNESS, dir];
    if (mode === 'plain') node.push('plain');
    super({
      dir,
      command: node,
      env: { ...process.env, TERM: 'xterm-256color' },
      cwd: ROOT,
      cols,
      rows,
    });
  }

  /** The pane's mouse reporting and cursor-key modes, as tmux holds them. */
  modes(): string {
    return this.display('mouse=#{mouse_standard_flag} cursorkeys=#{keypad_cursor_flag}');
  }

  /** The lines the agent read, in order. */
  agentLog(): string[] {
    const f = join(this.dir, 'agent.log');
    return existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(0, -1) : [];
  }
  /** The raw keys the dashboard read. */
  dashboardLog(): string {
    const f = join(this.dir, 'dashboard.log');
    return existsSync(f) ? readFileSync(f, 'latin1') : '';
  }

  /** Waits until the harness has ended; returns its exit status and the fate it recorded. */
  async finished(): Promise<{
    status: number;
    result: { status: number; exitCode: number | null };
  }> {
    const status = await this.exited();
    const result = JSON.parse(readFileSync(join(this.dir, 'result.json'), 'utf8')) as {
      status: number;
      exitCode: number | null;
    };
    return { status, result };
  }

  dispose(): void {
    this.kill();
    // The harness's processes may still be writing their logs as they die.
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

/** Runs `body` with a fresh pane whose agent is ready for input. */
async function withPane(
  body: (p: Pane) => Promise<void>,
  mode: 'hand-over' | 'plain' = 'hand-over',
): Promise<void> {
  const p = new Pane(mode);
  try {
    await p.waitFor(/agent ready/, 'the agent');
    await body(p);
  } finally {
    p.dispose();
  }
}

const onDashboard = (p: Pane) => p.waitFor(/DASHBOARD/, 'the dashboard');
const backFromDashboard = (p: Pane, seen: RegExp) =>
  p.waitFor((s) => !s.includes('DASHBOARD') && seen.test(s), 'the agent’s screen');

test(
  'keys reach the agent until Ctrl-], the dashboard’s keys never do, and leaving it restores the agent’s screen',
  { skip },
  () =>
    withPane(async (p) => {
      p.line('hello');
      await p.waitFor(/got=hello/, 'the agent’s answer');

      p.press('C-]');
      const board = await onDashboard(p);
      // The dashboard sees the agent's last lines through the mirror.
      assert.match(board, /agent\| got=hello/);
      assert.doesNotMatch(board, /^agent ready$/m);

      const sentinel = `SENTINEL${randomBytes(6).toString('hex')}`;
      p.line(sentinel);
      await p.waitFor((s) => s.includes(sentinel), 'the dashboard to read the keys');
      p.press('q');
      const back = await backFromDashboard(p, /got=hello/);
      assert.match(back, /^agent ready\nhello\ngot=hello\n/);
      assert.doesNotMatch(back, new RegExp(sentinel));

      p.line('after');
      await p.waitFor(/got=after/, 'the agent’s answer after the dashboard');
      assert.deepEqual(p.agentLog(), ['hello', 'after']);
      assert.match(p.dashboardLog(), new RegExp(`${sentinel}\r`));

      p.line('exit 5');
      const { status, result } = await p.finished();
      assert.equal(status, 5);
      assert.equal(result.exitCode, 5);
      assert.doesNotMatch(p.screen(), new RegExp(sentinel));
    }),
);

test(
  'in one read, what comes before Ctrl-] goes to the agent and what follows it to the dashboard',
  { skip },
  () =>
    withPane(async (p) => {
      p.type('pre\x1dpost');
      await onDashboard(p);
      await until(() => p.dashboardLog().includes('post'), 'the dashboard to read "post"');
      p.press('q');
      await backFromDashboard(p, /agent ready/);
      p.line('fix');
      await p.waitFor(/got=prefix/, 'the agent to read "prefix"');
      assert.deepEqual(p.agentLog(), ['prefix']);
    }),
);

test('a resize during the dashboard reaches the agent', { skip }, () =>
  withPane(async (p) => {
    p.line('size');
    await p.waitFor(/size=20 80/, 'the first size');
    p.press('C-]');
    await onDashboard(p);
    p.resize(60, 15);
    await p.waitFor((s) => s.split('\n').length <= 16, 'the smaller pane');
    p.press('q');
    await backFromDashboard(p, /size=20 80/);
    p.line('size');
    await p.waitFor(/size=15 60/, 'the new size, as the agent sees it');
  }),
);

test('Ctrl-C reaches the agent in agent mode, and the dashboard in dashboard mode', { skip }, () =>
  withPane(async (p) => {
    p.press('C-c');
    await p.waitFor(/INT-CAUGHT/, 'the agent’s SIGINT trap');
    await until(() => p.agentLog().includes('<INT>'), 'the trap’s log line');

    p.press('C-]');
    await onDashboard(p);
    p.press('C-c');
    await until(() => p.dashboardLog().includes('\x03'), 'the dashboard to read Ctrl-C');
    p.press('q');
    await backFromDashboard(p, /INT-CAUGHT/);
    p.line('still here');
    await p.waitFor(/got=still here/, 'the agent, not interrupted');
    assert.deepEqual(p.agentLog(), ['<INT>', 'still here']);
  }),
);

test('an agent on the alternate screen gets it back, and its own screen below it', { skip }, () =>
  withPane(async (p) => {
    p.line('hello');
    await p.waitFor(/got=hello/, 'the agent’s answer');
    p.line('fullscreen');
    await p.waitFor(/^FULL SCREEN APP/, 'the full-screen program');
    p.press('C-]');
    await onDashboard(p);
    p.press('C-]');
    const back = await backFromDashboard(p, /^FULL SCREEN APP/);
    assert.doesNotMatch(back, /got=hello/);
    p.line('leavefull');
    const below = await p.waitFor(/back from full screen/, 'the normal screen');
    assert.match(below, /^agent ready\nhello\ngot=hello\nfullscreen\nback from full screen/);
  }),
);

test(
  'the dashboard gets the terminal without the agent’s mouse reports and key modes, and the agent gets them back',
  { skip },
  () =>
    withPane(async (p) => {
      p.line('modes');
      await p.waitFor(/modes set/, 'the agent’s modes');
      await until(() => p.modes() === 'mouse=1 cursorkeys=1', 'the modes on the terminal');
      p.press('C-]');
      await onDashboard(p);
      assert.equal(p.modes(), 'mouse=0 cursorkeys=0');
      p.press('q');
      await backFromDashboard(p, /modes set/);
      await until(() => p.modes() === 'mouse=1 cursorkeys=1', 'the agent’s modes back');
    }),
);

test(
  'an agent that exits under the dashboard: the user leaves it first, then sees the agent’s last screen and its status comes back',
  { skip },
  () =>
    withPane(async (p) => {
      p.line('exitwhen 9');
      await until(() => p.agentLog().includes('exitwhen 9'), 'the agent to wait');
      p.press('C-]');
      await onDashboard(p);
      writeFileSync(join(p.dir, 'go'), '');
      const board = await p.waitFor(
        (s) => /agent exited 9/.test(s) && /agent leaving/.test(s),
        'the dashboard to see the exit',
      );
      // What the agent wrote meanwhile went to the mirror, not over the dashboard.
      assert.match(board, /^agent\| agent leaving$/m);
      assert.doesNotMatch(board, /^agent leaving$/m);
      assert.equal(p.status(), null);
      p.press('q');
      const { status, result } = await p.finished();
      assert.equal(status, 9);
      assert.equal(result.status, 9);
      assert.match(p.screen(), /agent leaving\n(.*\n)*harness: status=9/);
    }),
);

test(
  'SIGTERM to the supervisor under the dashboard: the agent gets it, the dashboard is told to leave, and 143 comes back',
  { skip },
  () =>
    withPane(async (p) => {
      p.press('C-]');
      await onDashboard(p);
      process.kill(Number(readFileSync(join(p.dir, 'pid'), 'utf8')), 'SIGTERM');
      const { status, result } = await p.finished();
      assert.equal(status, 143);
      assert.equal(result.status, 143);
    }),
);

test('without a hand-over, Ctrl-] is the agent’s like any other key', { skip }, () =>
  withPane(async (p) => {
    p.type('a\x1db');
    p.press('Enter');
    await until(() => p.agentLog().length > 0, 'the agent to read the line');
    assert.deepEqual(p.agentLog(), ['a\x1db']);
    assert.doesNotMatch(p.screen(), /DASHBOARD/);
    p.line('exit 0');
    assert.equal((await p.finished()).status, 0);
  }, 'plain'),
);
