// Who may lift a lockdown (issue 24): only the owner, with the passphrase and
// then an enrolled hardware key. Real `vault-cli` processes and host, the
// ceremony page in headless Chromium with DevTools virtual authenticators, a
// software key on the host's socket; nothing stubbed.
//
// Each test is a finding reproduced: the locked agent started the unlock
// itself; the passphrase alone enrolled a new key that lifted the lock; the
// signed challenge did not name the agent; the page could not be forwarded.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { call } from '../../src/client/client.js';
import type { ClientOptions } from '../../src/client/options.js';
import { VaultError } from '../../src/core/errors.js';
import { assertRefused, auditRecords, type AuditLine } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import { SoftKey } from '../support/soft-key.js';
import {
  BrowserRig,
  addStranger,
  assertIn,
  blankAt,
  ceremony,
  enrolVouched,
  pageOptions,
  postResult,
  runInBrowser,
  skipChromium as skip,
  type Authenticator,
  type Ceremony,
} from '../support/webauthn.js';

const rig = new Rig();
const client: ClientOptions = {
  vaultDir: rig.vaultDir,
  daemon: { node: process.execPath, script: CLI, env: rig.env },
};
let browser: BrowserRig;
/** The owner's enrolled key, key-1. */
let owned: Authenticator;
let token = '';
let recoveryKey = '';

before(async () => {
  if (skip) return;
  recoveryKey = (await rig.create()).trim();
  await rig.set('e1', 'value of e1');
  token = await rig.addAgent('claude', ['e1']);
  await rig.addAgent('other', ['e1']);
  browser = await BrowserRig.launch();
  owned = await browser.authenticator();
  const first = await runInBrowser(owned, await ceremony(rig, ['key', 'add']));
  assert.equal(first.code, 0, first.stderr);
});
after(async () => {
  if (!skip) await browser.close();
  await rig.dispose();
});

async function state(agent: string): Promise<string> {
  return (JSON.parse(ok(await rig.owner(['agent', 'show', agent, '--json']))) as { state: string })
    .state;
}

async function lock(agent: string): Promise<void> {
  if ((await state(agent)) !== 'locked') ok(await rig.owner(['agent', 'lock', agent]));
}

async function keyNames(): Promise<string[]> {
  return (JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))) as { name: string }[]).map(
    (k) => k.name,
  );
}

async function auditSince(seq: number): Promise<AuditLine[]> {
  return (await auditRecords(rig)).filter((r) => r.seq > seq);
}

async function lastSeq(): Promise<number> {
  return (await auditRecords(rig)).at(-1)?.seq ?? 0;
}

/** A port of 127.0.0.1 nothing listens on just now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The challenge a ceremony page carries, as bytes. */
async function challengeOf(c: Ceremony): Promise<Buffer> {
  return Buffer.from((await pageOptions(c)).challenge, 'base64url');
}

test('the first key needs only the passphrase, and says so in the audit', { skip }, async () => {
  const adds = (await auditRecords(rig)).filter((r) => r.action === 'key_add');
  assert.deepEqual(
    adds.map((r) => [r.entry, r.outcome, r.subject]),
    [['key-1', 'ok', null]],
  );
});

