// Key enrolment from the dashboard: the real <Dashboard> (ink-testing-library)
// over hostDashboardApi and a real vault host; `e` runs the `key add`
// ceremony, completed in headless Chromium with DevTools virtual
// authenticators at the URL the panel shows. The first key needs only the
// owner's session; the second is confirmed by the first. Nothing stubbed.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import type { ClientOptions } from '../../src/client/options.js';
import { Dashboard } from '../../tui/app.js';
import { hostDashboardApi } from '../../tui/host-api.js';
import { CLI, PASSPHRASE, Rig, ok } from '../support/rig.js';
import { BrowserRig, skipChromium as skip, type Authenticator } from '../support/webauthn.js';

const rig = new Rig();
const client: ClientOptions = {
  vaultDir: rig.vaultDir,
  daemon: { node: process.execPath, script: CLI, env: rig.env },
};
const api = hostDashboardApi(client, PASSPHRASE, { timeoutMs: 20_000 });
let browser: BrowserRig;

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.addAgent('standing', []);
  browser = await BrowserRig.launch();
});
after(async () => {
  if (!skip) await browser.close();
  await rig.dispose();
});
afterEach(() => cleanup());

const strip = (s: string | undefined) => (s ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
/** The frame with the panel's lines joined: a long URL may wrap. */
const flat = (s: string | undefined) => strip(s).replace(/[│\s]+/g, ' ');

async function until(ok: () => boolean, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const URL = /Open (http:\/\/localhost:\d+\/[0-9a-f]+)/;

async function touch(key: Authenticator, url: string): Promise<void> {
  await key.page.bringToFront();
  await key.page.goto(url);
}

const keys = async () =>
  (JSON.parse(ok(await rig.owner(['key', 'ls', '--json']))) as { name: string }[]).length;

test(
  'e enrols a hardware key from the dashboard; a second one is confirmed by the first',
  { skip, timeout: 90_000 },
  async () => {
    const keyA = await browser.authenticator();
    const keyB = await browser.authenticator();
    const { lastFrame, stdin } = render(<Dashboard api={api} now={Date.now} onLeave={() => {}} />);
    await until(() => strip(lastFrame()).includes('standing'), 'the agents');
    stdin.write('?');
    await until(() => strip(lastFrame()).includes('enrol a hardware key or passkey'), 'help');
    stdin.write(' ');
    await until(() => !strip(lastFrame()).includes('Keys (any key closes this)'), 'help closed');

    stdin.write('e');
    await until(() => URL.test(flat(lastFrame())), 'the first page');
    assert.match(flat(lastFrame()), /Enrol a hardware key/);
    await touch(keyA, URL.exec(flat(lastFrame()))?.[1] as string);
    await until(() => flat(lastFrame()).includes('is enrolled'), 'the first key enrolled');
    assert.equal(await keys(), 1);

    stdin.write('\x1b');
    await until(() => !flat(lastFrame()).includes('Enrol a hardware key'), 'the panel closed');
    stdin.write('e');
    await until(() => URL.test(flat(lastFrame())), 'the confirmation page');
    const vouch = URL.exec(flat(lastFrame()))?.[1] as string;
    await touch(keyA, vouch);
    await until(
      () => URL.test(flat(lastFrame())) && URL.exec(flat(lastFrame()))?.[1] !== vouch,
      'the new key’s page',
    );
    await touch(keyB, URL.exec(flat(lastFrame()))?.[1] as string);
    await until(
      () => /Enrolled \S+; `vault-cli key add`/.test(flat(lastFrame())),
      'the second key',
    );
    assert.equal(await keys(), 2);
  },
);
