/** The owner's entries: set, remove, show, reveal, list, and the hosts they may go to. */
import { Secret } from '../../crypto/secret.js';
import { listEntries, removeEntry, revealField, setEntry, setHosts, showEntry, } from '../entries/entries.js';
import { owner } from './op.js';
export const entryOps = {
    'entry.set': owner(async ({ ctx }, { body, source }, s) => {
        const value = new Secret(Buffer.from(body.value, 'base64'));
        return setEntry(ctx, s, { entry: body.entry, field: body.field, tier: body.tier, value }, source);
    }),
    'entry.rm': owner(async ({ ctx }, { body, source }, s) => {
        removeEntry(ctx, s, body.entry, source);
        return {};
    }),
    'entry.show': owner(async ({ ctx }, { body }, s) => showEntry(ctx, s, body.entry)),
    'entry.reveal': owner(async ({ ctx }, { body, source }, s) => revealField(ctx, s, { entry: body.entry, field: body.field }, source), { releases: 'Revealing a value' }),
    'entry.ls': owner(async ({ ctx }, _req, s) => ({ entries: listEntries(ctx, s) })),
    'entry.hosts': owner(async ({ ctx }, { body, source }, s) => setHosts(ctx, s, { entry: body.entry, hosts: body.hosts }, source)),
};