test(
  'the locked agent cannot start its own unlock: no page, refused on the socket, still locked',
  { skip, timeout: 60_000 },
  async () => {
    await lock('claude');
    const from = await lastSeq();
    // The agent's own command: it holds a token and no passphrase. It used to print a
    // page for the owner to touch; now it stops before any page is served.
    const r = await rig.agent(['agent', 'unlock', 'claude', '--no-browser'], token);
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stderr, /open http:\/\/localhost:/);
    // Straight to the host: begin and finish are owner operations.
    for (const [op, body] of [
      ['unlock.begin', { name: 'claude', origin: 'http://localhost:4242' }],
      ['unlock.finish', { challengeId: '0'.repeat(32), result: { error: 'NotAllowedError' } }],
    ] as const) {
      await assert.rejects(
        call(client, op, body as never),
        // No passphrase and no owner session for the caller's terminal.
        (err) => err instanceof VaultError && err.code === 'VLT-2054',
        op,
      );
    }
    await assert.rejects(
      call(client, 'unlock.begin', {
        passphrase: 'not the passphrase',
        name: 'claude',
        origin: 'http://localhost:4242',
      }),
      (err) => err instanceof VaultError && err.code === 'VLT-3002',
    );
    assert.equal(await state('claude'), 'locked');
    assertRefused(await rig.agent(['get', 'e1'], token), 'VLT-2043');
    const since = await auditSince(from);
    assert.deepEqual(
      since.filter((x) => x.action === 'unlocked'),
      [],
    );
  },
);

test(
  'the page and the signed challenge name the agent it unlocks',
  { skip, timeout: 60_000 },
  async () => {
    await lock('claude');
    await lock('other');
    // One origin for all three (a fixed --port): only the agent differs.
    const port = await freePort();
    const at = ['--port', String(port)];
    const seen: { agent: string; title: string; challenge: Buffer }[] = [];
    for (const agent of ['claude', 'claude', 'other']) {
      const c = await ceremony(rig, ['agent', 'unlock', agent, ...at]);
      assert.equal(c.origin, `http://localhost:${port}`);
      const html = await (await fetch(c.url)).text();
      const title = /<h1>(.*)<\/h1>/.exec(html)?.[1] ?? '';
      seen.push({ agent, title, challenge: await challengeOf(c) });
      assert.equal((await postResult(c, { error: 'NotAllowedError' })).ok, false);
      const r = await c.done;
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /VLT-4007/);
    }
    for (const s of seen) assert.match(s.title, new RegExp(`^Unlock agent ${s.agent} \\(id `));
    const [a, b, o] = seen.map((s) => s.challenge);
    assert.ok(a !== undefined && b !== undefined && o !== undefined);
    // Random bytes, then what the challenge is for: the same agent and lockdown, the
    // same tail; another agent, another tail. A signature over it names the agent.
    assert.equal(a.length, 48);
    assert.notDeepEqual(a.subarray(0, 16), b.subarray(0, 16));
    assert.deepEqual(a.subarray(16), b.subarray(16));
    assert.notDeepEqual(a.subarray(16), o.subarray(16));
  },
);

