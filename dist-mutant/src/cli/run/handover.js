// Ctrl-]: the terminal handed from the agent to the dashboard and back.
import { VaultError } from '../../core/errors.js';
/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;
/**
 * Ctrl-] to the dashboard and back. While it is shown the proxy's refusals
 * are only counted: the dashboard lists them itself, and a line on its
 * screen (or on the agent's, which is repainted on return) would be torn or lost.
 */
export function dashboardHandOver(ctx, api, report) {
    return {
        key: HAND_OVER_KEY,
        show: async (io) => {
            const { showDashboard } = await import('../../../tui/index.js');
            report.hold();
            try {
                await showDashboard({
                    api,
                    stdin: io.stdin,
                    stdout: io.stdout,
                    signal: io.signal,
                    vault: ctx.paths.vaultDir,
                });
            }
            finally {
                report.resume();
            }
        },
        onError: (err) => {
            ctx.stderr.write(`vault-cli: ${err instanceof VaultError ? `${err.code}: ${err.message}` : 'the dashboard failed'}\r\n`);
        },
    };
}
