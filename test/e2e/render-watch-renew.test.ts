// `render --watch` when its change feed ends (src/cli/commands/render.ts
// valueFeed): a host that stopped and is started again is followed again, once,
// with a render that shows what changed meanwhile, and the owner's later change
// comes down the pipe; a token that reads nothing more is told it is no longer told.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { until } from '../support/pty.js';
import { CLI, Rig, ok, terminate } from '../support/rig.js';

const rig = new Rig();
let token = '';
let template = '';

before(async () => {
  await rig.create();
  await rig.set('Db', 'first');
  token = await rig.addAgent('svc', ['Db']);
  template = join(rig.root, 'app.json');
  writeFileSync(template, '{"v": "vault://Db/password"}\n');
});
after(() => rig.dispose());

/** `render --watch` as an agent, on a pipe: what it wrote to stdout and stderr so far. */
function watcher(t: string): { child: ChildProcess; out: () => string; err: () => string } {
  const env = { ...rig.env, VAULT_TOKEN: t, VAULT_PASSPHRASE_FILE: undefined };
  const child = spawn(process.execPath, [CLI, 'render', '--watch', template], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err };
}

const docs = (out: string) => out.split('\n').slice(0, -1);

test('the host stopped and started again: the watcher follows again and reports the next change', async () => {
  const w = watcher(token);
  try {
    await until(() => docs(w.out()).length >= 1, 'the first render');
    ok(await rig.owner(['daemon', 'stop']));
    // The feed ends with the host; the watcher renders again (starting a host) and follows anew.
    await until(() => docs(w.out()).length >= 2, 'the render after the host stopped');
    assert.deepEqual(docs(w.out()), ['{"v": "first"}', '{"v": "first"}'], w.err());
    await rig.set('Db', 'second');
    await until(() => docs(w.out()).length >= 3, `the owner's change: ${w.err()}`);
    assert.equal(docs(w.out())[2], '{"v": "second"}');
    assert.doesNotMatch(w.err(), /no longer told/);
  } finally {
    await terminate(w.child);
  }
});

test('the feed ends and its renewal is refused (the token revoked): the watcher says it is no longer told', async () => {
  const t = await rig.addAgent('short', ['Db']);
  const w = watcher(t);
  try {
    await until(() => docs(w.out()).length >= 1, 'the first render');
    ok(await rig.owner(['agent', 'revoke', 'short']));
    await until(() => w.err().includes('no longer told'), 'the watcher saying so');
    assert.match(w.err(), /VLT-2040/);
    assert.equal(docs(w.out()).length, 1, 'no document from a revoked token');
  } finally {
    await terminate(w.child);
  }
});
