// A failed meta-page write with writes queued behind it (issue 42): lmdb-js
// starts the queued batch while the failed commit holds its write lock; the
// batch meets MDB_PANIC and its thread keeps the lock for ever, so the store
// can be neither used nor closed in that process (src/store/lmdb/recover.ts),
// and a write the main thread begins then waits on that lock for ever too.
// Staged here by a batched commit's meta-page write that takes 500 ms to fail
// (fault-shim.c DELAY, THREADS workers) under bursts of reads and owner
// writes: every run wedged the host before the fix. Accepted: the host
// reopens the store itself, or exits (status 75, one log line naming why)
// and the next client starts a fresh host that serves. Refusals meanwhile
// are VLT-3004, never VLT-3034 (a request the stuck loop had taken in is
// told the host stopped before replying, nothing released: VLT-3005); every
// value released was audited; every owner write acknowledged is there; the
// store checks clean.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  accounted,
  codeOf,
  ownerWrites,
  readers,
  testBuild,
  canInject,
  FaultyHost,
  META_WRITE_BYTES,
  type Tally,
  type Writes,
} from '../support/faults.js';
import { rawPost, replyBody } from '../support/raw-host.js';
import { Rig, ok } from '../support/rig.js';

const skip = canInject() ? false : 'needs a C compiler (cc) for the fault shim';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long the failing meta-page write takes: what comes meanwhile queues behind it. */
const FAIL_AFTER_MS = 500;
/** Reads sent at once on the host's socket (no CLI start-up each): a batch always waits. */
const FLOOD = 12;

/** What the flood's raw requests met: replies tallied as readers() does, and connections cut. */
interface Flood extends Tally {
  cut: number;
}

/** One raw read of entry A on the host's socket, tallied into `out`. */
async function rawRead(sock: string, token: string, out: Flood): Promise<void> {
  let reply: string;
  try {
    reply = await rawPost(sock, 'read', { token, entry: 'A', field: 'password', mode: 'get' });
  } catch (err) {
    // ENOENT/ECONNREFUSED once the host has gone; ECONNRESET/EPIPE as it goes.
    const code = (err as { code?: string }).code ?? '';
    if (code === 'ECONNRESET' || code === 'EPIPE') out.cut++;
    await sleep(50);
    return;
  }
  if (reply === '') {
    out.cut++;
    return;
  }
  const body = replyBody<{ result?: { value?: string }; code?: string; message?: string }>(reply);
  const value = body.result?.value;
  if (value !== undefined) {
    assert.equal(Buffer.from(value, 'base64').toString(), 'value-a');
    out.released++;
  } else {
    const code = body.code ?? reply.slice(0, 200);
    out.refused.set(code, (out.refused.get(code) ?? 0) + 1);
    out.said.add(`${code}: ${body.message ?? ''}`);
  }
}

/**
 * Bursts of `FLOOD` reads at once straight on the host's socket (no CLI
 * start-up each) until `stop`: requests that arrive in one turn of the
 * host's loop are committed as one lmdb-js batch (Store.writeDurable), and
 * the next burst queues the next batch behind it.
 */
async function flood(sock: string, token: string, stop: () => boolean): Promise<Flood> {
  const out: Flood = { released: 0, refused: new Map(), said: new Set(), cut: 0 };
  while (!stop()) await Promise.all(Array.from({ length: FLOOD }, () => rawRead(sock, token, out)));
  return out;
}

/** Past the stuck store's 10 s and the stall watch's 20 s, with a fresh host's start on a loaded machine. */
const SERVED_WITHIN_MS = 150_000;

/**
 * Waits until an agent's read is served (a fresh host started by it if need
 * be); how many tries. A host wedged for good (its loop stuck on lmdb-js's
 * lock: a read never answered; or refusing for ever) fails here.
 */
async function servedAgain(rig: Rig, token: string, host: FaultyHost): Promise<number> {
  const codes: string[] = [];
  const until = Date.now() + SERVED_WITHIN_MS;
  for (let i = 1; Date.now() < until; i++) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), until - Date.now())));
    const r = await Promise.race([rig.agent(['get', 'A'], token), late]);
    clearTimeout(timer);
    if (r === null) break;
    if (r.code === 0) return i;
    codes.push(codeOf(r));
    await sleep(500);
  }
  assert.fail(`never served again: ${codes.slice(-4).join(' | ')}; ${host.stalled()}`);
}

