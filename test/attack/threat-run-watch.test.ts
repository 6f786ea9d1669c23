// `render --watch` inside a sandboxed `vault-cli run`, attacked as the threat
// model's rows put it (docs/threat-model.md): the agent tries to rotate a
// watched value in a storm, to make its render flap or spend its limits; and
// it watches a shared entry to learn what another agent does with it (reads
// it, has its own `run` session end, is narrowed, is revoked), each of which
// re-keys the entry or commits audit records without changing its value.
// Each test ends on a value the owner really changed, which the watcher
// reports: a feed that reported nothing at all would fail it. A feed is quiet
// while only others act: one quiet for longer than the session socket lets a
// connection idle must stay up (it was cut, and under load the test of the
// other agent's activity ran past that and failed).
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readStore } from '../support/live-store.js';
import { copyStore, entryIdsByName } from '../support/offline.js';
import { installBin, runScript, said, until, type PtyRun } from '../support/pty.js';
import { PASSPHRASE, Rig, ok } from '../support/rig.js';

const skip = !existsSync('/usr/bin/bwrap') && 'needs bubblewrap';
const rig = new Rig();
let tokenA = '';
let tokenB = '';

before(async () => {
  if (skip) return;
  await rig.create();
  await rig.set('Shared', 'shared-first');
  await rig.set('B only', 'b-first');
  tokenA = await rig.addAgent('a', ['Shared'], ['--per-minute', '100', '--per-hour', '100']);
  tokenB = await rig.addAgent('b', ['Shared', 'B only'], ['--per-minute', '100']);
  installBin(rig);
  writeFileSync(join(rig.root, 'watch.json'), '{"v": "vault://Shared/password"}\n');
});
after(() => rig.dispose());

/** `render --watch watch.json` as a coprocess of the agent's shell; each document read is echoed as `doc<n>=<line>`. */
const START = 'coproc R { vault-cli render --watch watch.json 2>&1; }';
const doc = (n: number) => `read -r line <&"\${R[0]}" && echo "doc${n}=$line"`;
const STOP = 'kill "$R_PID" 2>/dev/null; echo "done""=1"';

/** The documents the watcher inside showed, in order. */
const docs = (run: PtyRun) => [...run.output().matchAll(/doc\d+=([^\r\n]*)/g)].map((m) => m[1]);

/** Sets Shared outside until the watcher inside shows document `n` (the feed is set up after the first render). */
async function rotateUntilDoc(run: PtyRun, n: number, prefix: string): Promise<string> {
  for (let i = 0; i < 20; i++) {
    await rig.set('Shared', `${prefix}-${i}`);
    for (let w = 0; w < 30 && docs(run).length < n; w++)
      await new Promise((r) => setTimeout(r, 100));
    if (docs(run).length >= n) return docs(run)[n - 1] ?? '';
  }
  assert.fail(`no document ${n}: ${run.output()}`);
}

test(
  'inside run, a storm of owner writes is refused (VLT-2051): the value, the watching render and the limits stay',
  { skip, timeout: 180_000 },
  async () => {
    const storm = [
      // The agent's owner commands: set (rotate) and remove the watched entry, ten times over.
      'ok=0; for i in $(seq 1 10); do printf "storm-$i" | vault-cli entry set Shared 2>/tmp/e && ok=$((ok+1)); done',
      'echo "set-ok=$ok"',
      'printf storm | vault-cli entry set Shared 2>/tmp/e; echo "set-code=$?"; echo "set-err=$(cat /tmp/e)"',
      'vault-cli entry rm Shared 2>/tmp/e; echo "rm-code=$?"; echo "rm-err=$(cat /tmp/e)"',
      'echo "storm-done=1"',
    ];
    const run = runScript(rig, [START, doc(1), ...storm, doc(2), STOP].join('; '));
    try {
      await until(() => run.output().includes('storm-done=1'), 'the storm inside');
      const m = said(run.output());
      assert.equal(m.get('set-ok'), '0', run.output());
      for (const k of ['set', 'rm']) {
        assert.equal(m.get(`${k}-code`), '77', run.output());
        assert.match(m.get(`${k}-err`) ?? '', /^vault-cli: VLT-2051: /, run.output());
      }
      // Outside, the value is the owner's, and the watcher showed only the first render.
      assert.equal(ok(await rig.agent(['get', 'Shared'], tokenA)), 'shared-first\n');
      assert.deepEqual(docs(run), ['{"v": "shared-first"}'], run.output());
      // The owner's one change is reported: the feed was up all along.
      const next = await rotateUntilDoc(run, 2, 'owner');
      assert.match(next, /^\{"v": "owner-\d+"\}$/);
      await until(() => run.output().includes('done=1'), 'the watcher ended');
      assert.equal((await run.exited).exitCode, 0, run.output());
      const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'a', '--json']))) as {
        usage: { minute: number };
        state: string;
      };
      assert.equal(shown.state, 'active');
      assert.equal(shown.usage.minute, 1, 'one distinct entry read');
    } finally {
      run.pty.kill();
    }
  },
);

