/** `vault-cli agent wrap <name> [--command c] [--rm]`: what shell-init wraps. */
import { checkCommandName } from '../../commands/shell-init.js';
import { arg, flag, flagString } from '../context.js';
import { readWraps, writeWraps } from '../wraps.js';
export const run = async (ctx) => {
    const agent = arg(ctx, 'name');
    const command = checkCommandName(flagString(ctx, 'command') ?? agent);
    const wraps = readWraps(ctx.paths.wrapsFile).filter((w) => w.command !== command);
    if (!flag(ctx, 'rm'))
        wraps.push({ agent, command });
    writeWraps(ctx.paths.wrapsFile, wraps);
    ctx.stderr.write(flag(ctx, 'rm')
        ? `vault-cli: ${command} is no longer wrapped\n`
        : `vault-cli: ${command} runs under vault-cli run --agent ${agent} after eval "$(vault-cli shell-init bash)"\n`);
    return Promise.resolve(0);
};
