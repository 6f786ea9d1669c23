/**
 * A file or directory vault-cli must write that the system refuses
 * (read-only file system, no permission): said as such, with the path and
 * the variable that moves it, instead of "Internal error" (VLT-3007). Loaded
 * only when a command failed.
 */
import { relative, isAbsolute } from 'node:path';
import { VaultError } from '../core/errors.js';
import { resolvePaths } from './paths.js';
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS']);
const inside = (dir, path) => {
    const r = relative(dir, path);
    return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};
/**
 * The VaultError for `err` when it is a refused write of a path (VLT-3061),
 * else null.
 */
export function unwritable(err, env) {
    const e = err;
    if (typeof e?.code !== 'string' || !REFUSED.has(e.code) || typeof e.path !== 'string') {
        return null;
    }
    const paths = resolvePaths(env);
    const what = e.code === 'EROFS' ? 'a read-only file system' : 'no permission';
    const move = inside(paths.vaultDir, e.path)
        ? `make ${paths.vaultDir} writable, or set VAULT_DIR to a directory you can write`
        : inside(paths.configDir, e.path)
            ? `make ${paths.configDir} writable, or set VAULT_CONFIG_DIR to a directory you can write, then run this again`
            : 'make it writable, then run this again';
    return new VaultError('VLT-3061', `Cannot write ${e.path} (${e.code}: ${what}): ${move}.`, {
        cause: err,
    });
}
