/** The audit log: list it, follow it, verify it, archive its old records. */
import { matchesFilter } from '../../core/audit.js';
import { wipe } from '../../crypto/aead.js';
import { archiveAudit, verifyWithArchive } from '../vault/archive.js';
import { viewAudit } from '../audit/log.js';
import { refusalsOf } from '../audit/refusals.js';
import { owner } from './op.js';
/** How often a follower also polls, for records another host process committed. */
const FOLLOW_POLL_MS = 1000;
function filterOf(body) {
    return { agent: body.agent, since: body.since, afterSeq: body.afterSeq };
}
/** A follower may last for hours: it keeps the audit key pair, not the root key. */
const auditKeysOnly = owner((_env, _req, s) => s.keepAuditKeysOnly(), {
    rotate: false,
    anchor: false,
});
export const auditOps = {
    'audit.list': owner(async ({ ctx }, { body }, s) => {
        // The owner sees refusals counted so far, not only those of windows ended.
        refusalsOf(ctx).flush();
        const filter = filterOf(body);
        const matching = ctx
            .store()
            .read((tx) => tx.audit())
            .filter((r) => matchesFilter(r, filter));
        // Only the records shown are opened: a dashboard asks for its last screenful.
        const records = body.last === undefined ? matching : matching.slice(-body.last);
        return { records: viewAudit(records, s.auditKeys()) };
    }),
    'audit.verify': owner(async ({ ctx }, { body }, s) => {
        refusalsOf(ctx).flush();
        return verifyWithArchive(ctx, s, body.archives);
    }),
    'audit.archive': owner(async ({ ctx }, { body, source }, s) => archiveAudit(ctx, s, { path: body.path, before: body.before }, source)),
    /**
     * `audit --follow`: unlocks once, then writes matching records as JSON lines
     * as they are committed, until the client goes away. The body is delimited by
     * the connection's end (no chunking), so every line arrives as written.
     */
    'audit.follow': {
        stream: async (env, req, res) => {
            const { ctx } = env;
            const filter = filterOf(req.body);
            const keys = await auditKeysOnly(env, req);
            let last = filter.afterSeq ?? 0;
            res.useChunkedEncodingByDefault = false;
            res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
            const flush = () => {
                const fresh = ctx.store().read((tx) => tx.audit(last + 1));
                if (fresh.length === 0)
                    return;
                last = fresh[fresh.length - 1]?.seq ?? last;
                const shown = viewAudit(fresh.filter((r) => matchesFilter(r, filter)), keys);
                if (shown.length > 0)
                    res.write(shown.map((r) => JSON.stringify(r) + '\n').join(''));
            };
            env.followers.count++;
            ctx.events.on('commit', flush);
            const poll = setInterval(flush, FOLLOW_POLL_MS);
            res.on('close', () => {
                env.followers.count--;
                ctx.events.off('commit', flush);
                clearInterval(poll);
                wipe(keys.secretKey);
            });
            flush();
        },
    },
};
