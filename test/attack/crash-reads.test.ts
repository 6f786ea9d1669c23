// The host killed with SIGKILL at random moments while agents read and the
// owner rotates a value. After it restarts: no value was released without its
// audit record, no acknowledged write was lost, and the audit chain verifies.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Rig, ok } from '../support/rig.js';

const READS = Number(process.env.CRASH_READS ?? 500);
const READERS = 4;
const entries = Array.from({ length: 10 }, (_, i) => `r${i}`);
const rig = new Rig();
after(() => rig.dispose());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function hostPid(): Promise<number | null> {
  const r = await rig.owner(['daemon', 'status', '--json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as { pid: number }).pid : null;
}

test(`SIGKILL of the host during ${READS} reads and concurrent rotations`, async (t) => {
  await rig.create();
  for (const e of entries) await rig.set(e, `value of ${e}`);
  await rig.set('rotating', 'v0');
  const token = await rig.addAgent(
    'reader',
    [...entries, 'rotating'],
    ['--per-minute', '100000', '--per-hour', '100000'],
  );

  const released = new Map<string, number>();
  const failures: string[] = [];
  let issued = 0;
  let done = false;

  const reader = async () => {
    while (issued < READS) {
      const entry = entries[issued++ % entries.length] as string;
      const r = await rig.agent(['get', entry], token);
      if (r.code === 0) {
        assert.equal(r.stdout, `value of ${entry}\n`);
        released.set(entry, (released.get(entry) ?? 0) + 1);
      } else {
        // A read the host was killed under: refused, nothing on stdout.
        assert.equal(r.stdout, '', `${entry} printed something though it failed: ${r.stderr}`);
        failures.push(r.stderr.trim());
      }
    }
  };

  const acked: number[] = [];
  let attempted = 0;
  const writer = async () => {
    while (!done) {
      const v = ++attempted;
      const r = await rig.owner(['entry', 'set', 'rotating'], { input: `v${v}` });
      if (r.code === 0) acked.push(v);
    }
  };

  let kills = 0;
  const killer = async () => {
    while (!done) {
      await sleep(150 + Math.floor(Math.random() * 600));
      const pid = await hostPid();
      if (pid === null) continue;
      try {
        process.kill(pid, 'SIGKILL');
        kills++;
      } catch {
        // already gone
      }
    }
  };

  const work = Promise.all(Array.from({ length: READERS }, reader)).finally(() => {
    done = true;
  });
  await Promise.all([work, writer(), killer()]);

  // Restarted by the next command.
  const audit = ok(await rig.owner(['audit', '--agent', 'reader', '--json']));
  const records = audit
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { action: string; entry: string | null });
  for (const e of entries) {
    const audited = records.filter((r) => r.action === 'ai_read' && r.entry === e).length;
    assert.ok(
      audited >= (released.get(e) ?? 0),
      `${e}: ${released.get(e)} released, ${audited} audited`,
    );
  }
  assert.match(
    ok(await rig.owner(['audit', '--verify'])),
    /^audit chain verified: \d+ records; anchored up to record \d+ by the owner, \d+ after it unanchored\n$/,
  );

  // The last acknowledged rotation, or one attempted after it (committed, then killed before the reply).
  const last = acked[acked.length - 1] ?? 0;
  const value = ok(await rig.agent(['get', 'rotating'], token)).trim();
  const v = Number(value.slice(1));
  assert.ok(
    value.startsWith('v') && v >= last && v <= attempted,
    `rotating is ${value}; last acknowledged v${last}`,
  );

  for (const f of failures) assert.match(f, /^vault-cli: VLT-3005: /);
  const total = [...released.values()].reduce((a, b) => a + b, 0);
  assert.ok(kills > 0, 'the host was never killed');
  t.diagnostic(
    `${READS} reads, ${kills} SIGKILLs of the host: ${total} values released, each with its audit record; ` +
      `${failures.length} refused (VLT-3005); ${acked.length} of ${attempted} rotations acknowledged, none lost; chain verified`,
  );
});
