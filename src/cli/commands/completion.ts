/** `vault-cli completion bash|zsh|fish`: the completion script, generated from the command table. */
import { SHELLS } from '../../commands/table.js';
import { completionScript, type Shell } from '../../commands/completion.js';
import { VaultError, quote } from '../../core/errors.js';
import { arg, type Command } from '../context.js';

export const run: Command = async (ctx) => {
  const shell = arg(ctx, 'shell');
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new VaultError(
      'VLT-1001',
      `unknown shell ${quote(shell)}: use bash, zsh or fish (see vault-cli --help)`,
    );
  }
  ctx.stdout.write(completionScript(shell as Shell));
  return Promise.resolve(0);
};
