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
 * The agent's output reaches the terminal through a filter
 * (src/terminal/filter.ts): what a full-screen program needs to draw
 * passes byte for byte; clipboard writes, titles, report requests, strings
 * and 8-bit controls do not (the agent's DA1 and DSR 5 are answered here,
 * with fixed text). When the child has gone, the terminal is asked
 * for its device attributes (DA1) and everything it sent until its answer is
 * read and discarded before the terminal is given back: keys typed for the
 * agent and answers to anything the terminal was asked never reach the
 * owner's shell.
 *
 * Hand-over (docs/run.md): with `handOver`, the hand-over key (Ctrl-]) gives the
 * terminal to the dashboard. From that key on, nothing typed reaches the agent
 * and nothing it writes reaches the screen; its output goes on feeding a
 * mirror of its screen, which repaints the screen when the dashboard is left.
 * Resizes reach the agent and the mirror throughout.
 *
 * Without a terminal (`pty: false`, for scripts): no pty. The child gets
 * pipes, and its stdout and stderr reach ours apart, byte for byte; a stream
 * of ours that is a terminal gets the same output filter, one that is not gets
 * the bytes as they are; there is no drain and no hand-over. The child starts
 * in a session of its own, so it has no controlling terminal to write to or
 * inject into, and Ctrl-C at a terminal reaches it only through us.
 *
 * The only importer of node-pty, loaded lazily so `get` never loads it.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { constants } from 'node:os';
import {
  TERMINAL_RESTORE,
  TerminalOutputFilter,
  type OutputFilterOptions,
} from '../src/terminal/filter.js';
import type { IPty } from 'node-pty';
import type * as Mirror from './mirror.js';

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

/** Device attributes (DA1): every terminal answers it, and answers in order. */
const ASK_ATTRIBUTES = '\x1b[c';
/** A DA1 answer: `CSI ? <attributes> c`. */
const ATTRIBUTES = /\x1b\[\?[0-9;]*c/;

/**
 * Reads and discards the terminal's input until it has answered a DA1 sent
 * now, or `waitMs` has passed: what it sent before the answer (keys typed
 * ahead, answers to earlier requests) is then gone, not left for the next
 * program to read. Node cannot tcflush; asking and waiting is the way to know
 * that what was in flight has arrived.
 */
function drainTerminal(
  stdin: SuperviseIo['stdin'],
  stdout: SuperviseIo['stdout'],
  waitMs: number,
): Promise<void> {
  return new Promise((resolve) => {
    let tail = '';
    const done = () => {
      clearTimeout(timer);
      stdin.off('data', onData);
      resolve();
    };
    const onData = (d: Buffer | string) => {
      // The answer may come in pieces: a short tail is enough to find it.
      tail = (tail + Buffer.from(d).toString('latin1')).slice(-64);
      if (ATTRIBUTES.test(tail)) done();
    };
    const timer = setTimeout(done, waitMs);
    stdin.on('data', onData);
    stdin.resume();
    stdout.write(ASK_ATTRIBUTES);
  });
}

/** The foreground process group of the terminal `pid` is in, from /proc (Linux), or null. */
function foregroundGroup(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold anything.
    const tpgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5]);
    return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null;
  } catch {
    return null;
  }
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

/**
 * Forwards the signals in FORWARDED arriving at `signals` to the child with
 * `deliver`. A stopping one (SIGTERM, SIGHUP) also calls `stop`, and the first
 * starts the escalation: `kill` after `afterMs`. Returns what undoes it all.
 */
function forwardSignals(
  signals: SuperviseIo['signals'],
  afterMs: number,
  to: {
    readonly deliver: (sig: NodeJS.Signals) => void;
    readonly stop?: () => void;
    readonly kill: () => void;
  },
): () => void {
  let escalation: NodeJS.Timeout | undefined;
  const handlers = FORWARDED.map((sig) => {
    const h = () => {
      to.deliver(sig);
      if (STOPPING.has(sig)) to.stop?.();
      if (STOPPING.has(sig) && escalation === undefined) escalation = setTimeout(to.kill, afterMs);
    };
    signals.on(sig, h);
    return [sig, h] as const;
  });
  return () => {
    clearTimeout(escalation);
    for (const [sig, h] of handlers) signals.off(sig, h);
  };
}

/** The command as the result names it. */
function commandLine(o: SuperviseOptions): string {
  return [o.file, ...o.args].join(' ');
}

/** A hand-over with the mirror of the agent's screen it repaints from. */
interface MirroredHandOver extends HandOver {
  readonly mirror: Mirror.ScreenMirror;
  /** The modes the dashboard is given (plain keys, no mouse reports). */
  readonly defaults: string;
}

