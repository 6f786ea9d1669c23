/** Which escaping a template gets: from `--format`/`--raw`, else its file extension. */
import { VaultError, quote } from '../core/errors.js';
export const FORMATS = ['json', 'yaml', 'toml', 'env', 'raw'];
export function isFormat(name) {
    return FORMATS.includes(name);
}
/**
 * `.json`, `.yaml`/`.yml`, `.toml`, `.env` (also `app.env`, `.env.local`); any
 * other file, and stdin without `--format`, is raw text.
 * @throws VaultError VLT-1001 for an unknown `--format` or `--raw` with another format.
 */
export function chooseFormat(path, flag, raw) {
    if (flag !== undefined && !isFormat(flag)) {
        throw new VaultError('VLT-1001', `Unknown format ${quote(flag)} (json, yaml, toml, env, raw).`);
    }
    if (raw) {
        if (flag !== undefined && flag !== 'raw') {
            throw new VaultError('VLT-1001', '--raw and --format name different formats.');
        }
        return 'raw';
    }
    if (flag !== undefined)
        return flag;
    const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
    if (name.endsWith('.json'))
        return 'json';
    if (name.endsWith('.yaml') || name.endsWith('.yml'))
        return 'yaml';
    if (name.endsWith('.toml'))
        return 'toml';
    if (name === '.env' || name.startsWith('.env.') || name.endsWith('.env'))
        return 'env';
    return 'raw';
}
