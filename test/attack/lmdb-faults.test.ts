// Injected disk faults on the real LMDB host (test/support/faults.ts): while
// a fault lasts every request is refused with VLT-3004 naming it, never
// VLT-3034 (the store is intact); every value released was audited; and the
// host serves again once the fault ends, without a restart (issue 42).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  canInject,
  FaultyHost,
  META_WRITE_BYTES,
  type FaultCall,
  type FaultErrno,
} from '../support/faults.js';
import { Rig, ok, type Result } from '../support/rig.js';

const skip = canInject() ? false : 'needs a C compiler (cc) for the fault shim';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tally {
  released: number;
  refused: Map<string, number>;
}

/** Reads by `workers` agents at once until `stop` says so, tallying what came back. */
async function readers(
  rig: Rig,
  token: string,
  workers: number,
  stop: () => boolean,
): Promise<Tally> {
  const tally: Tally = { released: 0, refused: new Map() };
  const one = async () => {
    while (!stop()) {
      const r: Result = await rig.agent(['get', 'A'], token);
      if (r.code === 0) {
        assert.equal(r.stdout, 'value-a\n');
        tally.released++;
      } else {
        assert.equal(r.stdout, '', 'a refused read released something');
        const code = /VLT-\d+/.exec(r.stderr)?.[0] ?? `exit ${r.code}: ${r.stderr}`;
        tally.refused.set(code, (tally.refused.get(code) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, one));
  return tally;
}

async function faultWindow(
  t: { diagnostic(s: string): void },
  calls: readonly FaultCall[],
  errno: FaultErrno,
  size: number,
): Promise<void> {
  const rig = new Rig();
  let host: FaultyHost | null = null;
  try {
    await rig.create();
    await rig.set('A', 'value-a');
    const token = await rig.addAgent(
      'reader',
      ['A'],
      ['--per-minute', '100000', '--per-hour', '100000'],
    );
    host = await FaultyHost.start(rig, rig.root);
    const store = join(rig.vaultDir, 'vault.mdb');
    assert.equal(
      ok(await rig.agent(['get', 'A'], token)),
      'value-a\n',
      'the host under the shim serves',
    );

    let phase: 'before' | 'fault' | 'after' | 'done' = 'before';
    const running = readers(rig, token, 3, () => phase === 'done');
    await sleep(300);
    phase = 'fault';
    host.fail(calls, errno, store, size);
    // On for 150 ms, and longer until a write has met it (reads come a few a second here).
    const until = Date.now() + 5000;
    await sleep(150);
    while (host.hits().length < 2 && Date.now() < until) await sleep(10);
    host.heal();
    phase = 'after';
    const hits = host.hits().length;
    await sleep(500);
    // Service restored: once the fault has ended, reads are served again, unrestarted.
    let served = 0;
    const codes: string[] = [];
    for (let i = 0; i < 40 && served < 5; i++) {
      const r = await rig.agent(['get', 'A'], token);
      if (r.code === 0) served++;
      else codes.push(/VLT-\d+/.exec(r.stderr)?.[0] ?? r.stderr);
    }
    phase = 'done';
    const tally = await running;
    assert.ok(hits > 0, 'the fault was never met');
    assert.equal(host.proc.exitCode, null, 'the host died');
    assert.equal(served, 5, `not served again after the fault: ${codes.join(' ')}`);
    for (const code of tally.refused.keys())
      assert.equal(code, 'VLT-3004', `refused with ${code}: ${JSON.stringify([...tally.refused])}`);
    await host.stop();
    host = null;

    const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
    const reads = audit.split('\n').filter((l) => l.includes('"ai_read"')).length;
    assert.equal(reads, tally.released + served + 1, 'a value went out without its audit record');
    ok(await rig.owner(['audit', '--verify']));
    ok(await rig.owner(['vault', 'check']));
    t.diagnostic(
      `${calls.join(',')} ${errno}${size ? ` (${size}-byte writes)` : ''} from 150 ms: ${hits} calls failed, ` +
        `${tally.released} reads released and audited, refused ${JSON.stringify([...tally.refused])}, served again after`,
    );
  } finally {
    await host?.stop();
    await rig.stop();
    await rig.dispose();
  }
}

for (const errno of ['EIO', 'ENOSPC'] as const) {
  test(
    `a failed meta-page write (${errno}) does not wedge the host: VLT-3004 meanwhile, then served again`,
    { skip },
    (t) => faultWindow(t, ['pwrite'], errno, META_WRITE_BYTES),
  );
}

for (const errno of ['EIO', 'ENOSPC', 'EROFS'] as const) {
  test(
    `${errno} on the store's data writes: VLT-3004 meanwhile, every release audited, then served again`,
    { skip },
    (t) => faultWindow(t, ['pwrite', 'write'], errno, 0),
  );
  test(
    `${errno} on fdatasync: VLT-3004 meanwhile, every release audited, then served again`,
    { skip },
    (t) => faultWindow(t, ['fdatasync', 'fsync'], errno, 0),
  );
}
