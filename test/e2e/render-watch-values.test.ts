// `render --watch` and the host's change feed (src/host/ops/watch.ts), through
// real processes: a value the template uses is set or rotated and a new
// document comes down the pipe; an unrelated entry, an entry outside the
// agent's scope and another agent's reads do not re-render; a rotation storm
// ends on the last value and costs the watching agent nothing of its limits.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditRecords } from '../support/e2e-helpers.js';
import { CLI, Rig, ok, terminate } from '../support/rig.js';

const rig = new Rig();
let token = '';
let other = '';

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'first');
  await rig.set('Unused', 'u0');
  await rig.set('Payroll', 'p0');
  token = await rig.addAgent('svc', ['Stripe Prod', 'Unused'], ['--per-minute', '5']);
  other = await rig.addAgent('other', ['Stripe Prod', 'Unused']);
});
after(() => rig.dispose());

/** A `render --watch` writing to a pipe this test reads: its documents (whole lines) and its stderr. */
class Watcher {
  readonly child: ChildProcess;
  out = '';
  err = '';
  /** Called in the same turn as each chunk of stderr arrives. */
  onStderr: () => void = () => {};
  #waiters: (() => void)[] = [];

  constructor(template: string) {
    const env = { ...rig.env, VAULT_TOKEN: token, VAULT_PASSPHRASE_FILE: undefined };
    this.child = spawn(process.execPath, [CLI, 'render', '--watch', template], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (c: Buffer) => {
      this.out += c.toString();
      this.#wake();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.err += c.toString();
      this.onStderr();
      this.#wake();
    });
    this.child.on('close', () => this.#wake());
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The documents written so far, each parsed: a torn one fails the test here. */
  docs(): { v: string }[] {
    return this.out
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as { v: string });
  }

  /** Resolves once `what` holds; false if the watcher exited or `ms` passed first. */
  async until(what: () => boolean, ms = 30_000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!what()) {
      if (this.child.exitCode !== null || this.child.signalCode !== null || Date.now() > end)
        return false;
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 250);
      });
    }
    return true;
  }

  async stop(): Promise<void> {
    await terminate(this.child);
  }
}

const template = (name: string, body: string) => {
  const p = join(rig.root, name);
  writeFileSync(p, body);
  return p;
};

const lastV = (w: Watcher) => w.docs().at(-1)?.v;

/**
 * Sets the referenced value until a document shows it: the feed is set up
 * after the first render, and a value set before that is no change to it.
 * @returns the value the watcher showed.
 */
async function rotateUntilSeen(w: Watcher, prefix: string): Promise<string> {
  for (let i = 0; i < 20; i++) {
    const v = `${prefix}-${i}`;
    await rig.set('Stripe Prod', v);
    if (await w.until(() => lastV(w) === v, 3000)) return v;
  }
  assert.fail(`no document showed a rotated value; stderr: ${w.err}`);
}

interface Shown {
  usage: { minute: number; hour: number };
  state: string;
}

test('a value the template uses is rotated: a new whole document; unrelated changes render nothing', async () => {
  const w = new Watcher(template('app.json', '{"v": "vault://Stripe Prod/password"}\n'));
  try {
    assert.ok(await w.until(() => lastV(w) === 'first'), w.err);
    await rotateUntilSeen(w, 'rotated');

    // The feed is up. Now everything but the watched value changes.
    const before = w.docs().length;
    const fills = (await auditRecords(rig)).filter((r) => r.actor.includes('svc')).length;
    await rig.set('Unused', 'u1'); // in the agent's scope, not in the template
    await rig.set('Payroll', 'p1'); // outside the agent's scope
    await rig.set('Unused', 'u2', 'other-field');
    for (let i = 0; i < 3; i++) {
      // Another agent's reads commit audit records, and change nothing watched.
      const r = await rig.agent(['get', 'Stripe Prod'], other);
      assert.equal(r.code, 0, r.stderr);
    }
    // Another agent revoked: the entries it held get new data keys (their
    // generation moves), and that is its news, not the watcher's.
    ok(await rig.owner(['agent', 'revoke', 'other']));
    // Then the watched value: exactly one more document, and it is that value.
    await rig.set('Stripe Prod', 'final');
    assert.ok(await w.until(() => lastV(w) === 'final'), w.err);
    assert.equal(w.docs().length, before + 1, `documents: ${w.out}`);
    const after = (await auditRecords(rig)).filter((r) => r.actor.includes('svc')).length;
    assert.equal(after, fills + 1, 'one render, one audited read');
    assert.equal(w.err, '');
  } finally {
    await w.stop();
  }
});

