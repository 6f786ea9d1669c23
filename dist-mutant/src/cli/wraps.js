/**
 * The commands shell-init wraps, kept as JSON in the config directory
 * (`wraps.json`). A missing file is no wraps; a broken one is an error.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { VaultError } from '../core/errors.js';
/** @throws VaultError VLT-3007 when the file is not a list of wraps. */
export function readWraps(file) {
    let text;
    try {
        text = readFileSync(file, 'utf8');
    }
    catch (err) {
        if (err.code === 'ENOENT')
            return [];
        throw err;
    }
    let data;
    try {
        data = JSON.parse(text);
    }
    catch {
        data = null;
    }
    if (!Array.isArray(data) ||
        !data.every((w) => typeof w === 'object' &&
            w !== null &&
            typeof w.agent === 'string' &&
            typeof w.command === 'string')) {
        throw new VaultError('VLT-3007', `${file} is not a list of wraps.`);
    }
    return data;
}
export function writeWraps(file, wraps) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.new`;
    writeFileSync(tmp, JSON.stringify(wraps, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, file);
}
