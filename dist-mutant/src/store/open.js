/**
 * The vault's store, on either engine; this file alone chooses which. The
 * folder: schema.ts (records and keys), tx.ts (a transaction over plain
 * rows), engine.ts (the store as the host uses it, and the capabilities only
 * one engine offers), lmdb/ (the embedded store file of one host, the only
 * importer of lmdb) and pg/ (a PostgreSQL database several hosts share, the
 * only importer of pg). It holds ciphertext and metadata only: entry names
 * and values are sealed before they arrive here, names are keyed hashes.
 *
 * A PostgreSQL store when the host was started with a URL or the vault
 * directory's config names one (location.ts), else the LMDB store file in
 * the vault directory. Everything outside src/store asks a StorePlace for
 * the store and for what only its engine does, and never names the engine.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../core/protocol.js';
import { scanAtStart, scanInChild } from './lmdb/scan.js';
export { isFailedCommitEcho, diskFault } from './lmdb/failures.js';
import { Store } from './lmdb/store.js';
import { checkArgvUrl } from './location.js';
import { PgStore } from './pg/pg.js';
import { displayUrl } from './pg/url.js';
/** The store of the vault in `dir`; `url`, a PostgreSQL store's, when it is in one. */
export function storePlace(dir, url) {
    return url === null ? lmdbPlace(dir) : pgPlace(url);
}
function lmdbPlace(dir) {
    const file = join(dir, STORE_FILE);
    return {
        label: 'lmdb',
        exists: () => Store.exists(dir),
        open: () => {
            const store = Store.open(dir);
            addSums(store);
            store.keepRoom();
            return store;
        },
        create: (open) => {
            if (open !== null)
                return open;
            const store = Store.open(dir);
            // A new store keeps checksums from its first record.
            store.write((tx) => tx.addMissingSums());
            store.keepRoom();
            return store;
        },
        target: () => Store.open(dir),
        // The host's start: nothing else writes the store while its scan runs (the host lock);
        // no scan when the file is the one a host closed cleanly (lmdb/known-good.ts).
        scan: (log) => (existsSync(file) ? scanAtStart(file, log) : Promise.resolve(null)),
    };
}
function pgPlace(url) {
    return {
        label: displayUrl(url),
        exists: () => true,
        open: () => PgStore.open(url),
        create: () => {
            const pg = PgStore.open(url);
            pg.create();
            pg.write((tx) => tx.addMissingSums());
            return pg;
        },
        target: () => {
            const pg = PgStore.open(url);
            pg.create();
            return pg;
        },
    };
}
/** A vault from before record checksums gets them on first open (tx.ts addMissingSums). */
function addSums(store) {
    try {
        if (store.read((tx) => tx.header() !== null && !tx.sumsKept())) {
            store.write((tx) => tx.addMissingSums());
        }
    }
    catch {
        // A store that cannot be written or read here: the request that needs it says so.
    }
}
/**
 * A store file in the backup format (an LMDB store file, whichever engine
 * the vault is in: VaultStore.backup) that no host serves.
 */
export function openStoreFile(path) {
    return Store.openFile(path);
}
/**
 * A store file in the backup format read whole, and written into on a copy,
 * in a child process (lmdb/scan.ts): null when it survives, else what went
 * wrong. Before anything in this process opens it.
 * @throws VaultError VLT-3004 when the disk fails to read it (EIO): not damage
 */
export function scanStoreFile(path) {
    return scanInChild(path);
}
/**
 * Where `vault migrate --to` sends the vault: `lmdb` for the vault
 * directory's store file (null), else a postgresql:// URL as a command line
 * may carry it.
 * @throws VaultError VLT-3042
 */
export function migrateTarget(to) {
    if (to === 'lmdb')
        return null;
    checkArgvUrl(to);
    return to;
}
