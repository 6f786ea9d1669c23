// Hardware keys end to end: real `vault-cli` processes, a real host (its clock
// moved by libfaketime), the ceremony page in headless Chromium with a DevTools
// virtual authenticator, and fido2-lib verifying in the host. Nothing stubbed.
import assert from 'node:assert/strict';
import { createHash, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditRecords, assertRefused } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import type { ErrorCode } from '../../src/core/errors.js';
import { ok, Rig, type Result } from '../support/rig.js';
import {
  BrowserRig,
  addStranger,
  assertIn,
  blankAt,
  ceremony,
  credentials,
  enrolVouched,
  pageOptions,
  postResult,
  runInBrowser,
  setSignCount,
  skipChromium,
  type Authenticator,
  type Ceremony,
} from '../support/webauthn.js';

const skip =
  skipChromium || (LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false);
const rig = new Rig();
const clock = new FakeClock(rig);
let browser: BrowserRig;
let keyA: Authenticator;
let keyB: Authenticator;
let botToken = '';

before(async () => {
  if (skip) return;
  await clock.start();
  await rig.create();
  for (const e of ['e1', 'e2', 'e3']) await rig.set(e, `value of ${e}`);
  botToken = await rig.addAgent('bot', ['e1', 'e2', 'e3']);
  await rig.addAgent('other', ['e1']);
  browser = await BrowserRig.launch();
  keyA = await browser.authenticator();
  keyB = await browser.authenticator();
});
after(async () => {
  if (!skip) {
    await browser.close();
    await clock.stop();
  }
  await rig.dispose();
});

async function state(agent: string): Promise<string> {
  return (JSON.parse(ok(await rig.owner(['agent', 'show', agent, '--json']))) as { state: string })
    .state;
}

async function lock(agent: string): Promise<void> {
  ok(await rig.owner(['agent', 'lock', agent]));
  assert.equal(await state(agent), 'locked');
}

/** The last audit record, which a refusal must have written. */
async function lastAudit() {
  const all = await auditRecords(rig);
  const last = all[all.length - 1];
  assert.ok(last !== undefined);
  return last;
}

/** A ceremony's refusal: the URL line (one a page), then the one error line. */
function assertCeremonyRefused(r: Result, code: ErrorCode): string {
  const lines = r.stderr.split('\n');
  assert.match(lines[0] ?? '', /open http:\/\/localhost:/, r.stderr);
  const pages = lines.filter((l) => /open http:\/\/localhost:/.test(l)).length;
  return assertRefused({ ...r, stderr: lines.slice(pages).join('\n') }, code);
}

/** A refused unlock: the CLI says so, the agent stays locked, an unlock_failed record says why. */
async function assertUnlockRefused(
  c: Ceremony,
  agent: string,
  reason: RegExp,
  code: 'VLT-4007' | 'VLT-4008' = 'VLT-4007',
): Promise<void> {
  assertCeremonyRefused(await c.done, code);
  assert.equal(await state(agent), 'locked');
  const last = await lastAudit();
  assert.equal(last.action, 'unlock_failed');
  assert.equal(last.outcome, code);
  assert.equal(last.subject, agent);
  assert.match(last.field ?? '', reason);
}

/** `c`'s options signed by `a` on a blank page at `origin` (default: the ceremony's own). */
async function signFor(a: Authenticator, c: Ceremony, origin = c.origin): Promise<unknown> {
  const options = await pageOptions(c);
  await blankAt(a, `${origin}/blank`);
  return assertIn(a, options);
}

test(
  'no key enrolled: unlock explains how to enrol, and the lock stays',
  { skip, timeout: 20_000 },
  async () => {
    await lock('bot');
    const r = await rig.owner(['agent', 'unlock', 'bot', '--no-browser']);
    const msg = assertRefused(r, 'VLT-4004');
    assert.match(msg, /vault-cli key add/);
    assert.equal(await state('bot'), 'locked');
    assertRefused(await rig.agent(['get', 'e1'], botToken), 'VLT-2043');
  },
);

