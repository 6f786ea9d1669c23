/**
 * `vault-cli dashboard`: the live dashboard for the whole vault, from any
 * terminal, with the owner's vault UI. The same dashboard `run` shows on
 * Ctrl-]. It holds one owner session for its lifetime: the terminal's, or one
 * it opens with the passphrase typed once; no refresh derives a key. Ink and
 * react are loaded here only, after the passphrase is checked.
 */
import { VaultError } from '../../core/errors.js';
import { openBrowser } from '../ceremony.js';
import { flag } from '../context.js';
import { askPassphrase, terminalUnlocked } from '../owner.js';
/** The dashboard's way to the vault: owner calls to the host, unlock ceremonies with the CLI's hooks. */
export async function dashboardApi(ctx, passphrase) {
    const { hostDashboardApi } = await import('../../../tui/host-api.js');
    // The dashboard shows the ceremony page's URL itself; nothing goes to stderr under it.
    return hostDashboardApi(ctx.client, passphrase, flag(ctx, 'no-browser') ? {} : { onUrl: (url) => openBrowser(url) });
}
/**
 * The passphrase the dashboard keeps to open its session again, or undefined
 * when it uses the terminal's. A wrong passphrase is reported here, on the
 * plain terminal, before the screen changes.
 */
async function unlockOnce(ctx) {
    if (await terminalUnlocked(ctx))
        return undefined;
    const passphrase = await askPassphrase(ctx);
    try {
        await ctx.call('owner.unlock', { passphrase });
    }
    catch (err) {
        // A terminal the host cannot see holds no session: each call carries the passphrase.
        if (!(err instanceof VaultError && err.code === 'VLT-2054'))
            throw err;
        await ctx.call('agent.ls', { passphrase });
    }
    return passphrase;
}
export const run = async (ctx) => {
    if (ctx.stdin.isTTY !== true || ctx.stdout.isTTY !== true)
        throw new VaultError('VLT-1001', 'The dashboard needs a terminal.');
    const passphrase = await unlockOnce(ctx);
    const [{ showDashboard }, api] = await Promise.all([
        import('../../../tui/index.js'),
        dashboardApi(ctx, passphrase),
    ]);
    await showDashboard({ api, stdin: ctx.stdin, stdout: ctx.stdout, vault: ctx.paths.vaultDir });
    return 0;
};
