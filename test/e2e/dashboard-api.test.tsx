// The dashboard over a real vault host: hostDashboardApi against the built
// CLI's host, agents reading through real `vault-cli get` processes, and the
// real <Dashboard> rendered (ink-testing-library) over that api, typed at one
// key at a time. Waits are for conditions, with a deadline; nothing is timed.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, afterEach, before, test } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import type { ClientOptions } from '../../src/client/options.js';
import { VaultError } from '../../src/core/errors.js';
import type { AuditView, DashboardApi } from '../../tui/api.js';
import { Dashboard } from '../../tui/app.js';
import { hostDashboardApi } from '../../tui/host-api.js';
import { showDashboard } from '../../tui/index.js';
import { hex } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { CLI, PASSPHRASE, Rig } from '../support/rig.js';

const rig = new Rig();
const client: ClientOptions = {
  vaultDir: rig.vaultDir,
  daemon: { node: process.execPath, script: CLI, env: rig.env },
};
const api = hostDashboardApi(client, PASSPHRASE);
const entries = Array.from({ length: 8 }, (_, i) => `e${i + 1}`);

before(async () => {
  await rig.create();
  for (const e of entries) await rig.set(e, `value of ${e}`);
  // Always there, so each test stands alone: the dashboards below wait for its row.
  await rig.addAgent('standing', ['e1']);
});
after(() => rig.dispose());
afterEach(() => cleanup());

