/**
 * Ways to make the host's small write transactions durable, side by side
 * in one run (issue 28), on a real LMDB file in a temp dir:
 *
 * - async, newest flush: lmdb-js's `transactionAsync`, a child transaction
 *   each, batched by lmdb-js and committed and synced on its write thread
 *   (main -> writer thread -> main, where the callbacks run inside the
 *   writer's transaction -> writer -> main), then `db.flushed` awaited once
 *   the commit resolved, as Store.writeDurable did before issue 28: the
 *   flush of whichever batch was queued meanwhile.
 * - async: the same, awaiting the flush of its own batch.
 * - sync: the transactions asked in one event-loop turn gathered
 *   (setImmediate) and run as child transactions of one `transactionSync` on
 *   the main thread, whose commit fdatasyncs there: no hand-off, but the loop
 *   waits for the disk.
 * - store: Store.writeDurable as this tree has it (one of the above).
 *
 * Each with 1, 8 and 32 writes always in flight; each write is what a fill
 * writes (an audit record and the chain head, a ~1 KB rate-sized record,
 * their checksums). Prints writes/s, LMDB commits/s, writes per commit,
 * the mean latency of a write (in flight / throughput), main-thread CPU per
 * write and process CPU per write (all threads). Asserts nothing.
 *
 *   node --import tsx bench/commit.ts [seconds per cell]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// Below the Store API on purpose: both commit paths are built here from lmdb-js itself.
// eslint-disable-next-line no-restricted-imports
import { open, type RootDatabase } from 'lmdb';
import { STORE_FILE } from '../src/core/protocol.js';
import { Store } from '../src/store/lmdb/store.js';
import { Tx } from '../src/store/tx.js';
import { LmdbRows } from '../src/store/lmdb/rows.js';
import { lmdbMeta } from '../test/support/lmdb-meta.js';

const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 2);

type Write = <T>(fn: (tx: Tx) => T) => Promise<T>;

interface Path {
  readonly write: Write;
  close(): Promise<void>;
}

function openDb(dir: string): RootDatabase {
  return open({
    path: join(dir, STORE_FILE),
    encoding: 'msgpack',
    compression: false,
    cache: false,
  });
}

/** transactionAsync as a child, awaited with the flush of its own batch. */
function asyncPath(dir: string): Path {
  const db = openDb(dir);
  const lmdb = db as unknown as {
    transactionAsync<T>(action: () => T, asChild: boolean): Promise<T>;
  };
  return {
    async write<T>(fn: (tx: Tx) => T): Promise<T> {
      const committed = lmdb.transactionAsync(() => fn(new Tx(new LmdbRows(db))), true);
      const flushed = new Promise<void>((resolve) => {
        void db.flushed.then(() => resolve());
      });
      const out = await committed;
      await flushed;
      return out;
    },
    close: () => db.close(),
  };
}

/** As before issue 28: `db.flushed` asked once the commit resolved, the flush of whichever batch is newest then. */
function asyncNewestPath(dir: string): Path {
  const db = openDb(dir);
  const lmdb = db as unknown as {
    transactionAsync<T>(action: () => T, asChild: boolean): Promise<T>;
  };
  return {
    async write<T>(fn: (tx: Tx) => T): Promise<T> {
      const out = await lmdb.transactionAsync(() => fn(new Tx(new LmdbRows(db))), true);
      await db.flushed;
      return out;
    },
    close: () => db.close(),
  };
}

