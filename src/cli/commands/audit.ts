/**
 * `vault-cli audit`: TIME ACTION ENTRY ACTOR, or every field as JSON lines
 * with --json; --agent and --since filter; --follow keeps printing; --verify
 * checks the hash chain.
 */
import { FOLLOW_WIDTHS, formatAuditTable, parseSince, type AuditView } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { flag, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';

function jsonLine(r: AuditView): string {
  return JSON.stringify({ ...r, time: new Date(r.at).toISOString() }) + '\n';
}

function filters(ctx: CliContext): { agent?: string; since?: number } {
  const agent = flagString(ctx, 'agent');
  const sinceText = flagString(ctx, 'since');
  const since = sinceText === undefined ? undefined : parseSince(sinceText, Date.now());
  if (since === null) {
    throw new VaultError(
      'VLT-1002',
      '--since takes a time (2026-11-22 14:00) or a span (10m, 2h, 7d).',
    );
  }
  return { ...(agent === undefined ? {} : { agent }), ...(since === undefined ? {} : { since }) };
}

export const run: Command = async (ctx) => {
  const passphrase = await ownerPassphrase(ctx);
  if (flag(ctx, 'verify')) {
    const v = await ctx.call('audit.verify', { passphrase });
    if (v.brokenAt !== null) {
      throw new VaultError(
        'VLT-3003',
        `Audit chain broken at record ${v.brokenAt} of ${v.records}: a record was changed, removed or reordered.`,
      );
    }
    if (v.anchorProblem !== null) {
      throw new VaultError(
        'VLT-3003',
        `Audit chain does not match the owner's anchor: ${v.anchorProblem}.`,
      );
    }
    ctx.stdout.write(
      `audit chain verified: ${v.records} records; anchored up to record ${v.anchored} by the owner, ${v.unanchored} after it unanchored\n`,
    );
    return 0;
  }
  const f = filters(ctx);
  const json = flag(ctx, 'json');
  if (flag(ctx, 'follow')) {
    const { follow } = await import('../../client/client.js');
    if (!json) ctx.stdout.write(formatAuditTable([], FOLLOW_WIDTHS));
    await follow(ctx.client, 'audit.follow', { passphrase, ...f }, (line) => {
      const r = JSON.parse(line) as AuditView;
      ctx.stdout.write(json ? jsonLine(r) : formatAuditTable([r], FOLLOW_WIDTHS, false));
    });
    return 0;
  }
  const { records } = await ctx.call('audit.list', { passphrase, ...f });
  ctx.stdout.write(json ? records.map(jsonLine).join('') : formatAuditTable(records));
  return 0;
};
