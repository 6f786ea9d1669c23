// `vault-cli doctor` on this machine, with bubblewrap hidden from PATH, and in a
// user namespace that allows no more of them (a nested one whose
// user.max_user_namespaces is 0: unshare and bwrap really get ENOSPC there).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertRefused } from '../support/e2e-helpers.js';
import { CLI, Rig, fate } from '../support/rig.js';

const rig = new Rig();
before(() => rig.create());
after(() => rig.dispose());

const have = (p: string) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0;
const canNest =
  have('unshare') && spawnSync('unshare', ['--user', '--map-root-user', '/bin/true']).status === 0;

/** The line doctor printed for `name`. */
const lineOf = (out: string, name: string) =>
  out.split('\n').find((l) => l.slice(6).startsWith(`${name}:`)) ?? '';

test(
  'healthy: every sandbox line ok, exit 0',
  { skip: !have('bwrap') && 'no bwrap here' },
  async () => {
    const r = await rig.owner(['doctor']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    for (const name of ['node', 'bwrap', 'socat', 'user namespaces'])
      assert.match(lineOf(r.stdout, name), /^ok {4}/, name);
    assert.match(
      lineOf(r.stdout, 'host'),
      /^ok {4}host: running, pid [0-9]+, node \/.*, uid [0-9]+$/,
    );
    assert.match(lineOf(r.stdout, 'vault directory'), /mode 700, yours/);
    assert.match(
      lineOf(r.stdout, 'completion'),
      /^warn {2}completion: .*fix: vault-cli completion install/,
    );
    assert.match(r.stdout, /^run can start its sandbox here\.$/m);
  },
);

test('bwrap hidden from PATH: its line says so with the fix, exit 1; run names doctor', async () => {
  const bin = join(rig.root, 'no-bwrap');
  mkdirSync(bin, { recursive: true });
  for (const p of ['socat', 'unshare']) {
    const at = spawnSync('sh', ['-c', `command -v ${p}`], { encoding: 'utf8' }).stdout.trim();
    if (at !== '') symlinkSync(at, join(bin, p));
  }
  const r = await rig.owner(['doctor'], { env: { PATH: bin } });
  assert.equal(r.code, 1, r.stdout);
  assert.equal(
    lineOf(r.stdout, 'bwrap'),
    'FAIL  bwrap: not found on PATH; fix: apt install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)',
  );
  assert.match(r.stdout, /^run cannot start its sandbox here: fix bwrap /m);

  const run = await rig.owner(['run', '--agent', 'a', '--', '/bin/true'], { env: { PATH: bin } });
  assert.match(
    assertRefused(run, 'VLT-1005'),
    /bubblewrap .* vault-cli doctor checks all that run needs\.$/,
  );
});

test(
  'user namespaces refused: the line says refused, with the fix, exit 1',
  { skip: !canNest && 'unshare --user is not allowed here' },
  async () => {
    // Inside its own user namespace, root of it may lower the limit to 0 for the ones below.
    const script = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"';
    const r = await fate(
      spawn(
        'unshare',
        ['--user', '--map-root-user', 'sh', '-c', script, 'sh', process.execPath, CLI, 'doctor'],
        { env: rig.env, stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const line = lineOf(r.stdout, 'user namespaces');
    assert.match(line, /^FAIL {2}user namespaces: refused \(.*\); fix: /);
    assert.match(line, /user\.max_user_namespaces/);
    assert.match(r.stdout, /^run cannot start its sandbox here: fix user namespaces /m);
  },
);
