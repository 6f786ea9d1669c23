/**
 * A command's references, all or nothing (`exec` and `render`): every
 * distinct reference released by one `resolve` through the host, and what
 * stops the command (a refusal, a malformed reference, a value that cannot go
 * where it was written) reported one line each on stderr, never with a value.
 */
import { ERRORS, VaultError, oneLine } from '../core/errors.js';
import { loadToken } from './token.js';
/** VLT-2046 for each malformed reference a scan found. */
export function malformed(found, where) {
    return found.map((m) => ({
        code: 'VLT-2046',
        where,
        written: m.written,
        reason: `malformed reference: ${m.reason}`,
    }));
}
/** One stderr line per refusal, each once; the exit status is the first one's. */
export function report(ctx, refusals) {
    const seen = new Set();
    for (const r of refusals) {
        const at = r.where === undefined ? '' : `${r.where}: `;
        const line = `vault-cli: ${r.code}: ${at}${oneLine(r.written)}: ${oneLine(r.reason)}`;
        if (seen.has(line))
            continue;
        seen.add(line);
        ctx.stderr.write(line + '\n');
    }
    return ERRORS[refusals[0].code].exit;
}
/**
 * Every reference of `wanted` in one `resolve`: the values by its keys, or
 * the refused references (each said as it was written; the values are never
 * in a message).
 * @throws VaultError a refusal of the whole request (token, lock, limit, host).
 */
export async function resolveAll(ctx, wanted) {
    const keys = [...wanted.keys()];
    const refs = [...wanted.values()];
    if (keys.length === 0)
        return new Map();
    try {
        const { values } = await ctx.call('resolve', {
            token: loadToken(ctx),
            refs: refs.map((r) => ({ entry: r.entry, field: r.field })),
        });
        return new Map(keys.map((k, i) => [k, Buffer.from(values[i] ?? '', 'base64')]));
    }
    catch (err) {
        // A refusal of the whole request (token, lock, limit, host) is one ordinary error line.
        if (!(err instanceof VaultError) || err.problems.length === 0)
            throw err;
        return err.problems.map((p) => ({
            code: p.code,
            where: refs[p.index]?.where,
            written: refs[p.index]?.written ?? '',
            reason: ERRORS[p.code].message,
        }));
    }
}
