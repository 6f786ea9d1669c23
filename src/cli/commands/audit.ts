/** `vault-cli audit`: TIME ACTION ENTRY ACTOR, or every field as JSON lines with --json. */
import { formatAuditTable } from '../../core/audit.js';
import { flag, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';

export const run: Command = async (ctx) => {
  const { records } = await ctx.call('audit.list', { passphrase: await ownerPassphrase(ctx) });
  if (flag(ctx, 'json')) {
    ctx.stdout.write(
      records
        .map((r) => JSON.stringify({ ...r, time: new Date(r.at).toISOString() }) + '\n')
        .join(''),
    );
  } else {
    ctx.stdout.write(formatAuditTable(records));
  }
  return 0;
};
