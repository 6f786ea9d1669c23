/** Starts the real `vault-cli ssh-agent` for the SSH agent tests (e2e/ssh-agent, attack/ssh-agent-flood). */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { hex } from './e2e-helpers.js';
import { type Rig } from './rig.js';

/**
 * Starts `vault-cli ssh-agent` as the agent with `token`, offering `entries`,
 * on a new socket in the rig's root; resolves once it has printed its
 * SSH_AUTH_SOCK line; `env` is the rig's unless given (a remote agent's). The
 * caller ends the child (rig.ts `terminate`).
 */
export async function startSshAgentProcess(
  rig: Rig,
  token: string,
  entries: readonly string[],
  env: NodeJS.ProcessEnv = rig.env,
): Promise<{ child: ChildProcess; sock: string }> {
  const sock = join(rig.root, `agent-${hex(4)}.sock`);
  const child = spawn(process.execPath, [rig.cli, 'ssh-agent', '--socket', sock, ...entries], {
    env: { ...env, VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  for (let i = 0; i < 400 && !out.includes('SSH_AUTH_SOCK='); i++) {
    if (child.exitCode !== null) throw new Error(`ssh-agent exited: ${err}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.match(out, /SSH_AUTH_SOCK=/);
  return { child, sock };
}
