// A sweep stopped by Ctrl-C (or SIGTERM) still marks what it found: the
// findings of the last 200 ms, or of the last 32 MiB, wait to be sent in one
// mark request, and a signal used to end the process before it went out, so
// a leak the owner had seen on screen was not on the rotation checklist.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { watchOutput } from '../support/raw-host.js';
import { CLI, Rig, ok } from '../support/rig.js';

const rig = new Rig();
const values = [`sk_live_${hex(16)}`, `ghp_${hex(18)}`];
const dirs = ['first', 'second', 'rest'].map((d) => join(rig.root, 'transcripts', d));
/** Enough small files after the leaks that the sweep is still reading when the signal comes. */
const REST = 20_000;

before(async () => {
  await rig.create();
  await rig.set('Stripe', values[0] as string);
  await rig.set('GitHub', values[1] as string);
  for (const d of dirs) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs[0] as string, 'a.jsonl'), `{"text":"${values[0]}"}\n`);
  writeFileSync(join(dirs[1] as string, 'b.jsonl'), `{"text":"${values[1]}"}\n`);
  const line = `{"text":"${'nothing to see here '.repeat(50)}"}\n`;
  for (let i = 0; i < REST; i++) writeFileSync(join(dirs[2] as string, `${i}.jsonl`), line);
});
after(() => rig.dispose());

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} as the sweep reads on: what it found is marked exposed before it ends`, async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'sweep', '--stored', '--paths-only', ...dirs.flatMap((d) => ['--path', d]), '--json'],
      { env: rig.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const { out, err, until } = watchOutput(child, 'sweep');
    const closed = new Promise<NodeJS.Signals | null>((r) => child.on('close', (_, s) => r(s)));
    // Both leaks found (each file is read whole before the next): the signal, at once.
    await until(() => out().split('\n').filter(Boolean).length >= 2);
    child.kill(signal);
    assert.equal(await closed, signal, `${out()}\n${err()}`);
    assert.match(
      err(),
      new RegExp(
        `interrupted after \\d+ of ${REST + 2} files: 2 findings, 2 fields marked exposed`,
      ),
      err(),
    );
    const exposed = ok(await rig.owner(['entry', 'exposed']));
    assert.match(exposed, /Stripe/);
    assert.match(exposed, /GitHub/);
    // Set again: off the checklist, for the next round.
    await rig.set('Stripe', values[0] as string);
    await rig.set('GitHub', values[1] as string);
  });
}
