// The session's SSH agent under `run --ssh <entry>` (docs/ssh.md).
import { join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { agentKey, startSshAgent } from '../ssh-agent.js';

/**
 * Serves the SSH agent protocol for the session on `ssh-agent.sock` in the
 * session directory (read-only inside the sandbox, where a socket still
 * connects), with the session's token: the keys listed and every signature
 * are the session's, checked in the host; ending the session ends them
 * (its token is revoked). The agent's SSH_AUTH_SOCK names it.
 * @throws VaultError as `ssh.keys` (an entry out of the session's scope: VLT-2041).
 */
export async function sessionSshAgent(
  ctx: CliContext,
  dir: string,
  token: string,
  entries: readonly string[],
): Promise<{ path: string; close(): void }> {
  const listed = await ctx.call('ssh.keys', { token, entries: [...entries] });
  const keys = entries.map((entry, i) => agentKey(entry, listed.keys[i] ?? ''));
  const path = join(dir, 'ssh-agent.sock');
  const server = await startSshAgent({
    path,
    keys,
    sign: async (req) => {
      const res = await ctx.call('ssh.sign', {
        token,
        entry: req.entry,
        key: req.key.toString('base64'),
        data: req.data.toString('base64'),
        flags: req.flags,
        binds: req.binds.map((b) => b.toString('base64')),
      });
      return Buffer.from(res.signature, 'base64');
    },
    onRefusal: (err) => {
      const e = err instanceof VaultError ? err : new VaultError('VLT-3007');
      ctx.stderr.write(
        `vault-cli: the ssh agent refused: ${e.line().replace(/^vault-cli: /, '')}\n`,
      );
    },
  });
  return { path, close: () => server.close() };
}
