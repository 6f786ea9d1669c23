/**
 * `vault-cli held [<session>]` and `vault-cli held restore <session> [<path>]`:
 * what `run` held of an agent's state (shell/held.ts, docs/run.md), and the
 * owner's way to bring it back. Files of the owner's alone: no host call.
 */
import { arg } from '../context.js';
import { heldRoot } from '../run/held.js';
export const run = async (ctx) => {
    const { heldSessions, readManifest, restoreHeld, shownPath } = await import('../../../shell/held.js');
    const root = heldRoot(ctx);
    const session = arg(ctx, 'session');
    if (ctx.inv.command?.path[1] === 'restore') {
        const path = arg(ctx, 'path');
        for (const p of restoreHeld(root, session, path === '' ? undefined : path))
            ctx.stderr.write(`vault-cli: restored ${shownPath(p)}\n`);
        return 0;
    }
    const sessions = session === '' ? heldSessions(root) : [readManifest(root, session)];
    if (sessions.length === 0)
        ctx.stderr.write('vault-cli: nothing is held\n');
    for (const m of sessions)
        for (const i of m.items) {
            const what = i.kind === 'keys' ? ` keys ${(i.keys ?? []).join(', ')}` : '';
            ctx.stdout.write(`${m.session}\t${m.profile}\t${shownPath(i.path)}${what}\n`);
        }
    return 0;
};
