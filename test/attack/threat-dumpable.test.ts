// Issue 35: where Yama is absent (this machine has no
// /proc/sys/kernel/yama), any process of the owner's user could open
// /proc/<pid>/mem of `run` (which keeps the passphrase for its dashboard) or
// of a sweep (which holds the values it fetched) and read it, or ptrace them.
// Both now mark themselves not dumpable at their start. The test process is
// the attacker: the same user, no privilege. The agent `run` starts must stay
// dumpable (the flag does not outlive execve), or its own tools would break.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hex } from '../support/e2e-helpers.js';
import { livePidsWith } from '../support/procs.js';
import { installBin } from '../support/pty.js';
import { watchOutput } from '../support/raw-host.js';
import { CLI, Rig, fate } from '../support/rig.js';

const rig = new Rig();

before(async () => {
  await rig.create();
  await rig.set('X', 'hunter2');
  await rig.addAgent('ci', ['X']);
  installBin(rig);
});
after(() => rig.dispose());

/**
 * The tests run as root, whose CAP_SYS_PTRACE reaches any process. The
 * attacker and its target both run as root without a capability (an empty
 * bounding set), as two processes of one unprivileged user would: then only
 * the uid and the target's dumpable flag decide.
 */
const NO_CAPS = ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--'];

/** What a same-user process without privilege gets opening /proc/<pid>/<file>. */
async function openProc(pid: number, file: string): Promise<string> {
  const probe = spawn(
    NO_CAPS[0] as string,
    [...NO_CAPS.slice(1), 'sh', '-c', `exec 3< /proc/${pid}/${file} && echo opened`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const r = await fate(probe);
  return r.stdout.trim() === 'opened' ? 'opened' : /denied/i.test(r.stderr) ? 'denied' : r.stderr;
}

/** What the same user gets of the process's memory and environment. */
const reach = async (pid: number) => ({
  mem: await openProc(pid, 'mem'),
  environ: await openProc(pid, 'environ'),
});

function started(args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(NO_CAPS[0] as string, [...NO_CAPS.slice(1), process.execPath, CLI, ...args], {
    env: { ...rig.env, PATH: `${join(rig.root, 'bin')}:${process.env.PATH}` },
    cwd: rig.root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

test('run: a same-user process cannot open its /proc/<pid>/mem or environ; the agent it started can be', async () => {
  // The host the capless commands start is theirs: one started with every capability is not inspectable by them.
  await rig.owner(['daemon', 'stop']);
  const marker = `agent-${hex(4)}`;
  const script = `: ${marker}; echo ready; read x; echo done`;
  // --no-sandbox: bubblewrap cannot map uids without a capability here; the
  // sandboxed run is the same process (test/e2e/run-script.test.ts runs it).
  const child = started([
    'run',
    '--agent',
    'ci',
    '--no-pty',
    '--no-sandbox',
    '--',
    'sh',
    '-c',
    script,
  ]);
  const { out, until: seen } = watchOutput(child, 'run');
  const end = fate(child);
  try {
    await seen(() => /ready/.test(out()));
    // setpriv execs node: the child's pid is run's.
    const run = child.pid as number;
    assert.deepEqual(await reach(run), { mem: 'denied', environ: 'denied' });
    const agents = livePidsWith(marker).filter((p) => p !== run);
    assert.ok(agents.length > 0, 'the agent is in the process table');
    for (const pid of agents)
      assert.equal(await openProc(pid, 'environ'), 'opened', `agent ${pid}`);
  } finally {
    child.stdin.end('go\n');
  }
  const r = await end;
  assert.equal(r.code, 0, r.stderr);
  assert.match(out(), /done/);
});

test('sweep --watch: a same-user process cannot open its /proc/<pid>/mem or environ', async () => {
  await rig.owner(['daemon', 'stop']);
  const dir = join(rig.root, `transcripts-${hex(4)}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 't.jsonl'), '{"text":"nothing here"}\n');
  const child = started(['sweep', '--paths-only', '--path', dir, '--watch']);
  child.stdin.end();
  const { err, until: seen } = watchOutput(child, 'sweep --watch');
  try {
    await seen(() => /watching/.test(err()));
    assert.deepEqual(await reach(child.pid as number), { mem: 'denied', environ: 'denied' });
  } finally {
    child.kill('SIGTERM');
  }
});
