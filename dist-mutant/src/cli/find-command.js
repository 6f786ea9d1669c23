/** Finding a command as the shell would, for `run` and `exec` (one definition). */
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import { VaultError } from '../core/errors.js';
/** The executable `file` names: a path, or the first executable on `path`; null when there is none. */
export function findCommand(file, path) {
    const executable = (f) => {
        try {
            accessSync(f, constants.X_OK);
            return statSync(f).isFile();
        }
        catch {
            return false;
        }
    };
    if (file.includes('/'))
        return executable(file) ? file : null;
    for (const dir of (path ?? '').split(':')) {
        const f = join(dir === '' ? '.' : dir, file);
        if (executable(f))
            return f;
    }
    return null;
}
/**
 * The command given after `--` (its words, and the file that names it).
 * @throws VaultError VLT-1001 when none was given.
 */
export function commandAfterDashes(words) {
    const command = Array.isArray(words) ? words.map(String) : [];
    const file = command[0];
    if (file === undefined || file === '')
        throw new VaultError('VLT-1001', 'Give the command to run after --.');
    return { command, file };
}
