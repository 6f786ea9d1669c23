/** What the agent supervisor (supervisor.ts) is given and gives back. */
import type { OutputFilterOptions } from '../src/terminal/filter.js';

/** The child's fate. `status` is what a shell would report: the exit code, or 128 + signal number. */
export interface ChildResult {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly status: number;
  /** True when the supervisor had to escalate to SIGKILL. */
  readonly killed: boolean;
}

/** The terminal and process the supervisor sits in; injected so tests and `run` can supply them. */
export interface SuperviseIo {
  readonly stdin: NodeJS.ReadableStream & {
    isTTY?: boolean;
    setRawMode?: (raw: boolean) => unknown;
    ref?: () => unknown;
  };
  readonly stdout: NodeJS.WritableStream & {
    isTTY?: boolean;
    columns?: number;
    rows?: number;
    on(event: 'resize', l: () => void): unknown;
    off(event: 'resize', l: () => void): unknown;
  };
  /** Where the child's stderr goes without a pty (with one, the pty carries both). */
  readonly stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Where the supervisor's own signals arrive (the process). */
  readonly signals: Pick<NodeJS.Process, 'on' | 'off'>;
}

/** The agent's screen as its mirror holds it; the dashboard's glimpse of the agent. */
export interface AgentScreen {
  /** The last `n` non-empty lines, plain text, every terminal control removed. */
  lastLines(n: number): string[];
}

/** What the dashboard is given while it holds the terminal. */
export interface HandOverIo {
  readonly stdin: SuperviseIo['stdin'];
  readonly stdout: SuperviseIo['stdout'];
  /** The agent's screen, still following its output while the dashboard is shown. */
  readonly agent: AgentScreen;
  /**
   * Aborted when the supervisor is told to stop (SIGTERM, SIGHUP): leave the
   * terminal at once; the supervisor no longer waits for `show`.
   */
  readonly signal: AbortSignal;
  /**
   * The child's fate, once it has ended (it may end while the dashboard is
   * shown) and what it wrote before is in `agent`'s lines.
   */
  readonly exited: Promise<ChildResult>;
}

/** The terminal hand-over between the agent and the dashboard. */
export interface HandOver {
  /** The byte that hands the terminal over, Ctrl-] (0x1d); it never reaches the agent. */
  readonly key: number;
  /**
   * Shows the dashboard on `io.stdin` and `io.stdout`, resolving when the user
   * leaves it. Input left unread when it resolves is dropped, never sent to
   * the agent. If the child exits meanwhile, the supervisor still waits for it,
   * repaints the agent's last screen, and then returns the child's fate.
   */
  readonly show: (io: HandOverIo) => Promise<void>;
  /** `show` rejected: the error is passed here, and the agent gets its terminal back anyway. */
  readonly onError?: (err: unknown) => void;
}

export interface SuperviseOptions {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly io: SuperviseIo;
  /** Delay before SIGTERM becomes SIGKILL (default 5 s). */
  readonly killAfterMs?: number;
  /** Called once the child is running, with its pid. */
  readonly onSpawn?: (pid: number) => void;
  /** Ctrl-] to the dashboard and back. Without it the key is the agent's, like any other. */
  readonly handOver?: HandOver;
  /**
   * Forward signals to the terminal's foreground process group rather than to
   * the child: the child is then a wrapper (the sandbox) that would die of a
   * signal meant for the agent, which runs as a foreground job inside it.
   */
  readonly signalForeground?: boolean;
  /** What the filter on the agent's output lets through beyond its defaults (titles). */
  readonly output?: OutputFilterOptions;
  /** How long to wait for the terminal's answer when draining it at the end (default 1 s). */
  readonly drainMs?: number;
  /**
   * false: no pty, pipes (for scripts); `handOver`, `drainMs` do not apply.
   * Default true.
   */
  readonly pty?: boolean;
}
