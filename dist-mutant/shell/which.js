// Where a program is on a PATH, as a POSIX shell would find it.
import { spawnSync } from 'node:child_process';
/** Where a program is on PATH, or null. */
export function which(name, path) {
    const r = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', name], {
        env: { PATH: path ?? '/usr/bin:/bin' },
        encoding: 'utf8',
    });
    const found = r.stdout.trim();
    return r.status === 0 && found.startsWith('/') ? found : null;
}
