/**
 * The start-up scan's phases (src/store/lmdb/scan-worker.ts at the host's
 * start), each timed, wall and CPU, on a store file no host serves: the file
 * read whole, every record read by key, the page-for-page copy, the write
 * probe into every leaf, the free-page drain, 64 write transactions, the
 * copy read again. The copy is made beside the file and removed. Asserts
 * nothing.
 *
 *   node --import tsx bench/lmdb-scan-phases.ts <store file>
 *
 * (bench/lmdb-start.ts --keep DIR leaves a 100,000-entry store in DIR/vault/vault.mdb.)
 */
import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Store } from '../src/store/lmdb/store.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: lmdb-scan-phases.ts <store file>');

const now = () => {
  const c = process.cpuUsage();
  return { wall: performance.now() / 1000, cpu: (c.user + c.system) / 1e6 };
};
let last = now();
function lap(name: string): void {
  const t = now();
  console.log(
    `${name.padEnd(28)}${(t.wall - last.wall).toFixed(2).padStart(8)} s wall${(t.cpu - last.cpu).toFixed(2).padStart(8)} s CPU`,
  );
  last = t;
}

const fd = openSync(path, 'r');
const buf = Buffer.allocUnsafe(1 << 20);
for (let at = 0; ;) {
  const n = readSync(fd, buf, 0, buf.length, at);
  if (n === 0) break;
  at += n;
}
closeSync(fd);
lap('file read whole');
const store = Store.openFile(path, true);
const read = store.read(() => store.readRaw(true));
lap(`read by key (${read.records})`);
const scratch = join(dirname(path), `.check-${process.pid}`);
mkdirSync(scratch, { mode: 0o700 });
try {
  const copy = join(scratch, 'vault.mdb');
  await store.copyPages(copy);
  lap('copy page for page');
  const w = Store.openScratch(copy);
  w.probeWrites();
  lap('write probe (every leaf)');
  w.drainFreePages();
  lap('free-page drain');
  for (let i = 0; i < 64; i++) w.scratchWrite(i);
  lap('64 write transactions');
  const after = w.read(() => w.readRaw(true));
  lap('copy read again');
  if (after.digest !== read.digest) console.log('the copy read differently');
  await w.close();
} finally {
  await store.close();
  rmSync(scratch, { recursive: true, force: true });
}
