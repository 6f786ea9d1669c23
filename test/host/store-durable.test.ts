// Store.writeDurable against a real LMDB in a temp dir: a write that has
// resolved is on disk (LMDB has synced the transaction it was committed in,
// and a SIGKILL right after finds it on reopening), and one transaction that
// throws is undone alone, not with the others of its group. The meta-page
// check is what can fail here: a SIGKILL keeps the page cache, so reopening
// alone would also find a write resolved before LMDB synced it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Store } from '../../src/store/lmdb/store.js';

const WRITER = fileURLToPath(new URL('../support/durable-writer.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Report {
  resolved: string[];
  early: string[];
}

async function runWriter(dir: string, inflight: number, count: number): Promise<Report> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', WRITER, dir, String(inflight), String(count)],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((r) =>
    child.on('close', (_code, sig) => r(sig)),
  );
  assert.equal(signal, 'SIGKILL', `the writer ended otherwise: ${err}`);
  return JSON.parse(out) as Report;
}

for (const inflight of [1, 8]) {
  test(`a resolved writeDurable is synced to disk and survives a SIGKILL (${inflight} in flight)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-durable-'));
    try {
      const report = await runWriter(dir, inflight, 150);
      assert.equal(report.resolved.length, 150);
      assert.deepEqual(report.early, [], 'resolved before LMDB synced their transaction');
      const store = Store.open(dir);
      try {
        const missing = store.read((tx) =>
          report.resolved.filter((id) => tx.challenge(id) === null),
        );
        assert.deepEqual(missing, []);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('a writeDurable that throws is undone alone; the others of its group commit', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vault-durable-'));
  const store = Store.open(dir);
  try {
    const failures = (n: number) => ({ count: n, last: n });
    const writes = Array.from({ length: 6 }, (_, i) =>
      store.writeDurable((tx) => {
        tx.putAgentName(`agent-${i}`, `id-${i}`);
        if (i % 3 === 1) throw new Error(`refused ${i}`);
        // Sees the writes of those before it in the group.
        tx.putOwnerFailures(failures(tx.ownerFailures().count + 1));
        return i;
      }),
    );
    const settled = await Promise.allSettled(writes);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      [0, 'refused 1', 2, 3, 'refused 4', 5],
    );
    const names = store.read((tx) => [0, 1, 2, 3, 4, 5].map((i) => tx.agentIdByName(`agent-${i}`)));
    assert.deepEqual(names, ['id-0', null, 'id-2', 'id-3', null, 'id-5']);
    assert.equal(
      store.read((tx) => tx.ownerFailures().count),
      4,
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