test(
  'inside run, another agent’s reads, the end of its run session, its narrowing and its revocation are never reported; the owner’s change is',
  { skip, timeout: 240_000 },
  async () => {
    const ids = await entryIdsByName(copyStore(rig.vaultDir, rig.root), PASSPHRASE);
    const shared = ids.get('Shared') as string;
    const gen = () =>
      readStore(rig.vaultDir, (tx) => tx.entries().find((e) => e.id === shared)?.gen);
    const run = runScript(rig, [START, doc(1), doc(2), doc(3), STOP].join('; '));
    try {
      await until(() => docs(run).length >= 1, 'the first render inside');
      const first = docs(run)[0];
      const live = await rotateUntilDoc(run, 2, 'live');

      // Agent b, outside: reads the shared entry (audit records commit).
      for (let i = 0; i < 3; i++)
        assert.match(ok(await rig.agent(['get', 'Shared'], tokenB)), /^live-\d+\n$/);
      // Its own run session reads it and ends; the owner's next command
      // rotates the data keys the session held (rotate-pending).
      const before = await gen();
      const b = await runScript(rig, 'vault-cli get Shared | wc -c', { agent: 'b' }).exited;
      assert.equal(b.exitCode, 0, b.output);
      ok(await rig.owner(['agent', 'ls']));
      const afterSession = await gen();
      assert.ok(
        before !== undefined && afterSession !== undefined && afterSession > before,
        `Shared re-keyed at b's session end: ${before} -> ${afterSession}`,
      );
      // Narrowed away from it, then revoked: each re-keys what it loses.
      ok(await rig.owner(['agent', 'scope', 'b', '--rm', 'Shared']));
      ok(await rig.owner(['agent', 'scope', 'b', '--add', 'Shared']));
      ok(await rig.owner(['agent', 'revoke', 'b']));
      assert.ok(((await gen()) ?? 0) > (afterSession ?? 0), 'Shared re-keyed again');
      assert.deepEqual(docs(run), [first, live], 'no document for b’s activity');

      // The owner's change of the value: the next document, and it shows it.
      await rig.set('Shared', 'owner-final');
      await until(() => run.output().includes('done=1'), 'the watcher ended');
      assert.equal(
        docs(run)[2],
        '{"v": "owner-final"}',
        `b's activity re-rendered: ${run.output()}`,
      );
      assert.equal((await run.exited).exitCode, 0, run.output());
    } finally {
      run.pty.kill();
    }
  },
);

test(
  'inside run, a feed with nothing to report for longer than the session socket lets a connection idle stays up: the owner’s change is reported',
  { skip, timeout: 180_000 },
  async () => {
    const run = runScript(rig, [START, doc(1), doc(2), STOP].join('; '));
    try {
      await until(() => docs(run).length >= 1, 'the first render inside');
      // The session socket cuts a connection idle for 10 s (REQUEST_WITHIN_MS,
      // src/host/serve/session-sockets.ts); a quiet feed once went with it.
      await new Promise((r) => setTimeout(r, 12_000));
      assert.equal(docs(run).length, 1, run.output());
      await rig.set('Shared', 'after-quiet');
      await until(() => run.output().includes('done=1'), 'the watcher ended');
      assert.equal(docs(run)[1], '{"v": "after-quiet"}', run.output());
      assert.doesNotMatch(run.output(), /no longer told/);
      assert.equal((await run.exited).exitCode, 0, run.output());
    } finally {
      run.pty.kill();
    }
  },
);