/** One transactionSync per event-loop turn, each write a child transaction of it. */
function syncPath(dir: string): Path {
  const db = openDb(dir);
  type Queued = { fn: (tx: Tx) => unknown; resolve(v: unknown): void; reject(e: unknown): void };
  let queue: Queued[] = [];
  const commit = (): void => {
    const group = queue;
    queue = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      db.transactionSync(() => {
        for (const q of group) {
          try {
            outcomes.push({
              ok: true,
              value: db.transactionSync(() => q.fn(new Tx(new LmdbRows(db)))),
            });
          } catch (err) {
            outcomes.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      for (const q of group) q.reject(err);
      return;
    }
    group.forEach((q, i) => {
      const o = outcomes[i];
      if (o?.ok) q.resolve(o.value);
      else q.reject(o?.err);
    });
  };
  return {
    write<T>(fn: (tx: Tx) => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
        if (queue.length === 1) setImmediate(commit);
      });
    },
    close: () => db.close(),
  };
}

function storePath(dir: string): Path {
  const store = Store.open(dir);
  return { write: (fn) => store.writeDurable(fn), close: () => store.close() };
}

const RATE = 'r'.repeat(900);
let seq = 0;

/** What one fill writes: its audit record and the chain head, a rate-sized record, checksums. */
function fill(tx: Tx): number {
  const head = tx.auditHead();
  const n = ++seq;
  tx.appendAudit({
    seq: n,
    at: Date.now(),
    action: 'fill',
    actor: 'cli:bench',
    source: 'proxy',
    outcome: 'ok',
    entryId: 'e0123456789abcdef',
    sealed: randomBytes(96),
    host: 'api.example.com',
    subject: null,
    prev: head?.hash ?? Buffer.alloc(32),
    hash: randomBytes(32),
  });
  tx.putChallenge({
    id: 'rate',
    challenge: RATE,
    purpose: { kind: 'enrol' },
    origin: 'http://localhost:1',
    userId: null,
    name: String(n),
    created: n,
    expires: n,
  });
  return n;
}

interface Cell {
  writes: number;
  commits: number;
  ms: number;
  mainUs: number;
  allUs: number;
}

async function cell(path: Path, file: string, inflight: number, ms: number): Promise<Cell> {
  let stop = false;
  let writes = 0;
  const loop = async (): Promise<void> => {
    while (!stop) {
      await path.write(fill);
      writes++;
    }
  };
  const t0 = performance.now();
  const main0 = process.threadCpuUsage();
  const all0 = process.cpuUsage();
  const txn0 = lmdbMeta(file).committed;
  const loops = Array.from({ length: inflight }, loop);
  await new Promise((r) => setTimeout(r, ms));
  stop = true;
  await Promise.all(loops);
  const main = process.threadCpuUsage(main0);
  const all = process.cpuUsage(all0);
  return {
    writes,
    commits: lmdbMeta(file).committed - txn0,
    ms: performance.now() - t0,
    mainUs: main.user + main.system,
    allUs: all.user + all.system,
  };
}

const PATHS: Record<string, (dir: string) => Path> = {
  'async, newest flush': asyncNewestPath,
  async: asyncPath,
  sync: syncPath,
  store: storePath,
};

const rows: string[][] = [];
for (const inflight of [1, 8, 32]) {
  for (const [name, make] of Object.entries(PATHS)) {
    const dir = mkdtempSync(join(tmpdir(), 'vault-bench-commit-'));
    const path = make(dir);
    try {
      const file = join(dir, STORE_FILE);
      await cell(path, file, inflight, 300); // warm-up
      const c = await cell(path, file, inflight, seconds * 1000);
      rows.push([
        String(inflight),
        name,
        ((c.writes * 1000) / c.ms).toFixed(0),
        ((c.commits * 1000) / c.ms).toFixed(0),
        (c.writes / Math.max(1, c.commits)).toFixed(1),
        ((inflight * c.ms) / c.writes).toFixed(2),
        (c.mainUs / c.writes / 1000).toFixed(3),
        (c.allUs / c.writes / 1000).toFixed(3),
        (c.mainUs / Math.max(1, c.commits) / 1000).toFixed(3),
      ]);
    } finally {
      await path.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const head = [
  'in flight',
  'path',
  'writes/s',
  'commits/s',
  'writes/commit',
  'latency ms',
  'main ms/write',
  'all ms/write',
  'main ms/commit',
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (r: string[]) => r.map((v, i) => v.padStart(widths[i] ?? 0)).join('  ');
console.log(`${seconds} s per cell; ${STORE_FILE} in ${tmpdir()}`);
console.log(line(head));
for (const r of rows) console.log(line(r));