/** Runs `file args` under a pty (or pipes) until it exits; resolves with its fate, never rejects for it. */
export async function supervise(o: SuperviseOptions): Promise<ChildResult> {
  if (o.pty === false) return superviseWithoutPty(o);
  const pty = await import('node-pty');
  const cols = o.io.stdout.columns ?? 80;
  const rows = o.io.stdout.rows ?? 24;
  const handOver = await mirrored(o.handOver, cols, rows);
  const child = pty.spawn(o.file, [...o.args], {
    name: process.env.TERM ?? 'xterm-256color',
    cols,
    rows,
    cwd: o.cwd,
    env: o.env,
    encoding: null,
  } as Parameters<typeof pty.spawn>[2]);
  o.onSpawn?.(child.pid);
  return new PtySupervision(o, child, handOver).run();
}

/** `h` with a mirror of the agent's screen; null without a hand-over. */
async function mirrored(
  h: HandOver | undefined,
  cols: number,
  rows: number,
): Promise<MirroredHandOver | null> {
  // Only a supervisor that can hand the terminal over needs to remember the screen.
  if (h === undefined) return null;
  const mirrors = await import('./mirror.js');
  return { ...h, mirror: new mirrors.ScreenMirror(cols, rows), defaults: mirrors.DEFAULT_MODES };
}

/** One child on a pty, from its spawn to its fate: `supervise`'s state and its parts. */
class PtySupervision {
  private killed = false;
  private gone = false;
  // While the dashboard is shown the agent's output only feeds the mirror;
  // while the repaint is being made, what arrives is held and written after it.
  private showing = false;
  private held: Buffer[] | null = null;
  /** The dashboard's turn at the terminal, from the key until the agent has it back. */
  private shown: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private readonly stdin: SuperviseIo['stdin'];
  private readonly stdout: SuperviseIo['stdout'];
  private readonly raw: boolean;
  private readonly filter: TerminalOutputFilter;
  private readonly exited: Promise<ChildResult>;

  constructor(
    private readonly o: SuperviseOptions,
    private readonly child: IPty,
    private readonly handOver: MirroredHandOver | null,
  ) {
    this.stdin = o.io.stdin;
    this.stdout = o.io.stdout;
    this.exited = new Promise<ChildResult>((resolve) => {
      child.onExit((fate: { exitCode: number; signal?: number }) => {
        this.gone = true;
        const signal = fate.signal !== undefined && fate.signal > 0 ? fate.signal : 0;
        resolve({
          command: commandLine(o),
          exitCode: signal > 0 ? null : fate.exitCode,
          signal: signal > 0 ? signalName(signal) : null,
          status: exitStatus(fate.exitCode, signal),
          killed: this.killed,
        });
      });
    });
    this.raw = this.stdin.isTTY === true && typeof this.stdin.setRawMode === 'function';
    // The mirror sees what the terminal sees, so a repaint shows nothing the filter dropped.
    // DA1 and DSR 5 are answered here, to the agent: nothing the owner's terminal says.
    this.filter = new TerminalOutputFilter(o.output, (reply) => {
      if (!this.gone) child.write(reply);
    });
  }

  /** Relays input, output, resizes and signals until the child exits; then gives the terminal back. */
  async run(): Promise<ChildResult> {
    if (this.raw) this.stdin.setRawMode?.(true);
    const onOutput = this.child.onData((d: unknown) => this.emit(this.filter.write(d as Buffer)));
    this.stdin.on('data', this.onInput);
    this.stdin.resume();
    this.stdout.on('resize', this.onResize);
    const unforward = forwardSignals(this.o.io.signals, this.o.killAfterMs ?? 5_000, {
      deliver: (sig) => this.deliver(sig),
      stop: () => this.stopping.abort(),
      kill: () => this.kill(),
    });
    try {
      const result = await this.exited;
      // The child ended under the dashboard: the user leaves it first, then sees the agent's last screen.
      if (this.shown !== null && !this.stopping.signal.aborted)
        await Promise.race([
          this.shown,
          new Promise((resolve) => this.stopping.signal.addEventListener('abort', resolve)),
        ]);
      return result;
    } finally {
      unforward();
      onOutput.dispose();
      await this.restore();
    }
  }

