// Issue 38: an honest agent's day never ends in a lockdown. The newcomer's
// sequence under the default limits (3 distinct a minute, 10 an hour, the
// second violation locks), on the real host with its clock moved by
// libfaketime: a git push's credential, a 3-reference render in the same
// minute (over: told to retry at T), a typo while waiting, the retry at T,
// then a 5-reference render once the owner raised the limit. No lock. An
// agent that asks for four new names each minute is still locked by the
// second minute. Exact boundaries: test/unit/honest-limits.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertRefused } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { Rig, ok } from '../support/rig.js';

const skip = LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false;
const rig = new Rig();
const clock = new FakeClock(rig);
const APP = ['DB', 'Stripe', 'SMTP', 'Sentry', 'OpenAI'];

before(async () => {
  if (skip) return;
  await clock.start();
  await rig.create();
  for (const e of ['GitHub', ...APP]) await rig.set(e, `value of ${e}`);
  for (let i = 1; i <= 8; i++) await rig.set(`n${i}`, `value of n${i}`);
});
after(async () => {
  if (!skip) await clock.stop();
  await rig.dispose();
});

const template = (names: readonly string[]) =>
  names.map((n) => `${n.toLowerCase()}: vault://${n}/password`).join('\n') + '\n';

interface Shown {
  state: string;
  violations: number[];
}
const show = async (name: string) =>
  JSON.parse(ok(await rig.owner(['agent', 'show', name, '--json']))) as Shown;

test(
  'the newcomer: git push, a 3-reference render, a typo, the retry at T, a 5-reference render after agent limits: no lock',
  { skip },
  async () => {
    const token = await rig.addAgent('newcomer', ['GitHub', ...APP]);
    clock.set(0);
    // The credential a `git push` through the proxy takes (git-credential.test.ts): one entry.
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'value of GitHub\n');
    clock.set(10);
    const three = APP.slice(0, 3);
    const refused = assertRefused(
      await rig.agent(['render', '-'], token, { input: template(three) }),
      'VLT-2042',
      'the render in the same minute',
    );
    assert.match(refused, /clears it/);
    const when = /retry after (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.$/.exec(refused);
    assert.ok(when, refused);
    const retryAt = new Date(`${when[1]}T${when[2]}`).getTime();
    clock.set(20);
    assertRefused(await rig.agent(['get', 'DBB'], token), 'VLT-2041', 'the typo');
    // At T (the host's clock a second past it at most): the same render, nothing new.
    clock.set(Math.ceil((retryAt - Date.now()) / 1000));
    const rendered = ok(await rig.agent(['render', '-'], token, { input: template(three) }));
    assert.equal(rendered, three.map((n) => `${n.toLowerCase()}: value of ${n}`).join('\n') + '\n');
    assert.deepEqual((await show('newcomer')).violations, [], 'the retry cleared the violation');
    ok(await rig.owner(['agent', 'limits', 'newcomer', '--per-minute', '5']));
    const five = ok(await rig.agent(['render', '-'], token, { input: template(APP) }));
    assert.match(five, /openai: value of OpenAI/);
    assert.equal((await show('newcomer')).state, 'active');
  },
);

test(
  'a group the owner declares renders a 5-reference template under the default limits; the hour counts each',
  { skip },
  async () => {
    const token = await rig.addAgent('grouped', [...APP, 'GitHub', 'n1', 'n2', 'n3', 'n4', 'n5']);
    clock.set(2 * 3600);
    assertRefused(
      await rig.agent(['render', '-'], token, { input: template(APP) }),
      'VLT-2042',
      'five distinct under 3 a minute',
    );
    ok(await rig.owner(['agent', 'group', 'grouped', 'app', ...APP]));
    assert.match(ok(await rig.owner(['agent', 'show', 'grouped'])), /group app .*: DB, Stripe/);
    assert.match(ok(await rig.agent(['render', '-'], token, { input: template(APP) })), /sentry/);
    // The group is one slot of the minute: two more fit, a third is over.
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'value of GitHub\n');
    assert.equal(ok(await rig.agent(['get', 'n1'], token)), 'value of n1\n');
    assertRefused(await rig.agent(['get', 'n2'], token), 'VLT-2042', 'the minute is full');
    // The hour counts each of the five: 7 of 10.
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'grouped', '--json']))) as {
      usage: { hour: number };
    };
    assert.equal(shown.usage.hour, 7);
    // With no entries the group is gone.
    ok(await rig.owner(['agent', 'group', 'grouped', 'app']));
    assert.doesNotMatch(ok(await rig.owner(['agent', 'show', 'grouped'])), /group app/);
  },
);

test(
  'an agent asking for four new names each minute is locked by the second minute',
  { skip },
  async () => {
    const token = await rig.addAgent('greedy', ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8']);
    const base = 4 * 3600; // hours after the newcomer: its reads are out of every window
    const seen: string[] = [];
    for (const [minute, names] of [
      [0, ['n1', 'n2', 'n3', 'n4']],
      [1, ['n5', 'n6', 'n7', 'n8']],
    ] as const) {
      clock.set(base + minute * 60 + 5);
      for (const n of names) {
        const r = await rig.agent(['get', n], token);
        seen.push(r.code === 0 ? 'ok' : (/VLT-\d{4}/.exec(r.stderr)?.[0] ?? r.stderr));
      }
    }
    assert.deepEqual(seen.slice(0, 4), ['ok', 'ok', 'ok', 'VLT-2042']);
    assert.ok(seen.slice(4).includes('VLT-2043'), seen.join(' '));
    assert.equal((await show('greedy')).state, 'locked');
  },
);
