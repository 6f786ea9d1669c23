/**
 * The password file read for the team database's connection (the worker's
 * I/O beside passfile.ts's pure parsing).
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parsePassfile, passfileModeSafe, passwordFor } from './passfile.js';

/**
 * The password for a connection the store URL gives none: from the password
 * file (PGPASSFILE, else ~/.pgpass), read here at each connect, as libpq
 * would (passfile.ts). Not pg's own reading of it: that is deprecated, and
 * said so on every host start.
 */
export function fromPassfile(to: { host: string; port: number; database?: string; user?: string }) {
  const file = process.env.PGPASSFILE ?? join(process.env.HOME ?? homedir(), '.pgpass');
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile() || !passfileModeSafe(st.mode)) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  return passwordFor(parsePassfile(text), {
    host: to.host,
    port: to.port,
    database: to.database ?? '',
    user: to.user ?? '',
  });
}