test('enrol two keys in the browser; key ls lists them', { skip, timeout: 20_000 }, async () => {
  const a = await runInBrowser(keyA, await ceremony(rig, ['key', 'add']));
  assert.equal(a.code, 0, a.stderr);
  assert.match(a.stderr, /enrolled hardware key key-1/);
  assert.match(a.stderr, /enrol a second one/);
  // The second key: key-1 confirms first, then the new one is enrolled.
  const b = await enrolVouched(keyA, keyB, await ceremony(rig, ['key', 'add', '--name', 'spare']));
  assert.equal(b.code, 0, b.stderr);
  assert.match(b.stderr, /first confirm with an enrolled key: open /);
  const keys = JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))) as { name: string }[];
  assert.deepEqual(
    keys.map((k) => k.name),
    ['key-1', 'spare'],
  );
  const text = ok(await rig.owner(['key', 'ls']));
  assert.match(text, /^NAME +ENROLLED +LAST USED +COUNTER\n/);
  const adds = (await auditRecords(rig)).filter((r) => r.action === 'key_add');
  assert.deepEqual(
    adds.map((r) => [r.entry, r.outcome, r.subject]),
    [
      ['key-1', 'ok', null],
      ['spare', 'ok', 'vouched by key-1'],
    ],
  );
});

test(
  'key add, ls and rm with a wrong owner passphrase are refused and change nothing',
  { skip, timeout: 20_000 },
  async () => {
    const wrong = join(rig.root, 'wrong-passphrase');
    writeFileSync(wrong, 'not the owner passphrase\n', { mode: 0o600 });
    const env = { VAULT_PASSPHRASE_FILE: wrong };
    const keysBefore = ok(await rig.owner(['key', 'ls', '--json']));
    const seqBefore = (await lastAudit()).seq;
    // Refused before any page is served: no URL, just the error line.
    assertRefused(
      await rig.owner(['key', 'add', '--name', 'intruder', '--no-browser'], { env }),
      'VLT-3002',
    );
    assertRefused(await rig.owner(['key', 'ls'], { env }), 'VLT-3002');
    assertRefused(await rig.owner(['key', 'ls', '--json'], { env }), 'VLT-3002');
    assertRefused(await rig.owner(['key', 'rm', 'spare'], { env }), 'VLT-3002');
    assert.equal(ok(await rig.owner(['key', 'ls', '--json'])), keysBefore);
    const since = (await auditRecords(rig)).filter((r) => r.seq > seqBefore);
    assert.deepEqual(
      since.filter((r) => r.action.startsWith('key_')),
      [],
      'no key record was written',
    );
  },
);

test('the same key cannot be enrolled twice', { skip, timeout: 20_000 }, async () => {
  const r = await enrolVouched(keyA, keyA, await ceremony(rig, ['key', 'add', '--name', 'again']));
  assertCeremonyRefused(r, 'VLT-4007');
  const last = await lastAudit();
  assert.equal(last.action, 'key_add');
  assert.equal(last.outcome, 'VLT-4007');
});

test(
  'a hand lock is lifted by the key, and the agent reads again',
  { skip, timeout: 20_000 },
  async () => {
    assert.equal(await state('bot'), 'locked');
    const r = await runInBrowser(keyA, await ceremony(rig, ['agent', 'unlock', 'bot']));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /unlocked agent bot/);
    assert.notEqual(await state('bot'), 'locked');
    assert.equal(ok(await rig.agent(['get', 'e1'], botToken)), 'value of e1\n');
    const unlocked = (await auditRecords(rig)).filter((x) => x.action === 'unlocked');
    assert.equal(unlocked.length, 1);
    assert.equal(unlocked[0]?.subject, 'bot');
    assert.equal(unlocked[0]?.entry, 'key-1');
    const again = await rig.owner(['agent', 'unlock', 'bot', '--no-browser']);
    assert.equal(again.code, 0);
    assert.match(again.stderr, /not locked/);
  },
);

