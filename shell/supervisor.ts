/**
 * The agent supervisor: runs one command under a pseudo-terminal with the
 * caller's terminal size and modes, forwards input, output, resize and
 * signals, and reports the child's fate as data (execa's result: exit code,
 * signal, and the status a shell would give it).
 *
 * Nothing is orphaned: the child is a session leader on the pty, so if the
 * supervisor dies, even by SIGKILL, the kernel closes the pty master and
 * hangs up the child's session (SIGHUP). When the supervisor itself is told to
 * stop (SIGTERM, SIGHUP) it passes the signal on and, if the child is still
 * there after `killAfterMs`, kills its process group.
 *
 * The only importer of node-pty, loaded lazily so `get` never loads it.
 */
import { constants } from 'node:os';

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
  };
  readonly stdout: NodeJS.WritableStream & {
    isTTY?: boolean;
    columns?: number;
    rows?: number;
    on(event: 'resize', l: () => void): unknown;
    off(event: 'resize', l: () => void): unknown;
  };
  /** Where the supervisor's own signals arrive (the process). */
  readonly signals: Pick<NodeJS.Process, 'on' | 'off'>;
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
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'] as const;
/** Signals that mean "the supervisor is asked to stop": forwarded, then escalated. */
const STOPPING = new Set<NodeJS.Signals>(['SIGTERM', 'SIGHUP']);

function signalName(n: number): NodeJS.Signals | null {
  const found = Object.entries(constants.signals).find(([, v]) => v === n);
  return found === undefined ? null : (found[0] as NodeJS.Signals);
}

/** The status a shell reports for an exit: the code, or 128 + the signal's number. */
export function exitStatus(exitCode: number, signal: number): number {
  return signal > 0 ? 128 + signal : exitCode;
}

/** Runs `file args` under a pty until it exits; resolves with its fate, never rejects for it. */
export async function supervise(o: SuperviseOptions): Promise<ChildResult> {
  const pty = await import('node-pty');
  const { stdin, stdout, signals } = o.io;
  const child = pty.spawn(o.file, [...o.args], {
    name: process.env.TERM ?? 'xterm-256color',
    cols: stdout.columns ?? 80,
    rows: stdout.rows ?? 24,
    cwd: o.cwd,
    env: o.env,
    encoding: null,
  } as Parameters<typeof pty.spawn>[2]);
  o.onSpawn?.(child.pid);

  const raw = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  if (raw) stdin.setRawMode?.(true);
  const onInput = (d: Buffer | string) => child.write(d as Buffer);
  stdin.on('data', onInput);
  stdin.resume();
  const onOutput = child.onData((d: unknown) => {
    stdout.write(d as Buffer);
  });
  const onResize = () => {
    if (stdout.columns !== undefined && stdout.rows !== undefined)
      child.resize(stdout.columns, stdout.rows);
  };
  stdout.on('resize', onResize);

  let killed = false;
  let escalation: NodeJS.Timeout | undefined;
  const handlers = FORWARDED.map((sig) => {
    const h = () => {
      try {
        child.kill(sig);
      } catch {
        // Already gone: its exit is on its way.
      }
      if (STOPPING.has(sig) && escalation === undefined) {
        escalation = setTimeout(() => {
          killed = true;
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            try {
              child.kill('SIGKILL');
            } catch {
              // Gone in the meantime.
            }
          }
        }, o.killAfterMs ?? 5_000);
      }
    };
    signals.on(sig, h);
    return [sig, h] as const;
  });

  try {
    const fate = await new Promise<{ exitCode: number; signal?: number }>((resolve) => {
      child.onExit(resolve);
    });
    const signal = fate.signal !== undefined && fate.signal > 0 ? fate.signal : 0;
    return {
      command: [o.file, ...o.args].join(' '),
      exitCode: signal > 0 ? null : fate.exitCode,
      signal: signal > 0 ? signalName(signal) : null,
      status: exitStatus(fate.exitCode, signal),
      killed,
    };
  } finally {
    clearTimeout(escalation);
    for (const [sig, h] of handlers) signals.off(sig, h);
    onOutput.dispose();
    stdout.off('resize', onResize);
    stdin.off('data', onInput);
    stdin.pause();
    if (raw) stdin.setRawMode?.(false);
  }
}
