/** `vault-cli shell-init bash|zsh|fish`: completion and the agent wrappers, to eval. */
import { SHELLS } from '../../commands/table.js';
import { VaultError, quote } from '../../core/errors.js';
import { shellInit } from '../../commands/shell-init.js';
import { arg } from '../context.js';
import { readWraps } from '../wraps.js';
export const run = async (ctx) => {
    const shell = arg(ctx, 'shell');
    if (!SHELLS.includes(shell)) {
        throw new VaultError('VLT-1001', `unknown shell ${quote(shell)}: use bash, zsh or fish (see vault-cli --help)`);
    }
    ctx.stdout.write(shellInit(shell, readWraps(ctx.paths.wrapsFile)));
    return Promise.resolve(0);
};
