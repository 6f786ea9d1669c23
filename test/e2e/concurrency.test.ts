// Twenty agent processes started at the same instant, each reading a different
// entry: at most three values are released (3 a minute), exactly one violation
// is recorded, and no process fails to reach the host or open the store. Trials
// on a vault made long before, and on one made a moment before with no host
// running, so the twenty also race to start it.
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Rig, type Result } from '../support/rig.js';

const TRIALS = Number(process.env.CONCURRENCY_TRIALS ?? 50);
// The issue asks for 50 trials of each kind. Making and filling a vault takes
// about 4 s here (20 owner processes, an Argon2 each), so 50 fresh vaults took
// 270-340 s. Each fresh trial instead gets its own copy of one vault made and
// filled at the start, never read by an agent, with no host running: to the
// twenty processes that is a vault made a moment before. The first trial uses
// the original itself.
const FRESH_TRIALS = Number(process.env.CONCURRENCY_FRESH_TRIALS ?? 50);
const PROCESSES = 20;
const entries = Array.from({ length: PROCESSES }, (_, i) => `entry ${i}`);

interface Trial {
  releases: number;
  limited: number;
  other: string[];
  violations: number;
}

async function burst(rig: Rig, agent: string, token: string): Promise<Trial> {
  const results: Result[] = await Promise.all(entries.map((e) => rig.agent(['get', e], token)));
  const show = await rig.owner(['agent', 'show', agent, '--json']);
  assert.equal(show.code, 0, show.stderr);
  const released = results.filter((r) => r.code === 0);
  for (const r of released) assert.match(r.stdout, /^value of entry \d+\n$/);
  return {
    releases: released.length,
    limited: results.filter((r) => r.code === 75).length,
    other: results
      .filter((r) => r.code !== 0 && r.code !== 75)
      .map((r) => `${r.code}: ${r.stderr.trim()}`),
    violations: (JSON.parse(show.stdout) as { violations: number[] }).violations.length,
  };
}

function check(t: Trial, label: string): void {
  assert.deepEqual(t.other, [], `${label}: processes that failed otherwise`);
  assert.ok(t.releases <= 3, `${label}: ${t.releases} values released`);
  assert.equal(t.releases + t.limited, PROCESSES, label);
  assert.equal(t.violations, 1, `${label}: violations recorded`);
}

async function fill(rig: Rig): Promise<void> {
  for (const e of entries) await rig.set(e, `value of ${e}`);
}

const shared = new Rig();
before(async () => {
  await shared.create();
  await fill(shared);
});
after(() => shared.dispose());

test(`${TRIALS} trials on a vault made before: at most 3 of ${PROCESSES} released`, async (t) => {
  let most = 0;
  for (let i = 0; i < TRIALS; i++) {
    const token = await shared.addAgent(`burst${i}`, entries);
    const trial = await burst(shared, `burst${i}`, token);
    check(trial, `trial ${i}`);
    most = Math.max(most, trial.releases);
  }
  t.diagnostic(
    `pre-created vault: ${TRIALS} trials x ${PROCESSES} processes, most released in a trial: ${most}, violations per trial: 1`,
  );
});

test(`${FRESH_TRIALS} trials on a vault made a moment before, no host running`, async (t) => {
  let most = 0;
  const made = new Rig();
  await made.create();
  await fill(made);
  const token = await made.addAgent('burst', entries);
  await made.stop(); // the twenty race to start the host
  const copies = new Rig();
  cpSync(made.root, copies.root, { recursive: true });
  for (let i = 0; i < FRESH_TRIALS; i++) {
    const rig = i === 0 ? made : new Rig();
    try {
      if (i > 0) {
        cpSync(copies.vaultDir, rig.vaultDir, { recursive: true });
        if (existsSync(copies.configDir)) {
          cpSync(copies.configDir, rig.configDir, { recursive: true });
        }
      }
      const trial = await burst(rig, 'burst', token);
      check(trial, `fresh trial ${i}`);
      most = Math.max(most, trial.releases);
    } finally {
      await rig.dispose();
    }
  }
  await copies.dispose();
  t.diagnostic(
    `fresh vault, host not running: ${FRESH_TRIALS} trials x ${PROCESSES} processes, most released in a trial: ${most}, violations per trial: 1`,
  );
});
