// A host that refuses, never dies, and says why (issue 29): its idle stop,
// failed commits, oversize bodies, kills during its start-up scan and bad
// backup paths each end in a clear refusal, never in a dead host or VLT-3007.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call } from '../../src/client/client.js';
import { VaultError } from '../../src/core/errors.js';
import { CLI, PASSPHRASE, Rig } from '../support/rig.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The client connects, the host's idle stop closes and unlinks the socket,
// then the owner's host check finds no socket (a raw ENOENT: VLT-3007) or a
// process that no longer holds the lock (VLT-3010). Owner calls are timed
// into the stop of a host with a short idle timeout: each one succeeds, or at
// worst says the host stopped (VLT-3005).
test('owner commands timed into the idle stop: successes or VLT-3005, never VLT-3007 or VLT-3010', async (t) => {
  const IDLE_MS = 250;
  // 100 trials on four vaults at once: four hosts stopping and starting.
  const VAULTS = 4;
  const TRIALS = 25;
  const outcomes = new Map<string, number>();
  const trials = async (rig: Rig) => {
    await rig.create();
    await rig.stop();
    const client = {
      vaultDir: rig.vaultDir,
      daemon: {
        node: process.execPath,
        script: CLI,
        env: { ...rig.env, VAULT_HOST_IDLE_MS: String(IDLE_MS) },
      },
    };
    for (let i = 0; i < TRIALS; i++) {
      let outcome = 'ok';
      try {
        await call(client, 'entry.ls', { passphrase: PASSPHRASE });
      } catch (err) {
        outcome = err instanceof VaultError ? err.code : `raw ${String(err)}`;
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      // Land the next call around the moment the idle timer fires.
      await sleep(IDLE_MS - 40 + ((i * 37) % 80));
    }
  };
  const rigs = Array.from({ length: VAULTS }, () => new Rig());
  try {
    await Promise.all(rigs.map(trials));
  } finally {
    await Promise.all(rigs.map((r) => r.dispose()));
  }
  const seen = JSON.stringify([...outcomes]);
  t.diagnostic(`outcomes over ${VAULTS * TRIALS} trials: ${seen}`);
  for (const outcome of outcomes.keys()) {
    assert.ok(outcome === 'ok' || outcome === 'VLT-3005', seen);
  }
});
