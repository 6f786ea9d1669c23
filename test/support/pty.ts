/**
 * Drives the built CLI under a pseudo-terminal, as a user's terminal would
 * (ink and gemini-cli test rigs), with a `vault-cli` on PATH for the child.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the rig is the user's terminal: it drives the CLI under a pty
import { spawn, type IPty } from 'node-pty';
import { type Rig } from './rig.js';

export interface PtyFate {
  readonly output: string;
  readonly exitCode: number;
  readonly signal: number;
}

export interface PtyRun {
  readonly pty: IPty;
  readonly exited: Promise<PtyFate>;
  output(): string;
}

/** Puts a `vault-cli` script running the built CLI in `<rig>/bin` and returns that directory. */
export function installBin(rig: Rig): string {
  const bin = join(rig.root, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, 'vault-cli'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(rig.cli)} "$@"\n`,
  );
  chmodSync(join(bin, 'vault-cli'), 0o755);
  return bin;
}

/** Starts `vault-cli args` under a pty as the owner; `exited` resolves with all it printed. */
export function underPty(
  rig: Rig,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  cwd: string = rig.root,
): PtyRun {
  const merged: Record<string, string> = {};
  const bin = join(rig.root, 'bin');
  for (const [k, v] of Object.entries({ ...rig.env, PATH: `${bin}:${process.env.PATH}`, ...env }))
    if (v !== undefined) merged[k] = v;
  const pty = spawn(process.execPath, [rig.cli, ...args], {
    cols: 100,
    rows: 30,
    cwd,
    env: merged,
  });
  let output = '';
  pty.onData((d) => (output += d));
  const exited = new Promise<PtyFate>((resolve) =>
    pty.onExit(({ exitCode, signal }) => resolve({ output, exitCode, signal: signal ?? 0 })),
  );
  return { pty, exited, output: () => output };
}

/** Polls `what` until it holds (30 s at most). A wait, never a timing assertion. */
export async function until(what: () => boolean, label: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (what()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${label}`);
}

/**
 * Starts a POSIX shell under a pty as the owner's terminal, with `vault-cli`
 * on PATH: commands typed into it share one controlling terminal and one
 * session, as a user's commands in one terminal window do.
 */
export function shellUnderPty(rig: Rig, env: Record<string, string | undefined> = {}): PtyRun {
  const bin = installBin(rig);
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...rig.env,
    PATH: `${bin}:${process.env.PATH}`,
    PS1: '$ ',
    ...env,
  }))
    if (v !== undefined) merged[k] = v;
  const pty = spawn('/bin/sh', ['-i'], { cols: 200, rows: 50, cwd: rig.root, env: merged });
  let output = '';
  pty.onData((d) => (output += d));
  const exited = new Promise<PtyFate>((resolve) =>
    pty.onExit(({ exitCode, signal }) => resolve({ output, exitCode, signal: signal ?? 0 })),
  );
  return { pty, exited, output: () => output };
}

/** How runScript starts the session: agent `a`, no flags, bash, in the rig's directory unless told. */
export interface ScriptOptions {
  readonly agent?: string;
  /** `run`'s own flags, before the `--`. */
  readonly flags?: readonly string[];
  readonly env?: Record<string, string | undefined>;
  readonly shell?: 'sh' | 'bash';
  readonly cwd?: string;
}

/** `vault-cli run --agent AGENT FLAGS -- SHELL -c SCRIPT` under a pty as the owner. */
export function runScript(rig: Rig, script: string, o: ScriptOptions = {}): PtyRun {
  const { agent = 'a', flags = [], env = {}, shell = 'bash', cwd = rig.root } = o;
  return underPty(rig, ['run', '--agent', agent, ...flags, '--', shell, '-c', script], env, cwd);
}

/** The `name=value` lines a script printed, as a map (the last line of a name wins). */
export function said(output: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of output.split(/\r?\n/)) {
    const hit = /^([a-z0-9-]+)=(.*)$/.exec(line.trim());
    if (hit !== null) m.set(hit[1] as string, hit[2] as string);
  }
  return m;
}
