/**
 * `vault-cli dashboard`: the live dashboard for the whole vault, from any
 * terminal, with the owner's vault UI. The same dashboard `run` shows on
 * Ctrl-]. Ink and react are loaded here only, after the passphrase is checked.
 */
import { VaultError } from '../../core/errors.js';
import { openBrowser } from '../ceremony.js';
import { flag, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';

/** The dashboard's way to the vault: owner calls to the host, unlock ceremonies with the CLI's hooks. */
export async function dashboardApi(ctx: CliContext, passphrase: string) {
  const { hostDashboardApi } = await import('../../../tui/host-api.js');
  // The dashboard shows the ceremony page's URL itself; nothing goes to stderr under it.
  return hostDashboardApi(
    ctx.client,
    passphrase,
    flag(ctx, 'no-browser') ? {} : { onUrl: (url) => openBrowser(url) },
  );
}

export const run: Command = async (ctx) => {
  if (ctx.stdin.isTTY !== true || ctx.stdout.isTTY !== true)
    throw new VaultError('VLT-1001', 'The dashboard needs a terminal.');
  const passphrase = await ownerPassphrase(ctx);
  // A wrong passphrase is reported on the plain terminal, before the screen changes.
  await ctx.call('agent.ls', { passphrase });
  const [{ showDashboard }, api] = await Promise.all([
    import('../../../tui/index.js'),
    dashboardApi(ctx, passphrase),
  ]);
  await showDashboard({ api, stdin: ctx.stdin, stdout: ctx.stdout, vault: ctx.paths.vaultDir });
  return 0;
};
