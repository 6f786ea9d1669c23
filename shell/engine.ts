/**
 * What a sandbox engine offers `run`: the policy (shell/sandbox-policy.ts)
 * says in no engine's terms what the agent may read, write and reach; an
 * engine carries it out with its own means (bubblewrap on Linux, in
 * shell/linux/: mounts, placeholders, relays, a hosts file, a pids cgroup).
 * `run` reaches an engine only through this interface, and only
 * shell/sandbox-engine.ts chooses one.
 *
 * A session's course: `probe` (before anything is asked), `leftover` (while
 * the facts are gathered), `plan` (pure, once the policy has decided),
 * `describe` (--print-policy), `open` (the outside ends, once the session's
 * proxy serves), `launch` (what the supervisor starts), `cleanup` (after the
 * agent's first process has ended).
 */
import type { Socket } from 'node:net';
import type { SandboxPolicy } from './sandbox-policy.js';

/** The programs an engine found by its probe, by name: given back to it at launch. */
export type EngineTools = Readonly<Record<string, string>>;

/** Whether an engine can run here: its programs, or why not (a clause: "bubblewrap is not installed (...)"). */
export type EngineProbe =
  { readonly ok: true; readonly tools: EngineTools } | { readonly ok: false; readonly why: string };

/** The engine's own part of what --print-policy shows; the policy's paths it shows itself. */
export interface SandboxDescription {
  /** What the agent reads besides what the policy names (the `read` line). */
  readonly reads: string;
  /** Writable places of the sandbox's own, after the working directory (`write` lines). */
  readonly scratch: readonly string[];
  /** How the agent reaches the network (`net` lines). */
  readonly net: readonly string[];
}

/** Where the session's proxy takes the connections the sandbox hands it. */
export interface ProxyEnd {
  accept(s: Socket): void;
}

/** What the supervisor starts in the sandbox. */
export interface LaunchSpec {
  readonly tools: EngineTools;
  /** The agent's command: its file (looked up on the child's PATH) and arguments. */
  readonly command: readonly string[];
  /** The session's own host socket, the one way from inside to the host. */
  readonly hostSocket: string;
  /** The most processes and threads the sandbox may hold (--max-procs). */
  readonly maxProcs: number;
  /** Says a warning on `run`'s stderr (one line, no newline). */
  readonly warn: (line: string) => void;
}

/** The supervisor's command, and what to release once the sandbox has ended. */
export interface Launch {
  readonly file: string;
  readonly args: string[];
  /**
   * Signals go to the terminal's foreground group (the agent), not the
   * started process: a wrapper that would die of a signal meant for the agent.
   */
  readonly signalForeground: boolean;
  /** Gives back what `launch` took (a pids cgroup), after `cleanup`. */
  release(): Promise<void>;
}

/**
 * A sandbox engine. `Plan` is the policy with the engine's own means added
 * (relay sockets, addresses); `run` reads it as the policy and hands it back
 * only to the engine that made it.
 */
export interface SandboxEngine<Plan extends SandboxPolicy = SandboxPolicy> {
  /** Whether it can run here, with the programs it found on `path`. */
  probe(path: string | undefined): EngineProbe;
  /**
   * Whether `path`, a project control of the working directory, looks like
   * what this engine left there in an earlier session (a session killed
   * before its cleanup, or one still running): taken for absent.
   */
  leftover(path: string): boolean;
  /** The policy in the engine's terms. Pure. */
  plan(policy: SandboxPolicy): Plan;
  /** What --print-policy shows of the engine's part. */
  describe(plan: Plan): SandboxDescription;
  /** The outside ends of the sandbox (its way to the proxy and the allowed routes); `close` stops them. */
  open(plan: Plan, proxy: ProxyEnd): Promise<{ close(): void }>;
  /** The command the supervisor starts: the sandbox around `spec.command`. */
  launch(plan: Plan, spec: LaunchSpec): Promise<Launch>;
  /**
   * Once the sandbox's first process has ended: waits until its sandbox is
   * gone (a second at most) and removes what the engine made in the owner's
   * directories, unless another session's sandbox still runs there.
   */
  cleanup(plan: Plan): Promise<void>;
}
