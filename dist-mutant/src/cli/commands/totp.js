/** `vault-cli totp <entry>`: the current code; the seed never leaves the host, the code goes only into a pipe. */
import { arg } from '../context.js';
import { requirePipe, writeValue } from '../pipe-only.js';
import { loadToken } from '../token.js';
export const run = async (ctx) => {
    requirePipe('vault-cli totp <entry>');
    const { value } = await ctx.call('read', {
        token: loadToken(ctx),
        entry: arg(ctx, 'entry'),
        field: 'totp',
        mode: 'totp',
    });
    writeValue(ctx, Buffer.from(value, 'base64'));
    return 0;
};
