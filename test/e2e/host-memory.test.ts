// A host's memory under a growing audit log (issue 42): the bound
// docs/benchmarks.md states, on a real LMDB host loaded with agent reads
// (each one audit record) until its store is many times what the host may
// keep of it in its resident set. Before, every page of the store stayed
// mapped: the store's resident pages followed its size (8 MiB here), and V8's
// young generation doubled with the load up to 2 x 64 MiB.
import assert from 'node:assert/strict';
import { realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { DROP_AFTER_MS } from '../../src/store/lmdb/resident.js';
import { loadReader } from '../support/e2e-helpers.js';
import { HOST_BOUND, memoryOf, residentOf } from '../support/procs.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();
after(() => rig.dispose());

const MiB = 1024 * 1024;
const READS = 16_000;
/** What of the store may stay resident while the reads go on (the pages of DROP_EVERY operations, measured under 1 MiB). */
const IN_USE = HOST_BOUND.storeMiB * MiB;

test('a host under a growing audit log keeps its memory under the stated bound', async () => {
  const { token, channel, pid } = await loadReader(rig, 'memory-test-value');
  after(() => channel.close());
  const file = realpathSync(join(rig.vaultDir, 'vault.mdb'));
  const body = { token, entry: 'E', field: 'password', mode: 'get' as const };
  const seen: { store: number; resident: number; anon: number }[] = [];
  let left = READS;
  await Promise.all(
    Array.from({ length: 16 }, async (_, i) => {
      while (left-- > 0) {
        const r = await channel.call('read', body);
        assert.equal(Buffer.from(r.value, 'base64').toString(), 'memory-test-value');
        if (i === 0 && left % 1000 < 16) {
          const { anon } = memoryOf(pid);
          seen.push({ store: statSync(file).size, resident: residentOf(pid, file), anon });
        }
      }
    }),
  );
  const size = statSync(file).size;
  assert.ok(size >= 2 * IN_USE, `the store grew to ${size} bytes`);
  const most = (k: 'resident' | 'anon') => Math.max(...seen.map((s) => s[k]));
  const shown = seen.map((s) => `${s.store >> 10}/${s.resident >> 10}/${s.anon >> 20}`).join(' ');
  assert.ok(
    most('resident') <= IN_USE,
    `the store's pages resident (KiB of store/resident KiB/anonymous MiB): ${shown}`,
  );
  assert.ok(most('anon') <= HOST_BOUND.anonMiB * MiB, `anonymous memory: ${shown}`);
  // Idle, the host keeps none of the store's pages mapped.
  await sleep(DROP_AFTER_MS + 1500);
  const idle = residentOf(pid, file);
  assert.ok(idle <= MiB, `idle, ${idle >> 10} KiB of a ${size >> 10} KiB store stay resident`);
});
