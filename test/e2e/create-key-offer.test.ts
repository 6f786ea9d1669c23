// `vault create` and hardware keys: on a terminal it says that lifting a lock
// needs an enrolled key and offers to enrol one at once (the real ceremony,
// headless Chromium with a virtual authenticator); a scripted create asks
// nothing and never waits.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { underPty, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';
import { BrowserRig, skipChromium } from '../support/webauthn.js';

const PROMPTED = { VAULT_PASSPHRASE_FILE: undefined, VAULT_TOKEN: undefined };
const OFFER = 'Enrol a hardware key now? [y/N] ';
const rigs: Rig[] = [];
after(async () => {
  for (const r of rigs) await r.dispose();
});

function fresh(): Rig {
  const r = new Rig();
  rigs.push(r);
  return r;
}

async function typeAt(run: PtyRun, prompt: string, text: string): Promise<void> {
  await until(() => run.output().includes(prompt), JSON.stringify(prompt));
  for (const key of text) run.pty.write(key);
  run.pty.write('\r');
}

/** `vault create` on a pty with the passphrase typed twice. */
async function createTyped(rig: Rig): Promise<PtyRun> {
  const run = underPty(rig, ['vault', 'create'], PROMPTED);
  await typeAt(run, 'Vault passphrase: ', PASSPHRASE);
  await typeAt(run, 'Vault passphrase (again): ', PASSPHRASE);
  return run;
}

const keys = async (rig: Rig) =>
  (JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))) as { name: string }[]).map(
    (k) => k.name,
  );

test('a scripted create (no terminal) says nothing of keys and asks nothing', async () => {
  const rig = fresh();
  const r = await rig.owner(['vault', 'create']);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /hardware key|Enrol/);
});

test('on a terminal with a passphrase file: told why and how, never asked', async () => {
  const rig = fresh();
  const run = underPty(rig, ['vault', 'create'], { VAULT_TOKEN: undefined });
  const done = await run.exited;
  assert.equal(done.exitCode, 0, done.output);
  assert.match(done.output, /only an enrolled hardware key lifts the lock/);
  assert.match(done.output, /platform passkey/);
  assert.match(done.output, /vault-cli key add/);
  assert.ok(!done.output.includes(OFFER), done.output);
});

test('on a terminal, declined: told why, and the command for later', async () => {
  const rig = fresh();
  const run = await createTyped(rig);
  await typeAt(run, OFFER, 'n');
  const done = await run.exited;
  assert.equal(done.exitCode, 0, done.output);
  assert.match(done.output, /only an enrolled hardware key lifts the lock/);
  assert.match(done.output, /enrol one later with `vault-cli key add`/);
  assert.deepEqual(await keys(rig), []);
});

test(
  'on a terminal, accepted: the ceremony runs and the key is enrolled',
  { skip: skipChromium },
  async () => {
    const rig = fresh();
    const browser = await BrowserRig.launch();
    try {
      const key = await browser.authenticator();
      const run = await createTyped(rig);
      await typeAt(run, OFFER, 'y');
      const URL_LINE = /open (http:\/\/localhost:\d+\/[0-9a-f]+) in a browser/;
      await until(() => URL_LINE.test(run.output()), 'the ceremony page');
      const url = URL_LINE.exec(run.output())?.[1] as string;
      await key.page.bringToFront();
      await key.page.goto(url);
      const done = await run.exited;
      assert.equal(done.exitCode, 0, done.output);
      assert.match(done.output, /enrolled hardware key \S+; enrol a spare/);
      assert.equal((await keys(rig)).length, 1);
    } finally {
      await browser.close();
    }
  },
);
