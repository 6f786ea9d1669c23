// Rate limits, violations and lockdown on the real host, with its wall clock
// moved by libfaketime between reads. Exact boundaries are in
// test/unit/policy.test.ts; here each step is a second or more from a boundary.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused, hostPid, waitGone } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { Rig } from '../support/rig.js';

const skip = LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false;
const rig = new Rig();
const clock = new FakeClock(rig);
const entries = Array.from({ length: 12 }, (_, i) => `e${i + 1}`);

before(async () => {
  if (skip) return;
  await clock.start();
  await rig.create();
  for (const e of entries) await rig.set(e, `value of ${e}`);
});
after(async () => {
  if (!skip) await clock.stop();
  await rig.dispose();
});

async function read(token: string, entry: string) {
  const r = await rig.agent(['get', entry], token);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

async function expectRead(token: string, entry: string): Promise<void> {
  const r = await read(token, entry);
  assert.equal(r.code, 0, `${entry} at +${clock.seconds}s: ${r.stderr}`);
  assert.equal(r.stdout, `value of ${entry}\n`);
}

async function expectCode(
  token: string,
  entry: string,
  code: string,
  exit: number,
): Promise<string> {
  const r = await read(token, entry);
  assert.equal(r.code, exit, `${entry} at +${clock.seconds}s: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.ok(r.stderr.startsWith(`vault-cli: ${code}: `), r.stderr);
  return r.stderr;
}

// The steps share one host clock, so they run in order, each agent on its own.
test(
  'minute window: 3 allowed, the 4th refused, re-reads free and refresh, the retry clears, then a lock',
  { skip },
  async () => {
    const token = await rig.addAgent('minute', entries);
    clock.set(0);
    for (const e of ['e1', 'e2', 'e3']) await expectRead(token, e);
    clock.set(5);
    await expectRead(token, 'e1'); // already counted: free
    await expectRead(token, 'e2');
    clock.set(50);
    const refused = await expectCode(token, 'e4', 'VLT-2042', 75);
    assert.match(refused, /retry after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\./);
    // e3 (read at +0 s) has left; e1 and e2, re-read at +5 s, are still counted: room for one.
    clock.set(61);
    await expectRead(token, 'e4'); // the retry, asking for nothing new: the violation is cleared
    await expectCode(token, 'e5', 'VLT-2042', 75); // so this one is a first again
    // e1 and e2 leave at +65 s: then something new instead of the retry of
    // e5, and over the limit again, is the second violation within 2 h: locked.
    clock.set(70);
    await expectRead(token, 'e6');
    await expectRead(token, 'e7');
    await expectCode(token, 'e8', 'VLT-2043', 77);
    const show = await rig.owner(['agent', 'show', 'minute', '--json']);
    assert.equal(JSON.parse(show.stdout).state, 'locked');
  },
);

test('a read leaves the minute window 60 s after it was made', { skip }, async () => {
  const token = await rig.addAgent('boundary', entries);
  clock.set(200);
  // The host's clock is real time plus the offset, so it runs on while the
  // reads take their time (over a second under load, which once put e4 past
  // the boundary): e1 was read at +200 s + (real time since here) or later.
  const since = Date.now();
  for (const e of ['e1', 'e2', 'e3']) await expectRead(token, e);
  // 58 s after e1 at most, plus e4's own call: still in the window.
  clock.set(258 - Math.ceil((Date.now() - since) / 1000));
  await expectCode(token, 'e4', 'VLT-2042', 75);
  clock.set(262); // 62 s after e3 at least (real time only adds): out
  await expectRead(token, 'e4'); // 62 s later: out
});

test('hour window: 10 distinct an hour, room again after 3600 s', { skip }, async () => {
  const token = await rig.addAgent('hour', entries);
  let t = 1000;
  for (let i = 0; i < 10; i += 3) {
    clock.set(t);
    for (const e of entries.slice(i, Math.min(i + 3, 10))) await expectRead(token, e);
    t += 70;
  }
  clock.set(t);
  const refused = await expectCode(token, 'e11', 'VLT-2042', 75);
  assert.match(refused, /\(hour\)/);
  clock.set(1000 + 3602); // e1..e3 (read at +1000 s) have left the hour window
  await expectRead(token, 'e11');
});

test(
  'a second violation within two hours locks, also for entries read before',
  { skip },
  async () => {
    const token = await rig.addAgent('escalate', entries, ['--per-minute', '1']);
    clock.set(10_000);
    await expectRead(token, 'e1');
    await expectCode(token, 'e2', 'VLT-2042', 75);
    clock.set(10_000 + 2 * 3600 - 60); // 1 min short of two hours
    await expectRead(token, 'e1');
    await expectCode(token, 'e2', 'VLT-2043', 77);
    await expectCode(token, 'e1', 'VLT-2043', 77);
    clock.set(10_000 + 5 * 3600); // locks do not expire
    await expectCode(token, 'e1', 'VLT-2043', 77);
    const audit = await rig.owner(['audit', '--agent', 'escalate', '--json']);
    const actions = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).action);
    assert.deepEqual(actions, [
      'agent_add',
      'ai_read',
      'limited',
      'ai_read',
      'locked',
      'locked',
      'locked',
    ]);
  },
);

test(
  'a second violation two hours and a minute after the first does not lock',
  { skip },
  async () => {
    const token = await rig.addAgent('spaced', entries, ['--per-minute', '1']);
    clock.set(40_000);
    await expectRead(token, 'e1');
    await expectCode(token, 'e2', 'VLT-2042', 75);
    clock.set(40_000 + 2 * 3600 + 60);
    await expectRead(token, 'e1');
    await expectCode(token, 'e3', 'VLT-2042', 75); // a violation, the first within two hours
    const show = await rig.owner(['agent', 'show', 'spaced', '--json']);
    assert.equal(JSON.parse(show.stdout).state, 'violation');
  },
);

test(
  'totp reads are charged too: 3 distinct a minute, the 4th refused, a re-read free',
  { skip },
  async () => {
    const seeds = ['t1', 't2', 't3', 't4'];
    for (const e of seeds) await rig.set(e, 'JBSWY3DPEHPK3PXP', 'totp');
    const token = await rig.addAgent('totp', seeds);
    clock.set(60_000);
    const code = async (entry: string) => rig.agent(['totp', entry], token);
    for (const e of ['t1', 't2', 't3']) {
      const r = await code(e);
      assert.equal(r.code, 0, `${e}: ${r.stderr}`);
      assert.match(r.stdout, /^\d{6}\n$/);
    }
    clock.set(60_010);
    const again = await code('t1'); // already counted: free
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^\d{6}\n$/);
    const refused = await code('t4');
    assert.equal(refused.code, 75, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^vault-cli: VLT-2042: [^\n]*retry after [^\n]*\n$/);
    const show = JSON.parse((await rig.owner(['agent', 'show', 'totp', '--json'])).stdout) as {
      state: string;
      usage: { minute: number; hour: number };
      valuesLeft: number;
    };
    assert.equal(show.state, 'violation');
    assert.deepEqual(show.usage, { minute: 3, hour: 3 });
    // Four released of the 600 a minute, refilled at ten a second since.
    assert.ok(show.valuesLeft >= 596 && show.valuesLeft <= 600, String(show.valuesLeft));
  },
);

test(
  'a lock survives kill -9 of the host: get, totp and render are VLT-2043, also for entries read before',
  { skip },
  async () => {
    await rig.set('e1', 'JBSWY3DPEHPK3PXP', 'totp');
    // One agent locked by a second violation, one by hand.
    const greedy = await rig.addAgent('killed-greedy', entries, ['--per-minute', '1']);
    const handy = await rig.addAgent('killed-handy', entries);
    clock.set(200_000);
    await expectRead(greedy, 'e1');
    await expectRead(handy, 'e1');
    await expectCode(greedy, 'e2', 'VLT-2042', 75);
    clock.set(200_070);
    // Something new instead of the retry of e2 (which would clear the violation), then over again.
    await expectRead(greedy, 'e3');
    await expectCode(greedy, 'e4', 'VLT-2043', 77);
    const lock = await rig.owner(['agent', 'lock', 'killed-handy']);
    assert.equal(lock.code, 0, lock.stderr);
    await expectCode(handy, 'e1', 'VLT-2043', 77);

    // No graceful stop: the host dies at once, and the next request starts a new one.
    const pid = await hostPid(rig);
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid), 'the host survived SIGKILL');

    const template = 'a=vault://e1/password b=vault://e2/password\n';
    for (const [name, token] of [
      ['killed-greedy', greedy],
      ['killed-handy', handy],
    ] as const) {
      await expectCode(token, 'e1', 'VLT-2043', 77); // read before the lock
      await expectCode(token, 'e4', 'VLT-2043', 77); // never read
      assertRefused(await rig.agent(['totp', 'e1'], token), 'VLT-2043', `${name} totp`);
      assertRefused(
        await rig.agent(['render', '-'], token, { input: template }),
        'VLT-2043',
        `${name} render`,
      );
      const show = JSON.parse((await rig.owner(['agent', 'show', name, '--json'])).stdout) as {
        state: string;
      };
      assert.equal(show.state, 'locked', name);
    }
    assert.notEqual(await hostPid(rig), pid, 'a new host answered');
    // Back to a host on the moved clock, for any test after this one.
    await rig.stop();
    await clock.start();
  },
);