  /** The agent's output, filtered: to the mirror, and to the screen unless the dashboard holds it. */
  private emit(safe: Uint8Array): void {
    if (safe.length === 0) return;
    const out = Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength);
    this.handOver?.mirror.write(out);
    if (!this.showing) this.stdout.write(out);
    else this.held?.push(out);
  }

  /** Typed input: the agent's, up to the hand-over key; from the key on, the dashboard's. */
  private readonly onInput = (d: Buffer | string): void => {
    const h = this.handOver;
    const chunk = h === null || this.gone ? null : Buffer.from(d);
    const at = h === null || chunk === null ? -1 : chunk.indexOf(h.key);
    if (h === null || chunk === null || at < 0) {
      this.child.write(d as Buffer);
      return;
    }
    if (at > 0) this.child.write(chunk.subarray(0, at));
    this.shown = this.handTo(h, chunk.subarray(at + 1)).catch((err: unknown) => {
      // Writing the repaint failed: the terminal is going, the agent's exit will follow.
      h.onError?.(err);
    });
  };

  /** Gives the terminal to the dashboard, and back to the agent when it is left. */
  private async handTo(h: MirroredHandOver, after: Buffer): Promise<void> {
    const { stdin, stdout } = this;
    this.showing = true;
    // The dashboard gets plain keys and no mouse reports, whatever modes the agent set.
    stdout.write(h.defaults);
    stdin.off('data', this.onInput);
    stdin.pause();
    // What was typed after the key, in the same read, is the dashboard's.
    if (after.length > 0) stdin.unshift(after);
    try {
      await h.show({
        stdin,
        stdout,
        agent: h.mirror,
        signal: this.stopping.signal,
        // Once the agent's last output is in its lines.
        exited: this.exited.then(async (r) => {
          await h.mirror.settled();
          return r;
        }),
      });
    } catch (err) {
      h.onError?.(err);
    }
    if (this.stopping.signal.aborted) return;
    // A dashboard may leave the terminal cooked and stdin unreferenced.
    if (this.raw) stdin.setRawMode?.(true);
    stdin.ref?.();
    this.held = [];
    const picture = await h.mirror.repaint();
    stdout.write(picture);
    for (const d of this.held) stdout.write(d);
    this.held = null;
    this.showing = false;
    this.shown = null;
    if (!this.gone) {
      // Keys the dashboard left unread were typed at the dashboard: never the
      // agent's. (Only here: read() restarts reading, which resume and the
      // final pause then own; with the child gone it would keep us alive.)
      while (stdin.read() !== null);
      stdin.on('data', this.onInput);
      stdin.resume();
    }
  }

  private readonly onResize = (): void => {
    const { columns, rows } = this.stdout;
    if (columns === undefined || rows === undefined) return;
    try {
      this.child.resize(columns, rows);
    } catch {
      // The child is gone; its exit is on its way.
    }
    this.handOver?.mirror.resize(columns, rows);
  };

  /** A forwarded signal: to the terminal's foreground job when asked (the sandbox's agent), else the child. */
  private deliver(sig: NodeJS.Signals): void {
    try {
      const group = this.o.signalForeground === true ? foregroundGroup(this.child.pid) : null;
      if (group !== null && group !== this.child.pid) process.kill(-group, sig);
      else this.child.kill(sig);
    } catch {
      // Already gone: its exit is on its way.
    }
  }

  /** The escalation: SIGKILL to the child's group (or the child alone). */
  private kill(): void {
    this.killed = true;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      try {
        this.child.kill('SIGKILL');
      } catch {
        // Gone in the meantime.
      }
    }
  }

  /** The terminal given back as it was: restored modes, drained input, cooked. */
  private async restore(): Promise<void> {
    const { stdin, stdout } = this;
    this.emit(this.filter.end());
    // Before the drain, so a report already on its way is read and dropped with the rest.
    if (stdout.isTTY === true) stdout.write(TERMINAL_RESTORE);
    stdout.off('resize', this.onResize);
    stdin.off('data', this.onInput);
    if (this.raw && stdout.isTTY === true && !this.stopping.signal.aborted)
      await drainTerminal(stdin, stdout, this.o.drainMs ?? 1_000);
    stdin.pause();
    if (this.raw) stdin.setRawMode?.(false);
    this.handOver?.mirror.dispose();
  }
}

/** The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session. */
function procStat(pid: string): { ppid: number; pgrp: number; session: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]) };
  } catch {
    return null;
  }
}

/**
 * The sandbox's job without a terminal: the sandbox (`leader`) is a session
 * of its own, its script runs in the leader's group and starts the agent as a
 * job, a group of its own; that group is the one a terminal would signal. Null
 * when there is none (yet, or any more).
 */
function jobGroup(leader: number): number | null {
  const procs = new Map<number, { ppid: number; pgrp: number; session: number }>();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    const st = procStat(d);
    if (st !== null && st.session === leader) procs.set(Number(d), st);
  }
  for (const [pid, st] of procs)
    if (pid !== leader && st.pgrp === pid && procs.get(st.ppid)?.pgrp === leader) return pid;
  return null;
}

