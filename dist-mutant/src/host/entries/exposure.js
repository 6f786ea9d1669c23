/**
 * What the transcript sweep needs of the vault: the values it released (read,
 * ai_read and fill records of the audit, in a time window), or every stored
 * value at the owner's choice, handed to the owner's own `sweep` process; and
 * the *exposed* mark that a finding leaves on a field, sealed in the entry's
 * meta like the rest of it, until the next `entry set` of that field.
 */
import { VaultError, quote } from '../../core/errors.js';
import { KeyArena, open, wipe } from '../../crypto/aead.js';
import { ownerEvent } from '../audit/event.js';
import { openSealed } from '../../crypto/box.js';
import { appendAudit } from '../audit/log.js';
import { withNames } from '../audit/names.js';
import { fieldHash, openMeta, openName, sealMeta } from '../keys/grants.js';
import { slots } from '../keys/slots.js';
/** The actions that handed a value to an agent (or, `fill`, to a server for it). */
const RELEASES = new Set([
    'read',
    'ai_read',
    'fill',
]);
/**
 * The (entry id, field) pairs released at or after `since`, from the audit:
 * a release record names the entry's id and its fields (comma-joined) sealed
 * to the owner's audit key.
 */
function released(tx, s, since) {
    const out = new Map();
    // Both sealing forms: a box per record (older) and a box per record under an epoch key.
    withNames(s.auditKeys(), (openNames) => {
        for (const r of tx.audit()) {
            if (r.at < since || r.outcome !== 'ok' || !RELEASES.has(r.action) || r.sealed === null) {
                continue;
            }
            const opened = openNames(r);
            if (opened === null)
                continue;
            const { entryId, field } = JSON.parse(opened.toString('utf8'));
            if (typeof entryId !== 'string' || typeof field !== 'string')
                continue;
            const fields = out.get(entryId) ?? new Set();
            for (const f of field.split(', '))
                fields.add(f);
            out.set(entryId, fields);
        }
    });
    return out;
}
/**
 * The values to sweep for: those released since `since` (ms; the whole log
 * when undefined) and, with `stored`, every other stored value too. A field
 * rotated since its release is swept for its current value only: the old one
 * is no longer kept, and no longer opens anything. Audited as one `sweep`
 * record (how many values, never which), committed before any value leaves.
 */
export function sweepValues(ctx, s, req, source) {
    // Each entry's data key in one arena, reset after each: a guarded allocation
    // of its own maps fresh pages (~0.1 ms), half this request's time at 1,000 values.
    const arena = new KeyArena();
    try {
        return ctx.commit((tx) => {
            const header = ctx.header(tx);
            const wanted = released(tx, s, req.since ?? 0);
            const out = [];
            for (const e of tx.entries()) {
                const fields = wanted.get(e.id);
                if (fields === undefined && !req.stored)
                    continue;
                out.push(...openFields(tx, s, header, e, fields ?? new Set(), req.stored, arena));
            }
            const n = out.length;
            const what = req.stored ? 'released or stored' : 'released';
            appendAudit(tx, header, ownerEvent(ctx, 'sweep', source, { subject: `${n} value${n === 1 ? '' : 's'} ${what}` }));
            return out;
        });
    }
    finally {
        arena.wipe();
    }
}
/** The entry's fields' values: those in `releasedFields`, and the rest too with `all`. */
function openFields(tx, s, header, e, releasedFields, all, arena) {
    const dataKey = s.dataKey(header, e, arena);
    try {
        const name = openName(header, dataKey, e);
        const meta = openMeta(header, dataKey, e);
        if (name === null || meta === null)
            throw new VaultError('VLT-3003');
        const out = [];
        for (const field of meta.fields) {
            if (!all && !releasedFields.has(field))
                continue;
            const rec = tx.field(e.id, fieldHash(dataKey, e.id, field));
            // Put back from before a rotation: not this entry's value; `vault check` reports it.
            if (rec === null || rec.gen !== e.gen || rec.version < (meta.versions[field] ?? 0))
                continue;
            const value = open(dataKey, rec.value, slots.field(header.vaultId, e.id, field, rec.version, rec.gen));
            if (value === null)
                throw new VaultError('VLT-3003');
            try {
                out.push({
                    entry: name,
                    field,
                    value: value.toString('base64'),
                    released: releasedFields.has(field),
                });
            }
            finally {
                wipe(value);
            }
        }
        return out;
    }
    finally {
        wipe(dataKey);
        arena.reset();
    }
}
/**
 * Marks each field found in a transcript as exposed (sealed in the entry's
 * meta, with the time of the sweep that found it), one `exposed` record per
 * entry. The mark stays until the field is set anew (entries.ts setEntry).
 * @throws VaultError VLT-4001 for an entry that no longer exists.
 */
export function markExposed(ctx, s, found, source) {
    const byEntry = new Map();
    for (const f of found)
        byEntry.set(f.entry, (byEntry.get(f.entry) ?? new Set()).add(f.field));
    // As in sweepValues: one arena for the data keys, not a guarded allocation each.
    const arena = new KeyArena();
    try {
        return markIn(ctx, s, byEntry, source, arena);
    }
    finally {
        arena.wipe();
    }
}
/** markExposed's transaction: each entry's data key from `arena`, which is reset after it. */
function markIn(ctx, s, byEntry, source, arena) {
    return ctx.commit((tx) => {
        const header = ctx.header(tx);
        let marked = 0;
        for (const [name, fields] of byEntry) {
            const id = tx.entryIdByName(s.nameHash(name));
            const e = id === null ? null : tx.entry(id);
            if (e === null)
                throw new VaultError('VLT-4001', `No such entry: ${quote(name)}.`);
            const dataKey = s.dataKey(header, e, arena);
            try {
                const meta = openMeta(header, dataKey, e);
                if (meta === null || openName(header, dataKey, e) !== name) {
                    throw new VaultError('VLT-3003');
                }
                const exposed = { ...meta.exposed };
                const now = ctx.now();
                const named = [...fields].filter((f) => meta.fields.includes(f));
                for (const f of named)
                    exposed[f] = now;
                if (named.length === 0)
                    continue;
                marked += named.length;
                tx.putEntry({ ...e, meta: sealMeta(header, dataKey, e.id, e.gen, { ...meta, exposed }) });
                appendAudit(tx, header, ownerEvent(ctx, 'exposed', source, {
                    entryId: e.id,
                    entry: name,
                    field: named.join(', '),
                }));
            }
            finally {
                wipe(dataKey);
                arena.reset();
            }
        }
        return { marked };
    });
}
/**
 * A sweep backup's file key, opened with the owner's audit key for `sweep
 * --open-backup`; audited (`sweep`, "backup opened") before it leaves.
 * @throws VaultError VLT-3037 when it does not open (not this vault's).
 */
export function openBackupKey(ctx, s, sealedKey, source) {
    const key = openSealed(s.auditKeys(), Buffer.from(sealedKey, 'base64'));
    if (key === null || key.length !== 32) {
        throw new VaultError('VLT-3037', "The sweep backup is not this vault's, or it was changed.");
    }
    try {
        ctx.commit((tx) => appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'sweep', source, { subject: 'backup opened' })));
        return key.toString('base64');
    }
    finally {
        wipe(key);
    }
}
