/**
 * `vault-cli ssh-agent [--socket <path>] <entry>...`: an SSH agent whose keys
 * stay in the vault (docs/ssh.md). It lists the named entries' public keys
 * (read once at start, with the caller's token: a name out of scope fails
 * here as `get` would) and asks the host for every signature.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { flagString } from '../context.js';
import { hostKeys, hostSigner, startSshAgent } from '../ssh-agent.js';
import { loadToken } from '../token.js';
export const run = async (ctx) => {
    const token = loadToken(ctx);
    const names = ctx.inv.args['entry'];
    const entries = Array.isArray(names) ? names : typeof names === 'string' ? [names] : [];
    if (entries.length === 0)
        throw new VaultError('VLT-1001', 'Name the entries whose keys it offers.');
    const keys = await hostKeys(ctx, token, entries);
    const path = flagString(ctx, 'socket') ?? join(mkdtempSync(join(tmpdir(), 'vault-ssh-')), 'agent.sock');
    const agent = await startSshAgent({
        path,
        keys,
        sign: hostSigner(ctx, token),
        // ssh shows only "agent refused operation": the reason goes to this agent's stderr.
        onRefusal: (err) => {
            const line = err instanceof VaultError ? `${err.code}: ${err.message}` : 'VLT-3007: internal error';
            ctx.stderr.write(`vault-cli: ${line}\n`);
        },
    });
    const quoted = /^[A-Za-z0-9_./:,=@+-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
    // The handlers are in place before the line that tells the caller the agent
    // is up: stdout to a pipe is written at once, so a caller that signals on
    // reading it could otherwise meet SIGTERM's default action. A second signal
    // during the close is the same stop.
    const stopped = new Promise((resolve) => {
        const stop = () => void agent.close().then(resolve);
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
    });
    ctx.stdout.write(`SSH_AUTH_SOCK=${quoted}; export SSH_AUTH_SOCK;\n`);
    await stopped;
    return 0;
};
