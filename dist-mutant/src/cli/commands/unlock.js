/**
 * `vault-cli unlock`: the passphrase once, then an owner session in the host
 * for this terminal (src/host/owner/unlock.ts). The session is the host's
 * word for this terminal; nothing is written here that another process could
 * read and present.
 */
import { flagCount } from '../context.js';
import { askPassphrase, unlockedLine } from '../owner.js';
const MINUTE = 60_000;
export const run = async (ctx) => {
    const minutes = flagCount(ctx, 'for');
    const idle = flagCount(ctx, 'idle');
    const passphrase = await askPassphrase(ctx);
    const opened = await ctx.call('owner.unlock', {
        passphrase,
        ...(minutes === undefined ? {} : { ttlMs: minutes * MINUTE }),
        ...(idle === undefined ? {} : { idleMs: idle * MINUTE }),
    });
    ctx.stderr.write(unlockedLine(opened));
    return 0;
};
