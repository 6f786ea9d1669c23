/**
 * A process that writes through Store.writeDurable with `inflight` writes
 * always pending, checks at each resolution that LMDB has synced the
 * transaction the write was committed in, and SIGKILLs itself the moment
 * the `count`th write resolves: `node --import tsx durable-writer.ts <dir>
 * <inflight> <count>`. Prints one JSON line first: the ids resolved, and the
 * resolutions that came before their transaction was synced.
 */
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../../src/core/protocol.js';
import { Store } from '../../src/store/lmdb/store.js';
import { lmdbMeta } from './lmdb-meta.js';

const [dir = '', inflight = '8', count = '200'] = process.argv.slice(2);
const file = join(dir, STORE_FILE);
const store = Store.open(dir);
const resolved: string[] = [];
const early: string[] = [];
let next = 0;

function challenge(id: string) {
  return {
    id,
    challenge: id,
    purpose: { kind: 'enrol' as const },
    origin: 'http://localhost:1',
    userId: null,
    name: null,
    created: 0,
    expires: 0,
  };
}

async function writer(): Promise<void> {
  for (;;) {
    const id = `w${next++}`;
    // Runs inside the write transaction: the one before it is the newest committed.
    const txn = await store.writeDurable((tx) => {
      tx.putChallenge(challenge(id));
      return lmdbMeta(file).committed + 1;
    });
    if (lmdbMeta(file).synced < txn) early.push(`${id}@${txn}`);
    resolved.push(id);
    if (resolved.length === Number(count)) {
      writeSync(1, JSON.stringify({ resolved, early }) + '\n');
      process.kill(process.pid, 'SIGKILL');
    }
  }
}

for (let i = 0; i < Number(inflight); i++) void writer();