// Colour out: assertions read what a user without colour reads.
const strip = (s: string | undefined) => (s ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

/** Waits until `ok` holds, polling; fails after `ms`. Never a fixed sleep. */
async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Open Unix-socket and pipe handles of this process (the feed's connection is one). */
const pipes = () => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;

async function get(entry: string, token: string) {
  return rig.agent(['get', entry], token);
}

test('agents() reports an agent read in its minute and hour', async () => {
  const token = await rig.addAgent('reader', ['e1', 'e2']);
  const before = (await api.agents()).find((a) => a.name === 'reader');
  assert.deepEqual(before?.usage, { minute: 0, hour: 0 });
  assert.equal(before?.valuesLeft, 600);
  assert.equal((await get('e1', token)).stdout, 'value of e1\n');
  const after = (await api.agents()).find((a) => a.name === 'reader');
  assert.equal(after?.state, 'active');
  assert.deepEqual(after?.usage, { minute: 1, hour: 1 });
  // Values are refilled ten a second: the one released may be back already.
  assert.ok((after?.valuesLeft ?? 0) >= 599);
  assert.deepEqual(after?.limits, { perMinute: 3, perHour: 10 });
});

test('followAudit delivers a read as it is committed, and stops with no socket left', async () => {
  const token = await rig.addAgent('followed', ['e2']);
  await api.recentAudit(10);
  const idle = pipes();
  const seen: AuditView[] = [];
  const errors: Error[] = [];
  const stop = api.followAudit(
    (r) => seen.push(r),
    (e) => errors.push(e),
  );
  await until(() => pipes() > idle, 'the feed to connect');
  assert.equal((await get('e2', token)).code, 0);
  await until(() => seen.some((r) => r.actor === 'cli:followed'), 'the read in the feed');
  const read = seen.find((r) => r.actor === 'cli:followed');
  assert.equal(read?.action, 'ai_read');
  assert.equal(read?.entry, 'e2');
  assert.equal(read?.outcome, 'ok');
  assert.ok(!JSON.stringify(seen).includes('value of e2'), 'a record never holds a value');
  stop();
  await until(() => pipes() === idle, 'the feed socket to close');
  const count = seen.length;
  assert.equal((await get('e2', token)).code, 0);
  // The host has committed the second read when `get` returns; a stopped feed hears nothing.
  assert.equal(seen.length, count);
  assert.deepEqual(errors, []);
});

test('setField rotates: the agent gets the new value on its next read', async () => {
  const token = await rig.addAgent('rotated', ['e3']);
  assert.equal((await get('e3', token)).stdout, 'value of e3\n');
  const { version } = await api.setField('e3', 'password', 'rotated value 3');
  assert.equal(version, 2);
  assert.equal((await get('e3', token)).stdout, 'rotated value 3\n');
  const e3 = (await api.entries()).find((e) => e.name === 'e3');
  assert.deepEqual(
    e3?.fields.map((f) => [f.name, f.version]),
    [['password', 2]],
  );
});

test('addAgent, changeScope, changeLimits and revokeAgent take effect', async () => {
  const { token } = await api.addAgent('made', 'script', ['e4'], { perMinute: 5, perHour: 20 });
  assert.equal((await get('e4', token)).stdout, 'value of e4\n');
  assert.match((await get('e5', token)).stderr, /^vault-cli: VLT-2041: /);
  await api.changeScope('made', ['e5'], ['e4']);
  assert.equal((await get('e5', token)).stdout, 'value of e5\n');
  assert.match((await get('e4', token)).stderr, /^vault-cli: VLT-2041: /);
  await api.changeLimits('made', 7);
  const made = (await api.agents()).find((a) => a.name === 'made');
  assert.equal(made?.kind, 'script');
  assert.deepEqual(made?.limits, { perMinute: 7, perHour: 20 });
  assert.deepEqual(made?.scope, ['e5']);
  await api.revokeAgent('made');
  assert.match((await get('e5', token)).stderr, /^vault-cli: VLT-2040: /);
});

test('removeEntry removes; unlock of an agent that is not locked says so', async () => {
  await api.setField('gone', 'password', 'x');
  assert.ok((await api.entries()).some((e) => e.name === 'gone'));
  await api.removeEntry('gone');
  assert.ok(!(await api.entries()).some((e) => e.name === 'gone'));
  const urls: string[] = [];
  assert.equal(await api.unlock('standing', (u) => urls.push(u)), 'not-locked');
});

test('api errors are VaultErrors with their code', async () => {
  const wrong = hostDashboardApi(client, 'not the passphrase');
  await assert.rejects(
    wrong.agents(),
    (e: unknown) => e instanceof VaultError && e.code === 'VLT-3002',
  );
  await assert.rejects(
    api.revokeAgent('nobody'),
    (e: unknown) => e instanceof VaultError && e.code === 'VLT-4002',
  );
});

test('the dashboard shows an error as its VLT line and keeps running', async () => {
  const wrong = hostDashboardApi(client, 'not the passphrase');
  const { lastFrame, stdin } = render(<Dashboard api={wrong} now={Date.now} onLeave={() => {}} />);
  await until(
    () => strip(lastFrame()).includes('vault-cli: VLT-3002: Wrong passphrase.'),
    'the error line',
  );
  stdin.write('\t');
  await until(() => strip(lastFrame()).includes('[Entries]'), 'the app to still take keys');
});

test('the dashboard over the real host: a rotation typed in it reaches the agent, and no frame shows it', async () => {
  const token = await rig.addAgent('ui-rotated', ['e6']);
  const sentinel = `S3NT-${hex(6)}`;
  let left = false;
  const { lastFrame, stdin, frames } = render(
    <Dashboard api={api} now={Date.now} onLeave={() => (left = true)} />,
  );
  await until(() => strip(lastFrame()).includes('ui-rotated'), 'the agents');
  stdin.write('\t');
  await until(() => /> e1 /.test(strip(lastFrame())), 'the entries view');
  for (let i = 0; i < 5; i++) stdin.write('j');
  await until(() => /> e6 /.test(strip(lastFrame())), 'e6 selected');
  stdin.write('r');
  await until(() => strip(lastFrame()).includes('Rotate a field of e6'), 'the rotate form');
  let n = 0;
  for (const c of sentinel) {
    stdin.write(c);
    n++;
    await until(() => strip(lastFrame()).includes(`(hidden, ${n} char`), `${n} chars`);
  }
  stdin.write('\r');
  await until(
    () => strip(lastFrame()).includes('Set e6 field password (version 2)'),
    'the rotation',
  );
  assert.equal((await get('e6', token)).stdout, `${sentinel}\n`);
  stdin.write('\t');
  await until(() => strip(lastFrame()).includes('[Audit]'), 'the audit view');
  await until(
    () => /rotate\s+e6\/password\s+owner/.test(strip(lastFrame())),
    'the rotation in the feed',
  );
  for (const frame of frames) assert.ok(!frame.includes(sentinel), 'a frame shows the value');
  stdin.write('q');
  await until(() => left, 'leaving');
});

/** A terminal as the CLI hands one over: raw mode, size, and the bytes written to it. */
function fakeTerminal() {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    isRaw: true,
    setRawMode(raw: boolean) {
      this.isRaw = raw;
      return this;
    },
    ref() {},
    unref() {},
  });
  const written: string[] = [];
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24 });
  stdout.on('data', (c: Buffer) => written.push(c.toString('utf8')));
  return { stdin, stdout, written: () => written.join('') };
}

const listeners = (s: NodeJS.EventEmitter) =>
  s
    .eventNames()
    .map((n) => `${String(n)}:${s.listenerCount(n)}`)
    .sort()
    .join(',');