test('a rotation storm ends on the last value, with whole documents, and costs the agent nothing of its limits', async () => {
  // A prompt-injected agent with the owner's powers rotates as fast as it can
  // to make the watching render flap, or to spend the render agent's limits
  // (5 a minute here) until it is locked.
  const w = new Watcher(template('storm.json', '{"v": "vault://Stripe Prod/password"}\n'));
  try {
    assert.ok(await w.until(() => w.docs().length >= 1), w.err);
    await rotateUntilSeen(w, 'warm');
    const storm = Array.from({ length: 12 }, (_, i) => `storm-${i}`);
    for (const v of storm) await rig.set('Stripe Prod', v);
    assert.ok(await w.until(() => lastV(w) === storm.at(-1)), `${w.err} ${w.out}`);
    // Every document whole (docs() parses each), none after the last value.
    assert.equal(lastV(w), 'storm-11');
    assert.equal(w.err, '', 'no refusal (VLT-2042/2043) during the storm');
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'svc', '--json']))) as Shown;
    assert.equal(shown.usage.minute, 1, 'one distinct entry read, however many renders');
    assert.equal(shown.state, 'active');
  } finally {
    await w.stop();
  }
});

test('a name outside the agent’s scope is never reported changed: watching it learns nothing', async () => {
  // The template names an entry the agent may not read (Payroll) next to one
  // it may: every render is refused (VLT-2041, one stderr line each), so a
  // render caused by Payroll's change would show as one more line.
  const w = new Watcher(
    template(
      'mixed.json',
      '{"a": "vault://Stripe Prod/password", "b": "vault://Payroll/password"}\n',
    ),
  );
  const refusals = () => (w.err.match(/VLT-2041/g) ?? []).length;
  try {
    assert.ok(await w.until(() => refusals() >= 1), w.err);
    // Prove the feed is up through the entry it may read: one more refused render.
    let seen = 1;
    for (let i = 0; i < 20 && seen === 1; i++) {
      await rig.set('Stripe Prod', `mixed-${i}`);
      if (await w.until(() => refusals() >= 2, 3000)) seen = refusals();
    }
    assert.equal(seen, 2, w.err);
    for (let i = 0; i < 3; i++) await rig.set('Payroll', `secret-${i}`);
    await rig.set('Stripe Prod', 'mixed-last');
    assert.ok(await w.until(() => refusals() >= 3), w.err);
    assert.equal(refusals(), 3, `Payroll's changes caused renders: ${w.err}`);
    assert.equal(w.out, '', 'nothing written: all or nothing');
  } finally {
    await w.stop();
  }
});

test('SIGTERM the moment a refused render is reported: the watcher exits, every time', async () => {
  // A render that settled after the stop used to open a new change feed,
  // whose connection kept the process alive for good (the test above hung
  // about 1 run in 6, and CI with it). The signal is sent in the same turn as
  // the refusal line is read, while the render that wrote it is finishing.
  const p = template(
    'stop.json',
    '{"a": "vault://Stripe Prod/password", "b": "vault://Payroll/password"}\n',
  );
  const refusals = (w: Watcher) => (w.err.match(/VLT-2041/g) ?? []).length;
  for (let round = 0; round < 10; round++) {
    const w = new Watcher(p);
    try {
      assert.ok(await w.until(() => refusals(w) >= 1), w.err);
      w.onStderr = () => {
        if (refusals(w) >= 2) w.child.kill('SIGTERM');
      };
      for (let i = 0; i < 20 && refusals(w) < 2; i++) {
        await rig.set('Stripe Prod', `stop-${round}-${i}`);
        await w.until(() => refusals(w) >= 2, 3000);
      }
      assert.ok(refusals(w) >= 2, `no second render: ${w.err}`);
      await w.until(() => false, 10_000);
      assert.equal(w.child.exitCode, 0, `round ${round}: still running 10 s after SIGTERM`);
    } finally {
      await w.stop();
    }
  }
});

test('a revoked token: the feed ends and the watcher says so', async () => {
  const t = await rig.addAgent('short', ['Stripe Prod']);
  const p = template('revoked.json', '{"v": "vault://Stripe Prod/password"}\n');
  const env = { ...rig.env, VAULT_TOKEN: t, VAULT_PASSPHRASE_FILE: undefined };
  const child = spawn(process.execPath, [CLI, 'render', '--watch', p], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  try {
    const end = Date.now() + 30_000;
    while (!out.includes('\n') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    ok(await rig.owner(['agent', 'revoke', 'short']));
    while (!err.includes('no longer told') && Date.now() < end && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(err, /no longer told when a value changes/);
  } finally {
    await terminate(child);
  }
});
