/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]...
 * [--allow-write DIR]... [--allow-read PATH]... [--allow-net HOST:PORT]...
 * [--no-sandbox] -- <command> [args...]`.
 * An owner command: it decides the agent's sandbox (shell/sandbox-policy.ts,
 * carried out by the engine shell/sandbox-engine.ts chooses; docs/sandbox.md)
 * before anything is asked; with the owner's passphrase it asks the host for
 * a session token for the agent and holds the session on a
 * connection of its own (the host ends the session when that connection
 * ends, even if `run` is killed); serves a proxy that knows the session by
 * the URL's user-info (with a CA that lives in memory only); runs the command
 * in the sandbox under the supervisor in a scrubbed environment, shows the
 * dashboard on Ctrl-], ends the session when the command ends, and exits
 * with the command's status. Without a terminal (a script) or with
 * `--no-pty`, the command gets pipes instead of a pty: its stdout and stderr
 * reach ours apart, bytes intact. On stderr `run` says what it starts, which
 * variables it did not pass, the proxy's refusals, and what the session did.
 * The vault host stays a process of its own (docs/decisions.md: Supervisor).
 * The parts are in src/cli/run/: the profile, the sandbox's facts, the
 * session and its proxy, the agent's environment, what is said on stderr.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { planState } from '../../../shell/profiles.js';
import { flag, flagString, type Command } from '../context.js';
import { commandAfterDashes, findCommand } from '../find-command.js';
import { policyReport } from '../run/print-policy.js';
import { profileFor } from '../run/profile.js';
import { boxFor, kind, warnOpened } from '../run/sandbox.js';
import { heldRoot } from '../run/held.js';
import { makeRunDir, removeStaleRunDirs } from '../run/run-dir.js';
import { agentSession } from '../run/session.js';
import { sessionName } from '../../../shell/held.js';

/**
 * Descriptors `run` inherited (an `exec 260<file` in the owner's shell, an
 * IDE's or CI runner's leftovers) must reach no child: marked close-on-exec
 * before anything is started.
 */
async function dropInheritedFds(): Promise<void> {
  const { closeOnExecAbove2 } = await import('../../kernel/fds.js');
  closeOnExecAbove2();
}

/** The sandbox's engine; a sandbox that cannot start also names `doctor`, which checks the rest. */
async function withDoctor<T>(start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!(err instanceof VaultError && err.code === 'VLT-1005')) throw err;
    throw new VaultError('VLT-1005', `${err.message} vault-cli doctor checks all that run needs.`);
  }
}

export const run: Command = async (ctx) => {
  const { command, file } = commandAfterDashes(ctx.inv.args.command);
  // Checked before a session is minted, so a typo costs no token.
  if (findCommand(file, ctx.env.PATH) === null)
    throw new VaultError('VLT-1004', `Command not found: ${JSON.stringify(file)}.`);
  await dropInheritedFds();
  // Before the passphrase is asked and the agent started: no same-user
  // process may ptrace run or read its memory (src/kernel/dumpable.ts).
  (await import('../../kernel/dumpable.js')).markNotDumpable();
  const agent = flagString(ctx, 'agent') ?? basename(file);
  const profile = profileFor(ctx, file);
  const sandboxed = !flag(ctx, 'no-sandbox');
  // No silent fallback: a sandbox that cannot start is an error before anything is asked.
  const engines = sandboxed ? await import('../../../shell/sandbox-engine.js') : null;
  const sandbox =
    engines === null
      ? null
      : await withDoctor(() => engines.sandboxEngine(process.platform, ctx.env.PATH));
  if (!sandboxed && !flag(ctx, 'print-policy'))
    ctx.stderr.write(
      'vault-cli: warning: --no-sandbox: the agent runs as you, with your files, processes and network (docs/sandbox.md)\n',
    );
  // What a `run` killed by SIGKILL left behind goes first (run-dir.ts).
  await removeStaleRunDirs(tmpdir());
  const runDir = await makeRunDir(tmpdir());
  const dir = runDir.path;
  // The agent's copies of its state, beside where what it changed is held: one file system, no copying twice.
  const held = {
    root: heldRoot(ctx),
    session: sessionName(new Date(), randomBytes(3).toString('hex')),
  };
  const work = join(held.root, `.work-${held.session}`);
  try {
    // Decided before the passphrase is asked: a path the sandbox cannot honour costs no session.
    // Without the sandbox the agent writes your files directly: nothing to bind, copy or merge.
    const plan = planState(sandboxed ? profile : null, homedir(), work, kind);
    // There before the policy is decided, so that the sandbox hides it (print-policy creates nothing).
    if (plan.copies.length + plan.private.length > 0 && !flag(ctx, 'print-policy'))
      try {
        mkdirSync(held.root, { mode: 0o700 });
      } catch {
        // There already; or no vault directory yet, and then no session either.
      }
    const box = sandbox === null ? null : boxFor(ctx, dir, sandbox, plan);
    if (flag(ctx, 'print-policy')) return await policyReport(ctx, profile, plan, box);
    if (box !== null) warnOpened(ctx, box.policy);
    return await agentSession(ctx, { command, dir, agent, profile, plan, box, held });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    runDir.release();
    rmSync(work, { recursive: true, force: true });
  }
};
