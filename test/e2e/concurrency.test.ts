// Twenty agent processes started at the same instant, each reading a different
// entry: at most three values are released (3 a minute), exactly one violation
// is recorded, and no process fails to reach the host or open the store. Trials
// on a vault made long before, and on one made a moment before with no host
// running, so the twenty also race to start it.
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { isErrorCode } from '../../src/core/errors.js';
import { CLI, Rig, type Result } from '../support/rig.js';

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

// Twenty requests written at once by one process over twenty connections reach
// the host within a turn or two of its event loop, their reads interleaved with
// each other's authentication: still three released, in order, one violation.
test('twenty reads sent at once by one process: three released, one violation, chain intact', async () => {
  const client = {
    vaultDir: shared.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: shared.env },
    autoStart: false,
  };
  for (let round = 0; round < 5; round++) {
    const agent = `together${round}`;
    const token = await shared.addAgent(agent, entries);
    const settled = await Promise.allSettled(
      entries.map((entry) =>
        call(client, 'read', { token, entry, field: 'password', mode: 'get' }),
      ),
    );
    const released = settled.flatMap((s, i) =>
      s.status === 'fulfilled'
        ? [[entries[i], Buffer.from(s.value.value, 'base64').toString()]]
        : [],
    );
    assert.equal(released.length, 3, `round ${round}: ${JSON.stringify(released)}`);
    for (const [entry, value] of released) assert.equal(value, `value of ${entry}`);
    const codes = settled.flatMap((s) =>
      s.status === 'rejected' ? [(s.reason as { code?: unknown }).code] : [],
    );
    for (const c of codes) assert.ok(c === 'VLT-2042' || c === 'VLT-2043', String(c));
    assert.ok(codes.every((c) => isErrorCode(c)));
    const show = await shared.owner(['agent', 'show', agent, '--json']);
    assert.equal((JSON.parse(show.stdout) as { violations: number[] }).violations.length, 1);
  }
  const verify = await shared.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
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