test(
  'a failed meta-page write with a batch queued behind it: the host reopens the store or exits for a fresh one; never wedged, never VLT-3034',
  { skip },
  async (t) => {
    const rig = new Rig();
    let host: FaultyHost | null = null;
    let phase: 'before' | 'fault' | 'after' | 'done' = 'before';
    try {
      await rig.create();
      await rig.set('A', 'value-a');
      const token = await rig.addAgent(
        'reader',
        ['A'],
        ['--per-minute', '1000000', '--per-hour', '1000000'],
      );
      // Every client the test build's (it accepts the shimmed host): the fresh
      // host a client starts once this one has exited is then the test build's too.
      const cli = testBuild(rig.root);
      host = await FaultyHost.start(rig, rig.root, cli);
      rig.cli = cli;
      assert.equal(ok(await rig.agent(['get', 'A'], token)), 'value-a\n');
      const store = join(rig.vaultDir, 'vault.mdb');

      const stop = () => phase === 'done';
      const flooding = flood(join(rig.vaultDir, 'host.sock'), token, stop);
      const reading = readers(rig, token, 1, stop);
      const writes: Writes = { acknowledged: [], refused: [] };
      const writing = ownerWrites(cli, rig, stop, writes);
      await sleep(500);
      phase = 'fault';
      // A batched commit's (off the main thread), which lets the loop queue the next batch meanwhile.
      host.fail(['pwrite'], 'EIO', store, META_WRITE_BYTES, FAIL_AFTER_MS, true);
      for (let i = 0; i < 500 && host.hits().length === 0; i++) await sleep(10);
      await sleep(FAIL_AFTER_MS + 150);
      host.heal();
      phase = 'after';
      const hits = host.hits().length;
      const tries = await servedAgain(rig, token, host);
      phase = 'done';
      const [raw, tally] = await Promise.all([flooding, reading]);
      await writing;

      assert.ok(hits > 0, 'the fault was never met');
      const exit = host.proc.exitCode;
      const outcome = exit === null ? 'reopened in process' : `exited ${exit}, a fresh host served`;
      // Ended by itself, or still the host that serves: never by a signal.
      assert.equal(host.proc.signalCode, null, host.stalled());
      if (exit !== null) {
        assert.equal(exit, 75, host.stalled());
        // One line naming why: the store stuck (the loop alive, refusing
        // meanwhile), or the loop itself stuck on lmdb-js's lock (stall-watch.ts).
        assert.match(
          host.stalled(),
          /vault-host\[\d+\]: (the store cannot be reopened in this process \([^\n]*\(EIO\)|the event loop has waited \d+ s on a lock \(lmdb-js's write lock)[^\n]*: exiting \(status 75\) for the next client to start a fresh host\n/,
        );
      }
      const all = [...raw.refused, ...tally.refused];
      // A request the stuck loop had taken in could not be answered at all:
      // its client says the host stopped before replying, nothing released
      // (VLT-3005); only when the host did exit.
      const fine = (code: string) => code === 'VLT-3004' || (exit !== null && code === 'VLT-3005');
      for (const [code] of all)
        assert.ok(fine(code), `refused with ${code}: ${[...raw.said, ...tally.said].join(' | ')}`);
      for (const said of tally.said)
        if (said.includes('VLT-3005'))
          assert.match(said, /stopped before replying; nothing was released/);
      for (const code of writes.refused)
        assert.ok(fine(code), `an owner write refused with ${code}`);
      await host.stop();
      host = null;
      // Every value released audited: the flood's and the readers' together
      // (a cut request may have been audited, its reply lost: counted as refused).
      const both: Tally = {
        released: raw.released + tally.released,
        refused: new Map([...all, ['cut', raw.cut]]),
        said: new Set(),
      };
      const reads = await accounted(rig, both, 2, writes);
      t.diagnostic(
        `meta-page EIO, ${FAIL_AFTER_MS} ms to fail, ${hits} calls failed: ${outcome}; served again on try ${tries}; ` +
          `${both.released} released (${reads} audited), refused ${JSON.stringify(all)}, ${raw.cut} cut; ` +
          `owner writes ${writes.acknowledged.length} acknowledged (all present), refused ${JSON.stringify(writes.refused)}`,
      );
    } finally {
      // The flood, readers and writers end with a failed test too.
      phase = 'done';
      await host?.stop();
      await rig.stop();
      await rig.dispose();
    }
  },
);
