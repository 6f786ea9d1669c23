/**
 * `vault migrate --to`: the vault moved whole from one engine to the other
 * (LMDB file <-> PostgreSQL), record for record: the same sealed records,
 * checksums and audit chain, with the migration's own audit record last.
 * The copy is read back and compared record by record before the host
 * switches to it; on any difference the source stays the vault.
 */
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../../core/protocol.js';
import { VaultError } from '../../core/errors.js';
import { recordSum } from '../../store/schema.js';
import { storePlace } from '../../store/open.js';
import { ownerEvent } from '../audit/event.js';
import { appendAudit } from '../audit/log.js';
/**
 * Copies the vault into `to` (a postgresql:// URL, or null for the vault
 * directory's LMDB file) and serves it from there.
 * @throws VaultError VLT-3043 when the target holds a vault already, the
 * target is the source, or the copy does not read back equal.
 */
export async function moveStore(ctx, to, source) {
    const fromUrl = ctx.pgUrl();
    if ((to === null && fromUrl === null) || (to !== null && to === fromUrl)) {
        throw new VaultError('VLT-3043', 'The vault is already there.');
    }
    const from = ctx.store();
    const place = storePlace(ctx.dir, to);
    const fromName = from.path;
    const lmdbFile = join(ctx.dir, STORE_FILE);
    if (to === null && existsSync(lmdbFile)) {
        throw new VaultError('VLT-3043', `${lmdbFile} exists already; move it away first (it may be an older copy of this vault).`);
    }
    // The migration's record goes in the source first, so the copy holds it and
    // the source says where the vault went.
    const records = ctx.commit((tx) => {
        const header = ctx.header(tx);
        appendAudit(tx, header, ownerEvent(ctx, 'vault_migrate', source, {
            subject: `to ${place.label}`,
        }));
        return tx.allRecords();
    });
    let target = null;
    try {
        target = place.target();
        target.write((tx) => {
            if (tx.header() !== null) {
                throw new VaultError('VLT-3043', `${target?.path ?? ''} holds a vault already.`);
            }
            tx.replaceAll(records);
        });
        const back = target.read((tx) => tx.allRecords());
        const sums = new Map(back.map((r) => [r.key, recordSum(r.value)]));
        const differs = records.filter((r) => !sums.get(r.key)?.equals(recordSum(r.value)));
        if (back.length !== records.length || differs.length > 0) {
            throw new VaultError('VLT-3043', `The copy did not read back equal (${differs.length} record(s) differ, ${back.length} of ${records.length} there).`);
        }
    }
    catch (err) {
        await target?.close();
        if (to === null) {
            // Nothing of a half copy stays beside the vault.
            const { rmSync } = await import('node:fs');
            rmSync(lmdbFile, { force: true });
            rmSync(`${lmdbFile}-lock`, { force: true });
        }
        throw err instanceof VaultError ? err : new VaultError('VLT-3043', undefined, { cause: err });
    }
    await target.close();
    await ctx.useStore(to);
    if (fromUrl === null) {
        // The LMDB file stays beside, renamed: a second copy, not the vault.
        const aside = `${lmdbFile}.migrated-${new Date(ctx.now()).toISOString().replace(/[:.]/g, '-')}`;
        renameSync(lmdbFile, aside);
    }
    return { records: records.length, from: fromName, to: ctx.store().path };
}