for (const [how, key] of [
  ['q', 'q'],
  ['Ctrl-]', '\x1d'],
] as const) {
  test(`showDashboard: ${how} leaves the alternate screen with raw mode and listeners as they were`, async () => {
    const t = fakeTerminal();
    const before = { stdin: listeners(t.stdin), stdout: listeners(t.stdout), pipes: pipes() };
    const shown = showDashboard({ api, stdin: t.stdin, stdout: t.stdout });
    await until(() => strip(t.written()).includes('standing'), 'the dashboard drawn');
    assert.ok(t.written().includes('\x1b[?1049h'), 'entered the alternate screen');
    t.stdin.write(key);
    await shown;
    assert.ok(
      t.written().lastIndexOf('\x1b[?1049l') > t.written().lastIndexOf('\x1b[?1049h'),
      'left it',
    );
    assert.equal(t.stdin.isRaw, true, 'raw mode as it was handed over');
    assert.equal(listeners(t.stdin), before.stdin);
    assert.equal(listeners(t.stdout), before.stdout);
    await until(() => pipes() <= before.pipes, 'the feed socket closed');
  });
}

test('showDashboard: a host key in leaveKeys and an aborted signal leave too, and it shows again on the same terminal', async () => {
  const t = fakeTerminal();
  const shown = showDashboard({ api, stdin: t.stdin, stdout: t.stdout, leaveKeys: ['\x07'] });
  await until(() => strip(t.written()).includes('standing'), 'the dashboard drawn');
  t.stdin.write('\x07');
  await shown;
  // run's Ctrl-] toggles: the same terminal gets the dashboard again.
  const from = t.written().length;
  const stop = new AbortController();
  const again = showDashboard({ api, stdin: t.stdin, stdout: t.stdout, signal: stop.signal });
  await until(() => strip(t.written().slice(from)).includes('standing'), 'drawn again');
  stop.abort();
  await again;
  assert.ok(t.written().slice(from).includes('\x1b[?1049l'));
});

// --- lockdown, on a host whose clock the test moves ---------------------------

const skip = LIBFAKETIME === null ? 'needs Debian faketime (.ci/run installs it)' : false;

test(
  'the dashboard shows reads, a violation, then the agent locked, and the unlock error',
  { skip },
  async () => {
    const locked = new Rig();
    const clock = new FakeClock(locked);
    try {
      await clock.start();
      await locked.create();
      for (const e of entries) await locked.set(e, `value of ${e}`);
      const token = await locked.addAgent('greedy', entries);
      const lapi: DashboardApi = hostDashboardApi(
        {
          vaultDir: locked.vaultDir,
          // The host runs under libfaketime, from the clock's test build: this
          // in-process client is told to accept it, as that build's client is.
          daemon: { node: process.execPath, script: clock.cli, env: locked.env },
          acceptFaketime: true,
        },
        PASSPHRASE,
      );
      const { lastFrame, stdin } = render(
        <Dashboard api={lapi} now={Date.now} onLeave={() => {}} />,
      );
      const row = () =>
        strip(lastFrame())
          .split('\n')
          .find((l) => l.includes('greedy')) ?? '';
      await until(() => row().includes('● active'), 'the agent, active');
      const read = (e: string) => locked.agent(['get', e], token);
      assert.equal((await read('e1')).code, 0);
      await until(
        () => /ai_read\s+e1\/password\s+cli:greedy/.test(strip(lastFrame())),
        'the read in the feed',
      );
      await until(() => /1\/3\s+1\/10/.test(row()), 'the read counted');
      assert.equal((await read('e2')).code, 0);
      assert.equal((await read('e3')).code, 0);
      assert.match((await read('e4')).stderr, /^vault-cli: VLT-2042: /);
      await until(() => row().includes('▲ violation recorded'), 'the violation');
      await until(
        () => /▲ limited\s+e4\/password\s+cli:greedy\s+VLT-2042/.test(strip(lastFrame())),
        'limited in the feed',
      );
      // The minute has room again 61 s later: three new reads instead of the
      // retry of e4 (which would clear the violation), then the second violation locks.
      clock.set(61);
      for (const e of ['e5', 'e6', 'e7']) assert.equal((await read(e)).code, 0, e);
      assert.match((await read('e8')).stderr, /^vault-cli: VLT-2043: /);
      await until(() => row().includes('■ LOCKED'), 'the agent locked');
      await until(
        () => /■ locked\s+e8\/password\s+cli:greedy/.test(strip(lastFrame())),
        'locked in the feed',
      );
      // Unlocking needs an enrolled hardware key; without one the panel says so in the VLT form.
      assert.ok(row().startsWith('> greedy'), 'the only agent is selected');
      stdin.write('u');
      await until(() => strip(lastFrame()).includes('Unlock agent greedy'), 'the unlock panel');
      await until(
        () => strip(lastFrame()).includes('vault-cli: VLT-4004: No hardware key is enrolled'),
        'the unlock error line',
      );
    } finally {
      cleanup();
      await clock.stop();
      await locked.dispose();
    }
  },
);
