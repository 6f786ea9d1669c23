// The session's SSH agent under `run --ssh <entry>` (docs/ssh.md).
import { join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { hostKeys, hostSigner, startSshAgent } from '../ssh-agent.js';
/**
 * Serves the SSH agent protocol for the session on `ssh-agent.sock` in the
 * session directory (read-only inside the sandbox, where a socket still
 * connects), with the session's token: the keys listed and every signature
 * are the session's, checked in the host; ending the session ends them
 * (its token is revoked). The agent's SSH_AUTH_SOCK names it.
 * @throws VaultError as `ssh.keys` (an entry out of the session's scope: VLT-2041).
 */
export async function sessionSshAgent(ctx, dir, token, entries) {
    const keys = await hostKeys(ctx, token, entries);
    const path = join(dir, 'ssh-agent.sock');
    const agent = await startSshAgent({
        path,
        keys,
        sign: hostSigner(ctx, token),
        onRefusal: (err) => {
            const e = err instanceof VaultError ? err : new VaultError('VLT-3007');
            ctx.stderr.write(`vault-cli: the ssh agent refused: ${e.line().replace(/^vault-cli: /, '')}\n`);
        },
    });
    return { path, close: () => void agent.close() };
}
