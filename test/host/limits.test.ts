// Rate windows, violations, lockdown and the retry time, on the real host
// started in-process with its clock injected (test/support/host-tier.ts): the
// boundaries to the millisecond, with no wait and no libfaketime.
// test/e2e/limits.test.ts drives the same through processes, a second or more
// from each boundary; test/unit/policy.test.ts holds the pure decisions.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { VaultError } from '../../src/core/errors.js';
import type { AgentSummary } from '../../src/core/protocol.js';
import { HostTier } from '../support/host-tier.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const entries = Array.from({ length: 12 }, (_, i) => `e${i + 1}`);

let h: HostTier;
beforeEach(async () => {
  h = await HostTier.start();
  for (const e of entries) await h.set(e);
});
afterEach(() => h.stop());

/** The read refused with `code`; its message. */
async function refused(token: string, entry: string, code: string): Promise<string> {
  const err = await h.read(token, entry).then(
    () => assert.fail(`${entry} was released; ${code} expected`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof VaultError, String(err));
  assert.equal(err.code, code, err.message);
  return err.message;
}

async function allowed(token: string, entry: string): Promise<void> {
  assert.equal(await h.read(token, entry), `value of ${entry}`);
}

const show = (name: string) => h.owner('agent.show', { name }) as Promise<AgentSummary>;
const iso = (ms: number) => new Date(ms).toISOString();

test('minute window: a read is counted 59.999 s after it, and gone at 60 s', async () => {
  const token = await h.agent('minute', entries);
  const t0 = h.clock.ms;
  for (const e of ['e1', 'e2', 'e3']) await allowed(token, e);
  h.clock.ms = t0 + 59_000;
  await allowed(token, 'e1'); // counted already: free (its time moves to t0 + 59 s)
  h.clock.ms = t0 + MINUTE - 1;
  const message = await refused(token, 'e4', 'VLT-2042');
  // e2 (read at t0) leaves first: the retry time is exactly its minute's end.
  assert.equal(
    message,
    'Rate limit exceeded (minute); violation recorded (retried then, before asking for ' +
      `anything new, this request clears it); retry after ${iso(t0 + MINUTE)}.`,
  );
  assert.equal((await show('minute')).state, 'violation');

  // A second agent, 61 s on: the window has room, nothing is refused.
  const other = await h.agent('other', entries);
  const t1 = h.clock.ms;
  for (const e of ['e1', 'e2', 'e3']) await allowed(other, e);
  h.clock.ms = t1 + 61_000;
  await allowed(other, 'e4');
  assert.equal((await show('other')).state, 'active');
});

test('retry after T is exact: refused (not counted again) 1 ms before, allowed at T, the violation forgiven', async () => {
  const token = await h.agent('retry', entries);
  const t0 = h.clock.ms;
  for (const e of ['e1', 'e2', 'e3']) {
    await allowed(token, e);
    h.clock.advance(1_000);
  }
  h.clock.ms = t0 + 30_000;
  const message = await refused(token, 'e4', 'VLT-2042');
  const retryAt = Date.parse(/retry after (\S+)\.$/.exec(message)?.[1] ?? '');
  assert.equal(retryAt, t0 + MINUTE, 'e1, read first, leaves first');
  h.clock.ms = retryAt - 1;
  // Still over: refused again, but it belongs to the violation told (no lock).
  await refused(token, 'e4', 'VLT-2042');
  assert.deepEqual((await show('retry')).violations, [t0 + 30_000]);
  h.clock.ms = retryAt;
  await allowed(token, 'e4');
  const after = await show('retry');
  assert.equal(after.state, 'active', 'the retry, asking for nothing new, clears the violation');
  assert.deepEqual(after.violations, []);
});

test('hour window: 10 distinct an hour; the 11th waits for the first read’s hour, to the ms', async () => {
  const token = await h.agent('hour', entries);
  const t0 = h.clock.ms;
  for (let i = 0; i < 10; i += 3) {
    h.clock.ms = t0 + (i / 3) * 61_000; // each group in a minute of its own
    for (const e of entries.slice(i, Math.min(i + 3, 10))) await allowed(token, e);
  }
  h.clock.ms = t0 + HOUR - 1;
  const message = await refused(token, 'e11', 'VLT-2042');
  assert.match(message, /^Rate limit exceeded \(hour\);/);
  assert.ok(message.endsWith(`retry after ${iso(t0 + HOUR)}.`), message);
  h.clock.ms = t0 + HOUR;
  await allowed(token, 'e11');
  const after = await show('hour');
  assert.deepEqual(after.usage, { minute: 1, hour: 8 });
});

test('a second violation within two hours locks: VLT-2043 for every entry, also ones read before, and it does not expire', async () => {
  const token = await h.agent('escalate', entries, { perMinute: 1 });
  const t0 = h.clock.ms;
  await allowed(token, 'e1');
  h.clock.ms = t0 + 1_000;
  const first = await refused(token, 'e2', 'VLT-2042');
  assert.ok(first.endsWith(`retry after ${iso(t0 + MINUTE)}.`), first);
  h.clock.ms = t0 + 1_000 + 2 * HOUR - 1; // the first violation is 1 ms short of two hours old
  await allowed(token, 'e1');
  const lock = await refused(token, 'e2', 'VLT-2043');
  assert.equal(
    lock,
    'Second rate-limit violation: agent locked; the owner must unlock it with the hardware key.',
  );
  await refused(token, 'e1', 'VLT-2043');
  h.clock.advance(30 * 24 * HOUR);
  await refused(token, 'e1', 'VLT-2043');
  const s = await show('escalate');
  assert.equal(s.state, 'locked');
  assert.equal(s.lockedAt, t0 + 1_000 + 2 * HOUR - 1);
});

test('a second violation exactly two hours after the first is a first again: no lock', async () => {
  const token = await h.agent('spaced', entries, { perMinute: 1 });
  const t0 = h.clock.ms;
  await allowed(token, 'e1');
  await refused(token, 'e2', 'VLT-2042');
  h.clock.ms = t0 + 2 * HOUR;
  await allowed(token, 'e1');
  await refused(token, 'e3', 'VLT-2042');
  const s = await show('spaced');
  assert.equal(s.state, 'violation');
  assert.deepEqual(s.violations, [t0 + 2 * HOUR]);
});

test('values a minute: re-reads draw on a bucket refilled evenly; its retry time is exact too', async () => {
  const { token } = await h.owner('agent.add', {
    kind: 'ai',
    name: 'loop',
    scope: entries,
    limits: { perMinute: 3, perHour: 10, valuesPerMinute: 5 },
  });
  for (let i = 0; i < 5; i++) await allowed(token, 'e1');
  const message = await refused(token, 'e1', 'VLT-2042');
  // One value short, refilled at 5 a minute: 12 s.
  const retryAt = h.clock.ms + 12_000;
  assert.equal(
    message,
    `Rate limit exceeded (values a minute); violation recorded; retry after ${iso(retryAt)}.`,
  );
  h.clock.ms = retryAt - 1;
  await refused(token, 'e1', 'VLT-2042');
  h.clock.ms = retryAt;
  await allowed(token, 'e1');
  // Not forgiven by its retry: a loop retries the same request (policy.ts violated).
  assert.equal((await show('loop')).state, 'violation');
});

test('a request alone over the limit is refused whole, and counts nothing', async () => {
  const token = await h.agent('many', entries, { perMinute: 2 });
  const err = await call3(token);
  assert.ok(err instanceof VaultError);
  assert.equal(err.code, 'VLT-2042');
  assert.match(err.message, /names 3 distinct credentials and the agent may read 2 a minute/);
  const s = await show('many');
  assert.equal(s.state, 'active');
  assert.deepEqual(s.usage, { minute: 0, hour: 0 });
});

/** A render-like request of three references at once (`resolve`). */
async function call3(token: string): Promise<unknown> {
  return call(h.client, 'resolve', {
    token,
    refs: ['e1', 'e2', 'e3'].map((entry) => ({ entry, field: 'password' })),
  }).then(
    () => assert.fail('released'),
    (e: unknown) => e,
  );
}