test(
  'the passphrase alone does not enrol a second key: an enrolled key must vouch',
  { skip, timeout: 60_000 },
  async () => {
    await lock('claude');
    const before = await keyNames();
    const from = await lastSeq();

    // The finding: `key add` with the passphrase and a brand-new authenticator. The
    // first page now asks for an enrolled key, and a stranger's signature is refused.
    const intruder = await browser.authenticator();
    const stranger = await addStranger(intruder);
    const c = await ceremony(rig, ['key', 'add', '--name', 'intruder']);
    const options = await pageOptions(c);
    assert.deepEqual(
      options.allowCredentials.map((d) => d.id),
      JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))).map(
        (k: { credentialId: string }) => k.credentialId,
      ),
      'the first page is for an enrolled key',
    );
    await blankAt(intruder, `${c.origin}/blank`);
    const signed = await assertIn(intruder, {
      ...options,
      allowCredentials: [{ type: 'public-key', id: stranger }],
    });
    assert.equal((await postResult(c, signed)).ok, false);
    const r = await c.done;
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /VLT-4007/);
    assert.equal(r.stderr.match(/open http:/g)?.length, 1, 'no page to create a key');

    // A software key on the socket, with the passphrase: begin hands out a vouch,
    // and a registration signed over it is no enrolment.
    const soft = new SoftKey('http://localhost:4242');
    const begun = await call(client, 'key.begin', {
      passphrase: PASSPHRASE,
      name: 'soft',
      origin: 'http://localhost:4242',
    });
    assert.ok('vouch' in begun, 'a vouch is asked first');
    await assert.rejects(
      call(client, 'key.finish', {
        passphrase: PASSPHRASE,
        challengeId: begun.challengeId,
        result: { credential: soft.registration(begun.vouch.challenge) },
      }),
      (err) => err instanceof VaultError && err.code === 'VLT-4007',
    );
    await assert.rejects(
      call(client, 'key.vouch', {
        passphrase: PASSPHRASE,
        challengeId: begun.challengeId,
        result: {
          credential: SoftKey.assertionJSON(soft.id, soft.assertionParts(begun.vouch.challenge)),
        },
      }),
      (err) => err instanceof VaultError && err.code === 'VLT-4007',
    );

    assert.deepEqual(await keyNames(), before);
    assert.equal(await state('claude'), 'locked');
    const refused = (await auditSince(from)).filter((x) => x.action === 'key_add');
    assert.ok(refused.length >= 3);
    assert.ok(refused.every((x) => x.outcome === 'VLT-4007'));
    assert.ok(refused.some((x) => /not an enrolled key/.test(x.field ?? '')));

    // The owner's way: key-1 confirms, the new key is enrolled, audited as vouched.
    const spare = await browser.authenticator();
    const done = await enrolVouched(
      owned,
      spare,
      await ceremony(rig, ['key', 'add', '--name', 'spare']),
    );
    assert.equal(done.code, 0, done.stderr);
    const added = (await auditRecords(rig)).at(-1);
    assert.deepEqual(
      [added?.action, added?.entry, added?.outcome, added?.subject],
      ['key_add', 'spare', 'ok', 'vouched by key-1'],
    );
  },
);

test(
  'a lost key: the recovery key vouches for a new one instead, audited as such',
  { skip, timeout: 60_000 },
  async () => {
    const before = await keyNames();
    // A wrong recovery key: refused before any page.
    const wrong = await rig.owner(['key', 'add', '--recovery', '--no-browser'], {
      input: 'vault-recovery-not-it\n',
    });
    assertRefused(wrong, 'VLT-3002');
    assert.doesNotMatch(wrong.stderr, /open http:/);

    const fresh = await browser.authenticator();
    const c = await ceremony(rig, ['key', 'add', '--recovery', '--name', 'replacement'], {
      input: recoveryKey + '\n',
    });
    const r = await runInBrowser(fresh, c);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await keyNames(), [...before, 'replacement']);
    const added = (await auditRecords(rig)).at(-1);
    assert.deepEqual(
      [added?.action, added?.entry, added?.subject],
      ['key_add', 'replacement', 'vouched by recovery key'],
    );
    // And that key lifts a lock.
    await lock('claude');
    const u = await runInBrowser(fresh, await ceremony(rig, ['agent', 'unlock', 'claude']));
    assert.equal(u.code, 0, u.stderr);
    const unlocked = (await auditRecords(rig)).at(-1);
    assert.deepEqual(
      [unlocked?.action, unlocked?.entry, unlocked?.subject],
      ['unlocked', 'replacement', 'claude'],
    );
  },
);

test(
  '--port: the page on a fixed port (for ssh -L), and a taken port is refused',
  { skip, timeout: 60_000 },
  async () => {
    await lock('claude');
    const port = await freePort();
    const c = await ceremony(rig, ['agent', 'unlock', 'claude', '--port', String(port)]);
    assert.equal(new URL(c.url).port, String(port));
    const r = await runInBrowser(owned, c);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(ok(await rig.agent(['get', 'e1'], token)), 'value of e1\n');

    await lock('claude');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const busy = (taken.address() as AddressInfo).port;
      const refused = await rig.owner([
        'agent',
        'unlock',
        'claude',
        '--no-browser',
        '--port',
        String(busy),
      ]);
      assertRefused(refused, 'VLT-1002');
    } finally {
      taken.close();
    }
    assert.equal(await state('claude'), 'locked');
  },
);
