/**
 * The child process of `vault check` that reads the whole store first: LMDB
 * keeps no page checksums, and a damaged page can crash or hang its reader,
 * so that reader is this process, never the host. Prints `ok <records>`.
 * Its one argument is the store file's path.
 */
import { Store } from '../store/store.js';

const path = process.argv[2];
if (path === undefined) {
  process.stdout.write('no path\n');
  process.exitCode = 2;
} else {
  try {
    const store = Store.openFile(path, true);
    const n = store.read((tx) => tx.rawRecords().length);
    process.stdout.write(`ok ${n}\n`);
    await store.close();
  } catch (err) {
    process.stdout.write(`${err instanceof Error ? err.name : 'error'}\n`);
    process.exitCode = 1;
  }
}