test(
  'a lockdown from exceeding the limits is lifted by the spare key',
  { skip, timeout: 20_000 },
  async () => {
    const token = await rig.addAgent('greedy', ['e1', 'e2', 'e3'], ['--per-minute', '1']);
    clock.set(1000);
    ok(await rig.agent(['get', 'e1'], token));
    assertRefused(await rig.agent(['get', 'e2'], token), 'VLT-2042');
    clock.set(1070);
    // Something new instead of the retry of e2 (which would clear the violation).
    ok(await rig.agent(['get', 'e3'], token));
    assertRefused(await rig.agent(['get', 'e2'], token), 'VLT-2043');
    assert.equal(await state('greedy'), 'locked');
    const r = await runInBrowser(keyB, await ceremony(rig, ['agent', 'unlock', 'greedy']));
    assert.equal(r.code, 0, r.stderr);
    clock.set(1200);
    assert.equal(ok(await rig.agent(['get', 'e2'], token)), 'value of e2\n');
  },
);

test('a replayed assertion is refused', { skip, timeout: 20_000 }, async () => {
  await lock('bot');
  const first = await ceremony(rig, ['agent', 'unlock', 'bot']);
  let captured: string | null = null;
  const onRequest = (req: { method(): string; url(): string; postData(): string | null }) => {
    if (req.method() === 'POST' && req.url().endsWith('/result')) captured = req.postData();
  };
  keyA.page.on('request', onRequest);
  const r = await runInBrowser(keyA, first);
  keyA.page.off('request', onRequest);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(captured !== null);
  await lock('bot');
  const second = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const verdict = await postResult(second, JSON.parse(captured) as unknown);
  assert.equal(verdict.ok, false);
  await assertUnlockRefused(second, 'bot', /challenge/);
});

test('an expired challenge is refused', { skip, timeout: 20_000 }, async () => {
  clock.set(2000);
  await lock('bot');
  const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
  clock.set(2000 + 5 * 60 + 5);
  await runInBrowser(keyA, c);
  await assertUnlockRefused(c, 'bot', /expired/);
});

test('a challenge issued for another agent is refused', { skip, timeout: 20_000 }, async () => {
  await lock('other');
  const forOther = await ceremony(rig, ['agent', 'unlock', 'other']);
  const forBot = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const options = await pageOptions(forOther);
  await blankAt(keyA, `${forBot.origin}/blank`);
  const signed = await assertIn(keyA, options);
  assert.equal((await postResult(forBot, signed)).ok, false);
  await assertUnlockRefused(forBot, 'bot', /challenge/);
  forOther.kill();
  assert.equal(await state('other'), 'locked');
});

test('an assertion made on another origin is refused', { skip, timeout: 20_000 }, async () => {
  const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const port = Number(new URL(c.origin).port);
  const signed = await signFor(keyA, c, `http://localhost:${port === 65535 ? 1 : port + 1}`);
  assert.equal((await postResult(c, signed)).ok, false);
  await assertUnlockRefused(c, 'bot', /origin/);
});

test('an assertion without user presence is refused', { skip, timeout: 20_000 }, async () => {
  const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const real = (await signFor(keyA, c)) as {
    credential: { rawId: string; response: Record<string, string> };
  };
  // What a key that signs without a touch would send: UP cleared, signed by the real key.
  const cred = (await credentials(keyA))[0];
  assert.ok(cred !== undefined);
  const res = real.credential.response;
  const authData = Buffer.from(res.authenticatorData ?? '', 'base64url');
  authData[32] = (authData[32] ?? 0) & ~0x01;
  const clientHash = createHash('sha256')
    .update(Buffer.from(res.clientDataJSON ?? '', 'base64url'))
    .digest();
  const signature = sign('sha256', Buffer.concat([authData, clientHash]), {
    key: Buffer.from(cred.privateKey, 'base64'),
    format: 'der',
    type: 'pkcs8',
  });
  const forged = {
    credential: {
      ...real.credential,
      response: {
        ...res,
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
      },
    },
  };
  assert.equal((await postResult(c, forged)).ok, false);
  await assertUnlockRefused(c, 'bot', /presence/);
});

