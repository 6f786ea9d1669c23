/**
 * The child process of `vault check` that reads the whole store first: LMDB
 * keeps no page checksums, and a damaged page can crash or hang its reader,
 * so that reader is this process, never the host. Then, on a copy of the
 * store beside it, it commits a run of write transactions: a damaged
 * free-page list is met only by writers, and would crash the host's next
 * write. Prints `ok <records>`. Its one argument is the store file's path.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Store } from '../store/store.js';

const WRITES = 64;

async function main(path: string, writes: boolean): Promise<number> {
  const store = Store.openFile(path, true);
  const n = store.read((tx) => tx.rawRecords().length);
  await store.close();
  if (!writes) return n;
  const scratch = mkdtempSync(join(dirname(path), '.check-'));
  try {
    const copy = join(scratch, 'vault.mdb');
    copyFileSync(path, copy);
    const writable = Store.openFile(copy);
    for (let i = 0; i < WRITES; i++) writable.scratchWrite(i);
    await writable.close();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return n;
}

const path = process.argv[2];
if (path === undefined) {
  process.stdout.write('no path\n');
  process.exitCode = 2;
} else {
  try {
    process.stdout.write(`ok ${await main(path, process.argv[3] !== '--read-only')}\n`);
  } catch (err) {
    process.stdout.write(`${err instanceof Error ? err.name : 'error'}\n`);
    process.exitCode = 1;
  }
}
