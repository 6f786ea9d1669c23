/**
 * `vault-cli audit`: TIME ACTION ENTRY ACTOR, or every field as JSON lines
 * with --json; --agent and --since filter; --follow keeps printing; --verify
 * checks the hash chain.
 */
import { FOLLOW_WIDTHS, formatAuditTable, parseSince } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { showableJson } from '../../core/names.js';
import { resolve } from 'node:path';
import { arg, flag, flagList, flagString } from '../context.js';
import { ownerPassphrase } from '../owner.js';
/** One record as a JSON line; names an agent chose are in it, their controls escaped. */
function jsonLine(r) {
    return showableJson(JSON.stringify({ ...r, time: new Date(r.at).toISOString() })) + '\n';
}
function filters(ctx) {
    const agent = flagString(ctx, 'agent');
    const sinceText = flagString(ctx, 'since');
    const since = sinceText === undefined ? undefined : parseSince(sinceText, Date.now());
    if (since === null) {
        throw new VaultError('VLT-1002', '--since takes a time (2026-11-22 14:00) or a span (10m, 2h, 7d).');
    }
    return { ...(agent === undefined ? {} : { agent }), ...(since === undefined ? {} : { since }) };
}
export const run = async (ctx) => {
    if (ctx.inv.command?.path[1] === 'archive')
        return archive(ctx);
    const passphrase = await ownerPassphrase(ctx);
    const archives = flagList(ctx, 'archive').map((f) => resolve(f));
    if (archives.length > 0 && !flag(ctx, 'verify')) {
        throw new VaultError('VLT-1001', '--archive goes with --verify.');
    }
    if (flag(ctx, 'verify')) {
        const v = await ctx.call('audit.verify', {
            passphrase,
            ...(archives.length === 0 ? {} : { archives }),
        });
        if (v.brokenAt !== null) {
            throw new VaultError('VLT-3003', `Audit chain broken at record ${v.brokenAt} of ${v.records}: a record was changed, removed or reordered.`);
        }
        if (v.anchorProblem !== null) {
            throw new VaultError('VLT-3003', `Audit chain does not match the owner's anchor: ${v.anchorProblem}.`);
        }
        if (typeof v.sealProblem === 'string') {
            throw new VaultError('VLT-3045', `Audit --verify: ${v.sealProblem}.`);
        }
        const where = v.archived !== undefined
            ? ` (${v.archived} in the archive, ${v.records - v.archived} in the store)`
            : (v.from ?? 1) > 1
                ? ` (from record ${v.from}; earlier ones are archived: --archive <file> verifies them too)`
                : '';
        ctx.stdout.write(`audit chain verified: ${v.records} records${where}; anchored up to record ${v.anchored} by the owner, ${v.unanchored} after it unanchored\n`);
        return 0;
    }
    const f = filters(ctx);
    const json = flag(ctx, 'json');
    if (flag(ctx, 'follow')) {
        const { follow } = await import('../../client/follow.js');
        if (!json)
            ctx.stdout.write(formatAuditTable([], FOLLOW_WIDTHS));
        await follow(ctx.client, 'audit.follow', { passphrase, ...f }, (line) => {
            const r = JSON.parse(line);
            ctx.stdout.write(json ? jsonLine(r) : formatAuditTable([r], FOLLOW_WIDTHS, false));
        });
        return 0;
    }
    const { records } = await ctx.call('audit.list', { passphrase, ...f });
    ctx.stdout.write(json ? records.map(jsonLine).join('') : formatAuditTable(records));
    return 0;
};
async function archive(ctx) {
    const text = flagString(ctx, 'before');
    if (text === undefined)
        throw new VaultError('VLT-1001', 'audit archive needs --before <time>.');
    const before = parseSince(text, Date.now());
    if (before === null) {
        throw new VaultError('VLT-1002', '--before takes a time (2026-11-01) or a span (30d).');
    }
    const path = resolve(arg(ctx, 'file'));
    const r = await ctx.call('audit.archive', {
        passphrase: await ownerPassphrase(ctx),
        path,
        before,
    });
    if (r.archived === 0)
        ctx.stdout.write('no audit records that old: nothing archived\n');
    else {
        ctx.stdout.write(`archived records ${r.firstSeq} to ${r.lastSeq} (${r.archived}) to ${path}; ${r.kept} remain in the store\n`);
    }
    return 0;
}
