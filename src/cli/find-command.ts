/** Finding a command as the shell would, for `run` and `exec` (one definition). */
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';

/** The executable `file` names: a path, or the first executable on `path`; null when there is none. */
export function findCommand(file: string, path: string | undefined): string | null {
  const executable = (f: string) => {
    try {
      accessSync(f, constants.X_OK);
      return statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (file.includes('/')) return executable(file) ? file : null;
  for (const dir of (path ?? '').split(':')) {
    const f = join(dir === '' ? '.' : dir, file);
    if (executable(f)) return f;
  }
  return null;
}
