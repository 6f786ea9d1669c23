import { VaultError } from '../core/errors.js';
export function flag(ctx, name) {
    return ctx.inv.flags[name] === true;
}
export function flagString(ctx, name) {
    const v = ctx.inv.flags[name];
    return typeof v === 'string' ? v : undefined;
}
export function flagCount(ctx, name) {
    const v = ctx.inv.flags[name];
    return typeof v === 'number' ? v : undefined;
}
export function flagList(ctx, name) {
    const v = ctx.inv.flags[name];
    return Array.isArray(v) ? v : [];
}
export function arg(ctx, name) {
    const v = ctx.inv.args[name];
    return typeof v === 'string' ? v : '';
}
/**
 * The handler `table` holds for the invoked subcommand (the second word of
 * its path): a command made of subcommands keeps one handler each in a table.
 * @throws VaultError VLT-1001 when the table has none (the parser lets no
 * such invocation through).
 */
export function subcommand(ctx, table) {
    const sub = ctx.inv.command?.path[1];
    const handler = sub !== undefined && Object.hasOwn(table, sub) ? table[sub] : undefined;
    if (handler === undefined)
        throw new VaultError('VLT-1001');
    return handler;
}
