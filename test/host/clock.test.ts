// What the host's clock decides besides rate windows, on the real host started
// in-process with its clock injected (test/support/host-tier.ts): audit
// record times and their chain, run-session expiry, the owner's process hold
// running idle, the passphrase guess delay, and each refusal's code. No
// sleeps: time moves when the test sets it.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { call } from '../../src/client/client.js';
import { VaultError } from '../../src/core/errors.js';
import type { AuditView } from '../../src/core/audit.js';
import { formatToken, parseToken } from '../../src/crypto/token.js';
import {
  DEFAULT_IDLE_MS,
  DEFAULT_TTL_MS,
  PROCESS_IDLE_MS,
  bindingOf,
} from '../../src/host/owner/unlock.js';
import { HostTier } from '../support/host-tier.js';

let h: HostTier;
beforeEach(async () => {
  h = await HostTier.start();
});
afterEach(() => h.stop());

async function code(p: Promise<unknown>, what = ''): Promise<string> {
  const err = await p.then(
    () => assert.fail(`not refused ${what}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof VaultError, String(err));
  return err.code;
}

const audit = async () =>
  (await h.owner('audit.list', { last: 1000 })).records as readonly AuditView[];

test('host status: started at the host’s clock', async () => {
  const status = await h.owner('status', {});
  assert.equal(status.startedAt, h.clock.ms);
});

test('audit records carry the host clock’s time to the ms, in sequence, and the chain verifies', async () => {
  const t0 = h.clock.ms;
  h.clock.ms = t0 + 1_001;
  await h.set('db');
  h.clock.ms = t0 + 2_002;
  const token = await h.agent('bot', ['db']);
  h.clock.ms = t0 + 3_003;
  await h.read(token, 'db');
  h.clock.ms = t0 + 4_004;
  assert.equal(await code(h.read(token, 'nope')), 'VLT-2041');
  h.clock.ms = t0 + 5_005;
  const records = await audit();
  assert.deepEqual(
    records.map((r) => [r.seq, r.at, r.action, r.actor, r.outcome]),
    [
      [1, t0, 'vault_create', 'owner', 'ok'],
      [2, t0 + 1_001, 'entry_add', 'owner', 'ok'],
      [3, t0 + 2_002, 'agent_add', 'owner', 'ok'],
      [4, t0 + 3_003, 'ai_read', 'cli:bot', 'ok'],
      [5, t0 + 4_004, 'denied', 'cli:bot', 'VLT-2041'],
    ],
  );
  const v = await h.owner('audit.verify', {});
  assert.equal(v.brokenAt, null);
  assert.equal(v.records, records.length);
  // `since` filters by the clock's times.
  const since = await h.owner('audit.list', { since: t0 + 3_003 });
  assert.deepEqual(
    since.records.map((r) => r.seq),
    [4, 5],
  );
});

test('a clock set back: records keep their sequence and the chain still verifies', async () => {
  const t0 = h.clock.ms;
  await h.set('a');
  h.clock.ms = t0 - 3_600_000;
  await h.set('b');
  const records = await audit();
  assert.deepEqual(
    records.slice(-2).map((r) => [r.at, r.action]),
    [
      [t0, 'entry_add'],
      [t0 - 3_600_000, 'entry_add'],
    ],
  );
  assert.equal((await h.owner('audit.verify', {})).brokenAt, null);
});

test('a run session token reads until 1 ms before it expires, then VLT-2040', async () => {
  await h.set('db');
  const token = await h.agent('bot', ['db']);
  const ttlMs = 10 * 60_000;
  const s = await h.owner('session.start', { agent: 'bot', scope: ['db'], ttlMs });
  assert.equal(s.expires, h.clock.ms + ttlMs);
  h.clock.ms = s.expires - 1;
  assert.equal(await h.read(s.token, 'db'), 'value of db');
  h.clock.ms = s.expires;
  assert.equal(await code(h.read(s.token, 'db')), 'VLT-2040');
  // The agent's own token is untouched.
  assert.equal(await h.read(token, 'db'), 'value of db');
});

test('the owner’s process hold stands for the passphrase until it has been idle PROCESS_IDLE_MS', async () => {
  // Without a passphrase and with no hold: VLT-2054.
  assert.equal(await code(h.owner('agent.ls', { passphrase: undefined })), 'VLT-2054');
  const held = await h.owner('sweep.values', { hold: true, stored: false });
  assert.equal(held.held, true, 'this process holds the owner key');
  h.clock.advance(PROCESS_IDLE_MS - 1);
  await h.owner('agent.ls', { passphrase: undefined }); // a use: the idle time starts again
  h.clock.advance(PROCESS_IDLE_MS - 1);
  await h.owner('agent.ls', { passphrase: undefined });
  h.clock.advance(PROCESS_IDLE_MS);
  assert.equal(await code(h.owner('agent.ls', { passphrase: undefined })), 'VLT-2054');
});

test('a terminal’s owner session runs out after its idle time (or, with no terminal, is refused)', async () => {
  const passless = () => h.owner('agent.ls', { passphrase: undefined });
  if (bindingOf({ pid: process.pid, uid: process.getuid?.() ?? 0 }) === null) {
    // Tests started without a controlling terminal (CI): the host names none for this process.
    const err = await h.owner('owner.unlock', {}).then(
      () => assert.fail('a session without a terminal'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof VaultError);
    assert.equal(err.code, 'VLT-2054');
    assert.match(err.message, /needs a terminal of its own/);
    return;
  }
  const t0 = h.clock.ms;
  const view = await h.owner('owner.unlock', {});
  assert.equal(view.expires, t0 + DEFAULT_TTL_MS);
  assert.equal(view.idleMs, DEFAULT_IDLE_MS);
  h.clock.advance(DEFAULT_IDLE_MS - 1);
  await passless();
  h.clock.advance(DEFAULT_IDLE_MS);
  assert.equal(await code(passless()), 'VLT-2054');
  assert.equal((await h.owner('owner.session', { passphrase: undefined })).session, null);
});

test('a wrong passphrase: VLT-3002, audited at the clock’s time with its ordinal, also after the guess delay has run in host time', async () => {
  const t0 = h.clock.ms;
  assert.equal(await code(h.owner('agent.ls', { passphrase: 'wrong' })), 'VLT-3002');
  // The guess delay is measured on the host's clock: moved past it, nothing waits.
  h.clock.advance(60_000);
  assert.equal(await code(h.owner('agent.ls', { passphrase: 'wrong again' })), 'VLT-3002');
  h.clock.advance(60_000);
  await h.owner('agent.ls', {});
  const failed = (await audit()).filter((r) => r.action === 'passphrase_failed');
  assert.deepEqual(
    failed.map((r) => [r.at, r.outcome, r.subject]),
    [
      [t0, 'VLT-3002', 'attempt 1'],
      [t0 + 60_000, 'VLT-3002', 'attempt 2'],
    ],
  );
});

test('each refusal of an agent read has its own code', async () => {
  await h.set('db');
  await h.set('other');
  await h.owner('entry.set', {
    entry: 'seed',
    field: 'totp',
    value: Buffer.from('JBSWY3DPEHPK3PXP').toString('base64'),
  });
  const token = await h.agent('bot', ['db', 'seed']);
  const parsed = parseToken(token);
  assert.ok(parsed !== null);
  const secret = Buffer.from(parsed.secret);
  secret[0] = (secret[0] ?? 0) ^ 1;
  const wrong = formatToken(Buffer.from(parsed.agentId, 'hex'), secret);
  const read = (t: string, entry: string, field = 'password') =>
    call(h.client, 'read', { token: t, entry, field, mode: 'get' });
  const cases: [string, Promise<unknown>, string][] = [
    ['malformed token', read('not-a-token', 'db'), 'VLT-2040'],
    ['wrong secret', read(wrong, 'db'), 'VLT-2040'],
    ['out of scope', read(token, 'other'), 'VLT-2041'],
    ['no such entry', read(token, 'missing'), 'VLT-2041'],
    ['no such field', read(token, 'db', 'user'), 'VLT-2044'],
    ['a TOTP seed by get', read(token, 'seed', 'totp'), 'VLT-2052'],
  ];
  for (const [what, p, expected] of cases) assert.equal(await code(p, what), expected, what);
  await h.owner('agent.lock', { name: 'bot' });
  assert.equal(await code(read(token, 'db')), 'VLT-2043', 'locked by hand');
  await h.owner('agent.revoke', { name: 'bot' });
  assert.equal(await code(read(token, 'db')), 'VLT-2040', 'revoked');
});
