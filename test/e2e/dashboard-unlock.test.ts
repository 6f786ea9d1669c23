// The dashboard's unlock end to end: hostDashboardApi (tui/host-api.ts) against
// a real vault host, its unlock ceremony completed in headless Chromium with a
// DevTools virtual authenticator at the URL the api reports, then the agent
// reads again through a real `vault-cli get`. Nothing stubbed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClientOptions } from '../../src/client/options.js';
import { VaultError } from '../../src/core/errors.js';
import { hostDashboardApi } from '../../tui/host-api.js';
import { assertRefused } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import {
  BrowserRig,
  ceremony,
  runInBrowser,
  skipChromium as skip,
  type Authenticator,
} from '../support/webauthn.js';

const rig = new Rig();
const client: ClientOptions = {
  vaultDir: rig.vaultDir,
  daemon: { node: process.execPath, script: CLI, env: rig.env },
};
/** Every URL the api hands to its opener (the dashboard's `onUrl` hook: open a browser). */
const opened: string[] = [];
const api = hostDashboardApi(client, PASSPHRASE, {
  onUrl: (url) => opened.push(url),
  timeoutMs: 15_000,
});
let browser: BrowserRig;
let key: Authenticator;
let token = '';

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('e1', 'value of e1');
  token = await rig.addAgent('bot', ['e1']);
  browser = await BrowserRig.launch();
  key = await browser.authenticator();
  const enrolled = await runInBrowser(key, await ceremony(rig, ['key', 'add']));
  assert.equal(enrolled.code, 0, enrolled.stderr);
});
after(async () => {
  if (!skip) await browser.close();
  await rig.dispose();
});

async function botState(): Promise<string | undefined> {
  return (await api.agents()).find((a) => a.name === 'bot')?.state;
}

test(
  'the dashboard unlock: refused when the page reports a failure, then lifted by the key',
  { skip, timeout: 30_000 },
  async () => {
    ok(await rig.owner(['agent', 'lock', 'bot']));
    assert.equal(await botState(), 'locked');
    assertRefused(await rig.agent(['get', 'e1'], token), 'VLT-2043');

    // The browser gives up (as a cancelled prompt would): refused, still locked.
    const shown: string[] = [];
    const cancelled = api.unlock('bot', (url) => {
      shown.push(url);
      void fetch(url + '/result', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'NotAllowedError' }),
      });
    });
    await assert.rejects(cancelled, (err) => err instanceof VaultError && err.code === 'VLT-4007');
    assert.equal(await botState(), 'locked');

    // The key answers at the URL the api reports, in the browser.
    let reported: (url: string) => void = () => {};
    const url = new Promise<string>((resolve) => (reported = resolve));
    const unlocked = api.unlock('bot', (u) => {
      shown.push(u);
      reported(u);
    });
    const at = await url;
    assert.match(at, /^http:\/\/localhost:[0-9]+\/[0-9a-f]{32}$/);
    await key.page.bringToFront();
    await key.page.goto(at);
    assert.equal(await unlocked, 'unlocked');
    // A string: the test's tsconfig has no DOM types, and it runs in the page.
    await key.page.waitForFunction("document.title === 'vault-cli: done'");

    assert.deepEqual(opened, shown, 'the opener hook saw the same URLs as the dashboard');
    assert.equal(shown.length, 2);
    assert.notEqual(await botState(), 'locked');
    assert.equal(ok(await rig.agent(['get', 'e1'], token)), 'value of e1\n');
    const audit = await api.recentAudit(20);
    const lifted = audit.filter((r) => r.action === 'unlocked');
    assert.equal(lifted.length, 1);
    assert.equal(lifted[0]?.subject, 'bot');
    const failed = audit.filter((r) => r.action === 'unlock_failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.field, 'browser: NotAllowedError');

    // Nothing left to unlock: said so, and no page is served.
    assert.equal(
      await api.unlock('bot', () => assert.fail('no page when not locked')),
      'not-locked',
    );
  },
);
