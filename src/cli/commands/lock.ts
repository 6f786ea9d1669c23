/** `vault-cli lock`: ends this terminal's owner session; the next owner command asks again. */
import type { Command } from '../context.js';

export const run: Command = async (ctx) => {
  const { ended } = await ctx.call('owner.lock', {}, { autoStart: false }).catch((err: unknown) => {
    // No host running: no session either.
    if (err instanceof Error && 'code' in err && err.code === 'VLT-3005') return { ended: false };
    throw err;
  });
  ctx.stderr.write(
    ended ? 'vault-cli: locked\n' : 'vault-cli: this terminal had no owner session\n',
  );
  return 0;
};
