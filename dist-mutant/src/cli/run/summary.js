// What `run` says on stderr about the session: before it starts, and after it ends.
import { basename } from 'node:path';
/** What `run` is about to start, said once on stderr before it does. */
export function startLine(command, agent, sandboxed, pty) {
    const where = sandboxed ? 'in the sandbox' : 'NOT sandboxed';
    const keys = pty ? '; Ctrl-] shows the dashboard' : '';
    return `vault-cli: running ${JSON.stringify(basename(command[0] ?? ''))} as agent ${JSON.stringify(agent)}, ${where}${keys}`;
}
/**
 * What the session did, from the audit: reads and refusals as the agent
 * between this `run`'s session_start and session_end (the host records the
 * caller's pid as the source). Concurrent use of the same agent elsewhere
 * counts too: the audit does not tell sessions of one agent apart.
 */
export async function summaryLine(ctx, s) {
    const end = `exit status ${s.status}; session token ${s.revoked ? 'revoked' : 'ended with the host'}`;
    let records;
    try {
        ({ records } = await ctx.call('audit.list', {
            passphrase: s.passphrase,
            agent: s.agent,
            since: s.since,
        }));
    }
    catch {
        return `vault-cli: session ended: ${end}`;
    }
    const ours = (r, action) => r.action === action && r.subject === s.agent && r.source.startsWith(`pid:${process.pid} `);
    const from = records.find((r) => ours(r, 'session_start'))?.seq;
    const to = records.findLast((r) => ours(r, 'session_end'))?.seq ?? Infinity;
    const during = records.filter((r) => from !== undefined && r.seq > from && r.seq < to && r.actor === `cli:${s.agent}`);
    const reads = during.filter((r) => r.outcome === 'ok').length;
    const refusals = during.length - reads;
    const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
    return `vault-cli: session ended: ${plural(reads, 'read')}, ${plural(refusals, 'refusal')}; ${end}`;
}
