// `render --watch` inside the `run` sandbox: the change feed (op `watch`) is
// served on the session's own socket, so a rotation outside reaches a watcher
// inside; a name outside the session's scope is never reported there either.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { installBin, underPty, until } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const skip = !existsSync('/usr/bin/bwrap') && 'needs bubblewrap';
const rig = new Rig();

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('X', 'x-first');
  await rig.set('Hidden', 'h-first');
  await rig.addAgent('a', ['X'], ['--per-minute', '100', '--per-hour', '100']);
  installBin(rig);
  writeFileSync(join(rig.root, 'watch.json'), '{"v": "vault://X/password"}\n');
  writeFileSync(
    join(rig.root, 'hidden.json'),
    '{"v": "vault://X/password", "h": "vault://Hidden/password"}\n',
  );
});
after(() => rig.dispose());

/**
 * The agent's script: `render --watch` as a coprocess, its documents echoed as
 * `doc<n>=<line>`, stderr lines counted as `err<n>`, until `want` documents.
 */
const watcher = (template: string, want: number) =>
  [
    `coproc R { vault-cli render --watch ${template} 2>&1; }`,
    `for i in $(seq 1 ${want}); do read -r line <&"\${R[0]}" || break; echo "doc$i=$line"; done`,
    'kill "$R_PID" 2>/dev/null; echo "done""=1"',
  ].join('; ');

test(
  'inside run, a rotation outside renders again through the session’s socket',
  { skip, timeout: 120_000 },
  async () => {
    const run = underPty(rig, [
      'run',
      '--agent',
      'a',
      '--',
      'bash',
      '-c',
      watcher('watch.json', 2),
    ]);
    await until(() => run.output().includes('doc1='), 'the first render inside');
    assert.match(run.output(), /doc1=\{"v": "x-first"\}/);
    // The feed is set up after the first render: rotate until a document shows it.
    for (let i = 0; i < 20 && !run.output().includes('doc2='); i++) {
      const r = await rig.owner(['entry', 'set', 'X'], { input: `x-rotated-${i}` });
      assert.equal(r.code, 0, r.stderr);
      for (let w = 0; w < 30 && !run.output().includes('doc2='); w++)
        await new Promise((res) => setTimeout(res, 100));
    }
    await until(() => run.output().includes('done=1'), 'the watcher ended');
    assert.match(run.output(), /doc2=\{"v": "x-rotated-\d+"\}/, run.output());
    await run.exited;
  },
);

test(
  'inside run, a name outside the session’s scope is never reported changed',
  { skip, timeout: 120_000 },
  async () => {
    // Every render of hidden.json is refused (Hidden is outside the scope): one
    // VLT-2041 line each, so a render caused by Hidden's change shows as a line.
    const run = underPty(rig, [
      'run',
      '--agent',
      'a',
      '--',
      'bash',
      '-c',
      watcher('hidden.json', 3),
    ]);
    const lines = () => (run.output().match(/doc\d=vault-cli: VLT-2041/g) ?? []).length;
    await until(() => lines() >= 1, 'the first refused render inside');
    // The feed is up once a rotation of X shows as a second refused render.
    for (let i = 0; i < 20 && lines() < 2; i++) {
      assert.equal((await rig.owner(['entry', 'set', 'X'], { input: `x-${i}` })).code, 0);
      for (let w = 0; w < 30 && lines() < 2; w++) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(lines(), 2, run.output());
    for (let i = 0; i < 3; i++) {
      assert.equal((await rig.owner(['entry', 'set', 'Hidden'], { input: `h-${i}` })).code, 0);
    }
    assert.equal(lines(), 2, `Hidden's changes caused renders: ${run.output()}`);
    assert.equal((await rig.owner(['entry', 'set', 'X'], { input: 'x-last' })).code, 0);
    await until(() => run.output().includes('done=1'), 'the watcher ended');
    assert.equal(lines(), 3, run.output());
    assert.doesNotMatch(run.output(), /h-\d/, 'no value of Hidden inside');
    await run.exited;
  },
);
