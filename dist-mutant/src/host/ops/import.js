import { VaultError, quote } from '../../core/errors.js';
import { checkImportName } from '../../import/formats.js';
import { Secret } from '../../crypto/secret.js';
import { RECORD_BYTES } from '../../store/engine.js';
import { checkSet, entryExists, setEntryIn } from '../entries/entries.js';
import { owner } from './op.js';
/** At most this many names in the refusal; the rest are counted. */
const NAMED = 20;
export const importOps = {
    'entry.import': owner(async ({ ctx }, { body, source }, s) => {
        // Replacing the owner's values from a file an agent may have written: asked again.
        if (body.existing === 'overwrite')
            s.requireProof('Replacing values by an import');
        return importEntries(ctx, s, body, source);
    }),
};
function importEntries(ctx, s, body, source) {
    const sets = [];
    const names = new Set();
    let bytes = 0;
    let records = 0;
    try {
        body.entries.forEach((e, i) => {
            if (names.has(e.name)) {
                throw new VaultError('VLT-1002', `Entry ${i + 1} of the import repeats a name.`);
            }
            // As the client checked it: no name that could reach the owner's terminal as an escape.
            checkImportName(e.name, `entry ${i + 1} of the import`);
            names.add(e.name);
            const fields = new Set();
            sets.push(e.fields.map((f) => {
                if (fields.has(f.field)) {
                    throw new VaultError('VLT-1002', `Entry ${i + 1} of the import repeats a field.`);
                }
                fields.add(f.field);
                const value = new Secret(Buffer.from(f.value, 'base64'));
                bytes += value.length;
                records++;
                try {
                    return checkSet({ entry: e.name, field: f.field, tier: body.tier, value });
                }
                catch (err) {
                    value.wipe();
                    if (!(err instanceof VaultError))
                        throw err;
                    throw new VaultError('VLT-1002', `Entry ${i + 1} of the import (${quote(e.name)}), field ${f.field}: ${err.message}`, { cause: err });
                }
            }));
        });
        // Each field rotates its entry once (new data key, its fields re-sealed) and adds a record.
        const writes = 4 * bytes + 3 * RECORD_BYTES * records;
        return ctx.commit((tx) => {
            const exist = [...new Set([...names, ...body.also])].filter((n) => entryExists(tx, s, n));
            const existing = new Set(exist);
            if (exist.length > 0 && body.existing === 'refuse') {
                const shown = exist.slice(0, NAMED).map(quote).join(', ');
                const more = exist.length > NAMED ? ` and ${exist.length - NAMED} more` : '';
                throw new VaultError('VLT-1012', `Already in the vault: ${shown}${more}. Nothing was imported; --skip-existing leaves them as they are, --overwrite sets the imported fields.`);
            }
            const out = { created: [], updated: [], skipped: [] };
            for (const fields of sets) {
                const name = fields[0]?.entry;
                if (name === undefined)
                    continue;
                if (existing.has(name)) {
                    if (body.existing === 'skip') {
                        out.skipped.push(name);
                        continue;
                    }
                    out.updated.push(name);
                }
                else
                    out.created.push(name);
                for (const f of fields)
                    setEntryIn(tx, ctx, s, f, source);
            }
            return out;
        }, writes);
    }
    finally {
        for (const fields of sets)
            for (const f of fields)
                f.value.wipe();
    }
}
