/**
 * A user's terminal, as tmux gives one: the built CLI runs in a tmux pane of a
 * private tmux server, keys go in with send-keys and the screen comes back as
 * text with capture-pane, so a test sees what a person would see (Ink's
 * redraws and the supervisor's repaint resolved into one screen).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Rig } from './rig.js';

const sh = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

export interface PaneOptions {
  /** Where the tmux socket and the status file go (a fresh directory is made in it). */
  readonly dir: string;
  /** The program and its arguments. */
  readonly command: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly cols?: number;
  readonly rows?: number;
}

export class Tmux {
  private readonly socket: string;
  private readonly statusFile: string;
  private readonly env: NodeJS.ProcessEnv;

  /** Runs `command` in a pane of a private tmux server; the pane stays after it ends. */
  constructor(o: PaneOptions) {
    const dir = mkdtempSync(join(o.dir, 'tmux-'));
    this.socket = join(dir, 'tmux.sock');
    this.statusFile = join(dir, 'status');
    this.env = o.env;
    // tmux 3.3 sometimes leaves #{pane_dead_status} empty: the shell writes the status down.
    const command = o.command.map(sh).join(' ') + `; echo $? > ${sh(this.statusFile)}`;
    this.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      ...(o.cwd === undefined ? [] : ['-c', o.cwd]),
      '-x',
      String(o.cols ?? 100),
      '-y',
      String(o.rows ?? 30),
      command,
    );
    // The last screen stays readable after the program ends.
    this.tmux('set-option', '-t', 'main', 'remain-on-exit', 'on');
  }

  /**
   * Starts `vault-cli args` with the rig's owner environment plus `env`
   * (undefined removes a variable) and `<rig>/bin` on PATH.
   */
  static start(
    rig: Rig,
    args: readonly string[],
    env: Record<string, string | undefined> = {},
    size = { cols: 100, rows: 30 },
  ): Tmux {
    const merged: NodeJS.ProcessEnv = {
      ...rig.env,
      PATH: `${join(rig.root, 'bin')}:${process.env.PATH}`,
      TERM: 'xterm-256color',
    };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete merged[k];
      else merged[k] = v;
    }
    return new Tmux({
      dir: rig.root,
      command: [process.execPath, rig.cli, ...args],
      env: merged,
      ...size,
    });
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-S', this.socket, '-f', '/dev/null', ...args], {
      env: this.env,
      encoding: 'utf8',
    });
  }

  /** A tmux format expanded for the pane: `#{pane_pid}`, `#{mouse_standard_flag}`... */
  display(format: string): string {
    return this.tmux('display-message', '-p', '-t', 'main', format).trim();
  }

  /** The program's exit status once it has ended, else null. */
  status(): number | null {
    const text = existsSync(this.statusFile) ? readFileSync(this.statusFile, 'utf8') : '';
    return text.endsWith('\n') ? Number(text.trim()) : null;
  }

  /** The visible screen, as text. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', 'main');
  }

  /** Types `text` literally. */
  type(text: string): void {
    this.tmux('send-keys', '-t', 'main', '-l', text);
  }

  /** Presses keys by tmux name: Enter, C-c, C-], Escape, Tab, Down... */
  press(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** Types a line and presses Enter. */
  line(text: string): void {
    this.type(text);
    this.press('Enter');
  }

  resize(cols: number, rows: number): void {
    this.tmux('resize-window', '-t', 'main', '-x', String(cols), '-y', String(rows));
  }

  /** Waits until the program in the pane has ended; returns its exit status. */
  async exited(): Promise<number> {
    for (let i = 0; i < 600; i++) {
      const status = this.status();
      if (status !== null) return status;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the pane's program did not end; the screen:\n${this.screen()}`);
  }

  /** Waits (30 s at most) until the screen satisfies `what`; returns that screen. */
  async waitFor(
    what: RegExp | ((screen: string) => boolean),
    label: string,
    maxMs = 30_000,
  ): Promise<string> {
    const test = typeof what === 'function' ? what : (s: string) => what.test(s);
    let last = '';
    for (let i = 0; i < maxMs / 50; i++) {
      last = this.screen();
      if (test(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${label}; the screen:\n${last}`);
  }

  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
  }
}
