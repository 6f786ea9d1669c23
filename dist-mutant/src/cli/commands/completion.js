/**
 * `vault-cli completion bash|zsh|fish`: the completion script, generated from
 * the command table; `completion install [shell] [--rc]` puts it where the
 * shell loads it (src/cli/completion-install.ts).
 */
import { basename } from 'node:path';
import { SHELLS } from '../../commands/table.js';
import { completionScript } from '../../commands/completion.js';
import { VaultError, quote } from '../../core/errors.js';
import { completionPlace, installCompletion } from '../completion-install.js';
import { arg, flag } from '../context.js';
export const run = async (ctx) => {
    if (ctx.inv.command?.path[1] === 'install')
        return Promise.resolve(install(ctx));
    ctx.stdout.write(completionScript(shellOf(arg(ctx, 'shell'))));
    return Promise.resolve(0);
};
function shellOf(shell) {
    if (!SHELLS.includes(shell)) {
        throw new VaultError('VLT-1001', `unknown shell ${quote(shell)}: use bash, zsh or fish (see vault-cli --help)`);
    }
    return shell;
}
function install(ctx) {
    const given = arg(ctx, 'shell');
    const shell = shellOf(given !== '' ? given : basename(ctx.env.SHELL ?? ''));
    const place = completionPlace(shell, ctx.env);
    for (const said of installCompletion(place, completionScript(shell), flag(ctx, 'rc')))
        ctx.stderr.write(`vault-cli: ${said}\n`);
    return 0;
}
