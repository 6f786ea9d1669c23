/**
 * Which engine holds a vault, and where: `store.json` in the vault directory
 * (written by `vault create --store` and `vault migrate`), unless the host was
 * started with a store URL (VAULT_STORE_URL, read by cli/paths.ts). No file
 * and no URL: the LMDB store file in the vault directory, as always.
 *
 * The file may hold a password in its URL (it is the host's config, 0600);
 * a URL given on a command line may not (argv is world-readable): a
 * PGPASSFILE holds it then.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VaultError } from '../core/errors.js';
import { STORE_CONFIG } from '../core/protocol.js';
import { hasPassword, isPgUrl } from './pg/url.js';
export { STORE_CONFIG };
/** The PostgreSQL URL the vault directory's config names, or null (LMDB). */
export function configuredStore(dir) {
    let text;
    try {
        text = readFileSync(join(dir, STORE_CONFIG), 'utf8');
    }
    catch {
        return null;
    }
    const url = JSON.parse(text).url;
    if (typeof url !== 'string' || !isPgUrl(url)) {
        throw new VaultError('VLT-3041', `${join(dir, STORE_CONFIG)} names no postgresql:// store.`);
    }
    return url;
}
/** Records (or, with null, removes) the vault directory's store URL, atomically. */
export function recordStore(dir, url) {
    const file = join(dir, STORE_CONFIG);
    if (url === null) {
        rmSync(file, { force: true });
        return;
    }
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, JSON.stringify({ url }) + '\n', { mode: 0o600 });
    renameSync(tmp, file);
}
/**
 * A store URL as a command line may carry it: postgresql://, no password.
 * @throws VaultError VLT-3042
 */
export function checkArgvUrl(url) {
    if (!isPgUrl(url))
        throw new VaultError('VLT-3042', 'The store must be a postgresql:// URL.');
    if (hasPassword(url)) {
        throw new VaultError('VLT-3042', 'A store URL on the command line may not carry a password (argv is visible to every process); put it in a PGPASSFILE.');
    }
}
