// Ctrl-]: the terminal handed from the agent to the dashboard and back.
import { VaultError } from '../../core/errors.js';
import type { SuperviseOptions } from '../../../shell/supervisor.js';
import type { DashboardApi } from '../../../tui/api.js';
import type { CliContext } from '../context.js';
import type { Refusals } from './refusals.js';

/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;

/**
 * Ctrl-] to the dashboard and back. While it is shown the proxy's refusals
 * are only counted: the dashboard lists them itself, and a line on its
 * screen (or on the agent's, which is repainted on return) would be torn or lost.
 */
export function dashboardHandOver(
  ctx: CliContext,
  api: DashboardApi,
  report: Refusals,
): NonNullable<SuperviseOptions['handOver']> {
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
      } finally {
        report.resume();
      }
    },
    onError: (err) => {
      ctx.stderr.write(
        `vault-cli: ${err instanceof VaultError ? `${err.code}: ${err.message}` : 'the dashboard failed'}\r\n`,
      );
    },
  };
}