/** Sends `sig` to process group `group`; false when there is none. */
function signalGroup(group: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-group, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * The child's output on its way to one of our streams: through the terminal
 * filter when the stream is a terminal (the owner's screen), untouched when it
 * is not (a file or a pipe gets the agent's bytes exactly).
 */
function relayOutput(
  from: NodeJS.ReadableStream,
  to: NodeJS.WritableStream & { isTTY?: boolean },
  options: OutputFilterOptions | undefined,
): void {
  if (to.isTTY !== true) {
    from.pipe(to, { end: false });
    return;
  }
  // Without a pty there is nobody to answer: the child's queries go unanswered.
  const filter = new TerminalOutputFilter(options, () => {});
  const put = (safe: Uint8Array) => {
    if (safe.length > 0) to.write(Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength));
  };
  from.on('data', (d: Buffer) => put(filter.write(d)));
  from.on('end', () => put(filter.end()));
}

/** `supervise` for scripts: pipes instead of a pty (see the header). */
async function superviseWithoutPty(o: SuperviseOptions): Promise<ChildResult> {
  const { stdin, stdout, signals } = o.io;
  const stderr = o.io.stderr ?? stdout;
  // A stdin that is a file or a pipe is handed over as it is (its end is the
  // child's end of input); a terminal is read here and its lines passed on, so
  // the child holds no descriptor of the owner's terminal.
  const shareable = stdin.isTTY !== true && hasDescriptor(stdin);
  const child = await spawnPiped(o, shareable);
  if (child === null) {
    return { command: commandLine(o), exitCode: 127, signal: null, status: 127, killed: false };
  }
  const pid = child.pid;
  o.onSpawn?.(pid);
  const stopInput = shareable ? () => {} : pipeInput(stdin, child);
  if (child.stdout !== null) relayOutput(child.stdout, stdout, o.output);
  if (child.stderr !== null) relayOutput(child.stderr, stderr, o.output);

  let killed = false;
  // Sandboxed, the signal is the agent's (its job); bubblewrap would die of it.
  const target = () => (o.signalForeground === true ? (jobGroup(pid) ?? pid) : pid);
  const unforward = forwardSignals(signals, o.killAfterMs ?? 5_000, {
    deliver: (sig) => {
      if (!signalGroup(target(), sig)) signalGroup(pid, sig);
    },
    kill: () => {
      killed = true;
      signalGroup(pid, 'SIGKILL');
    },
  });

  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c: number | null, s: NodeJS.Signals | null) => resolve([c, s])),
    );
    // As a terminal hangs up its session when its leader goes: what the child left running goes too.
    signalGroup(pid, 'SIGHUP');
    // Then all it wrote is read (what it left running may still be writing, as in any pipeline).
    await closed;
    // As with a pty: what it set on a terminal it wrote to must not report into the owner's shell.
    for (const to of new Set([stdout, stderr])) if (to.isTTY === true) to.write(TERMINAL_RESTORE);
    const signum = signal === null ? 0 : (constants.signals[signal] ?? 0);
    return {
      command: commandLine(o),
      exitCode: signal === null ? code : null,
      signal,
      status: exitStatus(code ?? 0, signum),
      killed,
    };
  } finally {
    unforward();
    stopInput();
  }
}

/**
 * The child started in a session of its own, on pipes (stdin shared when
 * `shareStdin`); null when it could not start.
 */
async function spawnPiped(
  o: SuperviseOptions,
  shareStdin: boolean,
): Promise<(ChildProcess & { readonly pid: number }) | null> {
  const { spawn } = await import('node:child_process');
  const stdin = o.io.stdin as unknown as NodeJS.ReadStream;
  const child: ChildProcess = spawn(o.file, [...o.args], {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: [shareStdin ? stdin : 'pipe', 'pipe', 'pipe'],
  });
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (err) => resolve(err));
  });
  if (spawned !== null || child.pid === undefined) return null;
  return child as ChildProcess & { readonly pid: number };
}

/** Our input passed on to the child's stdin, until what this returns is called. */
function pipeInput(stdin: SuperviseIo['stdin'], child: ChildProcess): () => void {
  const to = child.stdin;
  if (to === null) return () => {};
  const onInput = (d: Buffer | string) => to.write(d);
  const onEnd = () => to.end();
  // The child may stop reading before our input ends: that is its business.
  to.on('error', () => {});
  stdin.on('data', onInput);
  stdin.on('end', onEnd);
  stdin.resume();
  return () => {
    stdin.off('data', onInput);
    stdin.off('end', onEnd);
    stdin.pause();
  };
}

/** A stream backed by a file descriptor, which a child can be given as it is. */
function hasDescriptor(s: object): boolean {
  const r = s as { fd?: unknown; _handle?: { fd?: unknown } };
  return typeof r.fd === 'number' || typeof r._handle?.fd === 'number';
}