test('a credential that was never enrolled is refused', { skip, timeout: 20_000 }, async () => {
  const stranger = await browser.authenticator();
  const id = await addStranger(stranger);
  const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const options = await pageOptions(c);
  await blankAt(stranger, `${c.origin}/blank`);
  const signed = await assertIn(stranger, {
    ...options,
    allowCredentials: [{ type: 'public-key', id }],
  });
  assert.equal((await postResult(c, signed)).ok, false);
  await assertUnlockRefused(c, 'bot', /not an enrolled key/);
});

test(
  'a counter that does not increase is refused as a possible clone',
  { skip, timeout: 20_000 },
  async () => {
    const cred = (await credentials(keyA))[0];
    assert.ok(cred !== undefined && cred.signCount > 1);
    await setSignCount(keyA, cred, 0);
    try {
      const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
      await runInBrowser(keyA, c);
      await assertUnlockRefused(c, 'bot', /counter/, 'VLT-4008');
    } finally {
      await setSignCount(keyA, cred, cred.signCount + 100);
    }
  },
);

test(
  'a challenge bound to an earlier lockdown is refused once the agent is locked again',
  { skip, timeout: 20_000 },
  async () => {
    assert.equal(await state('bot'), 'locked');
    const earlier = await ceremony(rig, ['agent', 'unlock', 'bot']);
    const r = await runInBrowser(keyA, await ceremony(rig, ['agent', 'unlock', 'bot']));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(ok(await rig.agent(['get', 'e1'], botToken)), 'value of e1\n');
    await lock('bot');
    // A fresh, genuine assertion over the earlier challenge, on its own page:
    // only the lockdown it was issued for differs.
    const signed = await signFor(keyA, earlier);
    assert.equal((await postResult(earlier, signed)).ok, false);
    await assertUnlockRefused(earlier, 'bot', /^not this lockdown$/);
    assertRefused(await rig.agent(['get', 'e1'], botToken), 'VLT-2043');
  },
);

test('a removed key no longer unlocks', { skip, timeout: 20_000 }, async () => {
  const keys = JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))) as {
    name: string;
    credentialId: string;
  }[];
  const spare = keys.find((k) => k.name === 'spare');
  assert.ok(spare !== undefined);
  ok(await rig.owner(['key', 'rm', 'spare']));
  const removed = await lastAudit();
  assert.deepEqual(
    [removed.action, removed.entry, removed.outcome, removed.actor],
    ['key_rm', 'spare', 'ok', 'owner'],
  );
  assertRefused(await rig.owner(['key', 'rm', 'spare']), 'VLT-4005');
  assert.equal((await lastAudit()).seq, removed.seq, 'a refused removal writes no key_rm');
  const c = await ceremony(rig, ['agent', 'unlock', 'bot']);
  const options = await pageOptions(c);
  assert.deepEqual(
    options.allowCredentials.map((d) => d.id),
    keys.filter((k) => k.name !== 'spare').map((k) => k.credentialId),
  );
  await blankAt(keyB, `${c.origin}/blank`);
  const signed = await assertIn(keyB, {
    ...options,
    allowCredentials: [{ type: 'public-key', id: spare.credentialId }],
  });
  assert.equal((await postResult(c, signed)).ok, false);
  await assertUnlockRefused(c, 'bot', /not an enrolled key/);
  // And the remaining key still works.
  const r = await runInBrowser(keyA, await ceremony(rig, ['agent', 'unlock', 'bot']));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(ok(await rig.agent(['get', 'e2'], botToken)), 'value of e2\n');
});
