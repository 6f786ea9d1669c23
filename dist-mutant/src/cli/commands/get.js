/** `vault-cli get <entry> [--field f]`: one value and a newline on stdout, which must be a pipe. */
import { VaultError } from '../../core/errors.js';
import { DEFAULT_FIELD, isFieldName } from '../../core/names.js';
import { arg, flagString } from '../context.js';
import { requirePipe, writeValue } from '../pipe-only.js';
import { loadToken } from '../token.js';
export const run = async (ctx) => {
    requirePipe('vault-cli get <entry>');
    const field = flagString(ctx, 'field') ?? DEFAULT_FIELD;
    if (!isFieldName(field))
        throw new VaultError('VLT-1002', 'Field names are [A-Za-z0-9_-]+.');
    const { value } = await ctx.call('read', {
        token: loadToken(ctx),
        entry: arg(ctx, 'entry'),
        field,
        mode: 'get',
    });
    const bytes = Buffer.from(value, 'base64');
    writeValue(ctx, bytes);
    bytes.fill(0);
    return 0;
};
