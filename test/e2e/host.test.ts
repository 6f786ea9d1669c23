// The vault host and the owner's commands around it: auto-start, one host for
// many callers, rotation, passphrase change, entry show, scope and limits.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  alive,
  assertRefused,
  disposeAll,
  hostPid,
  hostProcesses,
  settleHosts,
  waitGone,
} from '../support/e2e-helpers.js';
import { zombie } from '../support/procs.js';
import { Rig, ok } from '../support/rig.js';

const roomy = ['--per-minute', '1000', '--per-hour', '1000'];

describe('the host starts by itself and stops on request', () => {
  const rig = new Rig();
  after(() => rig.dispose());

  test('status before anything: not running, exit 3', async () => {
    const r = await rig.owner(['daemon', 'status']);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, 'not running\n');
    const j = await rig.owner(['daemon', 'status', '--json']);
    assert.equal(j.code, 3);
    assert.deepEqual(JSON.parse(j.stdout), { running: false });
  });

  test('the first command starts a host; status names its pid; stop ends it', async () => {
    await rig.create();
    const s = await rig.owner(['daemon', 'status']);
    assert.equal(s.code, 0, s.stderr);
    const m = /^running: pid ([0-9]+), vault (.*), since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n$/.exec(
      s.stdout,
    );
    assert.ok(m, s.stdout);
    const pid = Number(m[1]);
    assert.equal(m[2], rig.vaultDir);
    assert.equal(await hostPid(rig), pid);
    assert.ok(alive(pid));

    const stop = await rig.owner(['daemon', 'stop']);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(stop.stdout, '');
    assert.match(stop.stderr, new RegExp(`pid ${pid}\\b`));
    // "stopped" once the host has exited, its store closed and the clean
    // close recorded: before, it answered first and closed after, so a copy of
    // the store or removing its directory raced that close (which now writes
    // vault.mdb.known-good).
    // (Exited: gone, or a zombie its parent, this machine's init, has not reaped yet.)
    assert.ok(!alive(pid) || zombie(pid), `host ${pid} still runs when daemon stop returns`);
    assert.ok(existsSync(join(rig.vaultDir, 'vault.mdb.known-good')));
    const after = await rig.owner(['daemon', 'status']);
    assert.equal(after.code, 3, after.stdout);
    assert.equal(after.stdout, 'not running\n');
    assert.ok(await waitGone(pid), `host ${pid} still runs after daemon stop`);

    // Stopping when nothing runs is not an error.
    const again = await rig.owner(['daemon', 'stop']);
    assert.equal(again.code, 0, again.stderr);

    // The next command starts a new host, and the vault is still there.
    await rig.set('After Restart', 'still-here');
    const next = await hostPid(rig);
    assert.notEqual(next, pid);
  });
});

describe('commands started at the same instant', () => {
  const rig = new Rig();
  let token = '';
  before(async () => {
    await rig.create();
    await rig.set('A', 'value-a');
    await rig.set('B', 'value-b');
    token = await rig.addAgent('bot', ['A', 'B'], roomy);
    await rig.stop();
  });
  after(() => disposeAll(rig));

  for (const n of [2, 8]) {
    test(`${n} gets with no host running all succeed, served by one host`, async () => {
      const status = await rig.owner(['daemon', 'status']);
      assert.equal(status.code, 3, 'a host is already running');
      const logFile = join(rig.vaultDir, 'host.log');
      const logStart = readFileSync(logFile).length;

      const runs = await Promise.all(
        Array.from({ length: n }, (_, i) => rig.agent(['get', i % 2 === 0 ? 'A' : 'B'], token)),
      );
      runs.forEach((r, i) => {
        assert.equal(r.code, 0, `run ${i}: ${r.stderr}`);
        assert.equal(r.stdout, i % 2 === 0 ? 'value-a\n' : 'value-b\n');
        assert.equal(r.stderr, '');
      });

      const pid = await hostPid(rig);
      // Every other host the burst started gives way to the one serving.
      assert.deepEqual(await settleHosts(rig.vaultDir, 1), [pid]);
      const log = readFileSync(logFile).subarray(logStart).toString('utf8');
      const listening = [...log.matchAll(/vault-host\[([0-9]+)\]: listening on/g)].map((x) =>
        Number(x[1]),
      );
      assert.deepEqual(listening, [pid], log);
      await rig.stop();
      assert.ok(await waitGone(pid));
    });
  }

  test('daemon stop after a burst of auto-starting commands leaves no host running', async () => {
    // Each command of the burst that finds no host spawns one; `daemon stop` must
    // leave none behind, not even one that was still starting when it ran.
    for (let round = 0; round < 5; round++) {
      assert.equal((await rig.owner(['daemon', 'status'])).code, 3);
      const runs = await Promise.all(
        Array.from({ length: 8 }, () => rig.agent(['get', 'A'], token)),
      );
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      const stop = await rig.owner(['daemon', 'stop']);
      assert.equal(stop.code, 0, stop.stderr);
      const left = await settleHosts(rig.vaultDir, 0, 5000);
      const status = await rig.owner(['daemon', 'status']);
      assert.deepEqual(
        { left, status: status.code },
        { left: [], status: 3 },
        `round ${round}: after daemon stop: ${status.stdout}`,
      );
      assert.deepEqual(hostProcesses(rig.vaultDir), []);
    }
  });

  test('two vault creates at once on a fresh directory: exactly one wins', async () => {
    const fresh = new Rig();
    try {
      const [a, b] = await Promise.all([
        fresh.owner(['vault', 'create']),
        fresh.owner(['vault', 'create']),
      ]);
      const codes = [a.code, b.code].sort();
      assert.deepEqual(codes, [0, 73], `${a.stderr} ${b.stderr}`);
      const loser = a.code === 0 ? b : a;
      assertRefused(loser, 'VLT-3006');
      // The winner's vault works.
      await fresh.set('X', 'x-value');
      const t = await fresh.addAgent('bot', ['X']);
      assert.equal(ok(await fresh.agent(['get', 'X'], t)), 'x-value\n');
    } finally {
      await disposeAll(fresh);
    }
  });
});

describe('owner commands', () => {
  const rig = new Rig();
  let recovery = '';
  let token = '';
  before(async () => {
    recovery = (await rig.create()).trim();
    await rig.set('Stripe', 'v1');
    await rig.set('GitHub', 'gh');
    await rig.set('Payroll', 'pay');
    token = await rig.addAgent('bot', ['Stripe'], roomy);
  });
  after(() => rig.dispose());

  test('a rotation is what the next get returns', async () => {
    assert.equal(ok(await rig.agent(['get', 'Stripe'], token)), 'v1\n');
    const r = await rig.owner(['entry', 'set', 'Stripe'], { input: 'v2\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /updated "Stripe" field password \(version 2\)/);
    assert.equal(ok(await rig.agent(['get', 'Stripe'], token)), 'v2\n');
    // Binary-safe, and survives a host restart.
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x0a, 0x20]);
    await rig.set('Stripe', Buffer.concat([bytes, Buffer.from('\n')]));
    await rig.stop();
    const got = await rig.agent(['get', 'Stripe'], token);
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(got.stdoutBytes, Buffer.concat([bytes, Buffer.from('\n')]));
    await rig.set('Stripe', 'v4');
    assert.equal(ok(await rig.agent(['get', 'Stripe'], token)), 'v4\n');
  });

  test('entry show lists fields and versions, never the value', async () => {
    await rig.set('Stripe', 'sk_live_SHOWME', 'key');
    const text = ok(await rig.owner(['entry', 'show', 'Stripe']));
    assert.match(text, /^name:\s+Stripe$/m);
    assert.match(text, /^tier:\s+default$/m);
    assert.match(text, /^\s+password\s+version 4\s+updated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/m);
    assert.match(text, /^\s+key\s+version 1\s+updated /m);
    assert.doesNotMatch(text, /v4|SHOWME/);
    const j = ok(await rig.owner(['entry', 'show', 'Stripe', '--json']));
    assert.doesNotMatch(j, /v4|SHOWME/);
    const e = JSON.parse(j) as { name: string; fields: { name: string; version: number }[] };
    assert.equal(e.name, 'Stripe');
    assert.deepEqual(
      e.fields.map((f) => [f.name, f.version]),
      [
        ['password', 4],
        ['key', 1],
      ],
    );
    const ls = ok(await rig.owner(['entry', 'ls']));
    assert.match(ls, /^NAME\s+TIER\s+FIELDS$/m);
    assert.match(ls, /^Stripe\s+default\s+password,key$/m);
    assert.doesNotMatch(ls, /v4|SHOWME/);
  });

  test('agent scope --add/--rm changes what get allows', async () => {
    assertRefused(await rig.agent(['get', 'GitHub'], token), 'VLT-2041', 'before --add');
    const add = await rig.owner(['agent', 'scope', 'bot', '--add', 'GitHub', '--add', 'Payroll']);
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /^scope:\n {2}GitHub\n {2}Payroll\n {2}Stripe\n$/m);
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh\n');
    assert.equal(ok(await rig.agent(['get', 'Payroll'], token)), 'pay\n');

    const rm = await rig.owner(['agent', 'scope', 'bot', '--rm', 'Stripe', '--rm', 'Payroll']);
    assert.equal(rm.code, 0, rm.stderr);
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'bot', '--json']))) as {
      scope: string[];
    };
    assert.deepEqual(shown.scope, ['GitHub']);
    assertRefused(await rig.agent(['get', 'Stripe'], token), 'VLT-2041', 'after --rm');
    assertRefused(await rig.agent(['get', 'Payroll'], token), 'VLT-2041', 'after --rm');
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh\n');

    // An unknown entry is refused and the scope is unchanged.
    assertRefused(await rig.owner(['agent', 'scope', 'bot', '--add', 'Nope']), 'VLT-4001');
    assertRefused(await rig.owner(['agent', 'scope', 'bot']), 'VLT-1001', 'nothing to do');
    const still = JSON.parse(ok(await rig.owner(['agent', 'show', 'bot', '--json']))) as {
      scope: string[];
    };
    assert.deepEqual(still.scope, ['GitHub']);
    // entry rm takes the entry out of every scope.
    ok(await rig.owner(['agent', 'scope', 'bot', '--add', 'Stripe']));
    ok(await rig.owner(['entry', 'rm', 'Stripe']));
    const gone = JSON.parse(ok(await rig.owner(['agent', 'show', 'bot', '--json']))) as {
      scope: string[];
    };
    assert.deepEqual(gone.scope, ['GitHub']);
    assertRefused(await rig.agent(['get', 'Stripe'], token), 'VLT-2041', 'after entry rm');
    // A new entry with the same name is not in the scope by inheritance.
    await rig.set('Stripe', 'new-stripe');
    assertRefused(await rig.agent(['get', 'Stripe'], token), 'VLT-2041', 'recreated');
  });

  test('agent limits changes the limits that reads are charged against', async () => {
    await rig.set('L1', 'l1');
    await rig.set('L2', 'l2');
    await rig.set('L3', 'l3');
    const t = await rig.addAgent('limited', ['L1', 'L2', 'L3']);
    const fresh = JSON.parse(ok(await rig.owner(['agent', 'show', 'limited', '--json']))) as {
      limits: { perMinute: number; perHour: number };
    };
    assert.deepEqual(fresh.limits, { perMinute: 3, perHour: 10 });

    const r = await rig.owner(['agent', 'limits', 'limited', '--per-minute', '1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^this minute: 0 of 1 distinct credentials$/m);
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'limited', '--json']))) as {
      limits: { perMinute: number; perHour: number };
    };
    assert.deepEqual(shown.limits, { perMinute: 1, perHour: 10 });

    assert.equal(ok(await rig.agent(['get', 'L1'], t)), 'l1\n');
    assertRefused(await rig.agent(['get', 'L2'], t), 'VLT-2042');

    ok(await rig.owner(['agent', 'limits', 'limited', '--per-minute', '5', '--per-hour', '20']));
    const raised = JSON.parse(ok(await rig.owner(['agent', 'show', 'limited', '--json']))) as {
      limits: { perMinute: number; perHour: number };
    };
    assert.deepEqual(raised.limits, { perMinute: 5, perHour: 20 });
    assert.equal(ok(await rig.agent(['get', 'L2'], t)), 'l2\n');
    assert.equal(ok(await rig.agent(['get', 'L3'], t)), 'l3\n');

    assertRefused(await rig.owner(['agent', 'limits', 'limited']), 'VLT-1001');
    assertRefused(await rig.owner(['agent', 'limits', 'nobody', '--per-hour', '2']), 'VLT-4002');
  });

  test('vault passwd with VAULT_NEW_PASSPHRASE_FILE changes the passphrase', async () => {
    const next = join(rig.root, 'next-passphrase');
    writeFileSync(next, 'a brand new passphrase\n', { mode: 0o600 });
    const r = await rig.owner(['vault', 'passwd'], { env: { VAULT_NEW_PASSPHRASE_FILE: next } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3002', 'old passphrase');
    const ls = await rig.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: next } });
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^GitHub\s/m);
    // Agents are unaffected.
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh\n');

    // A too-short new passphrase is refused and changes nothing.
    const short = join(rig.root, 'short');
    writeFileSync(short, 'short\n');
    assertRefused(
      await rig.owner(['vault', 'passwd'], {
        env: { VAULT_PASSPHRASE_FILE: next, VAULT_NEW_PASSPHRASE_FILE: short },
      }),
      'VLT-1002',
    );
    // The old passphrase cannot change it back.
    assertRefused(
      await rig.owner(['vault', 'passwd'], {
        env: { VAULT_NEW_PASSPHRASE_FILE: rig.passphraseFile },
      }),
      'VLT-3002',
      'passwd with the old passphrase',
    );
    ok(await rig.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: next } }));
  });

  test('vault passwd --recovery with the recovery key from vault create', async () => {
    assert.match(recovery, /^vltr_[0-9A-Za-z]+$/);
    const reset = join(rig.root, 'reset-passphrase');
    writeFileSync(reset, 'reset by recovery key\n', { mode: 0o600 });
    // A wrong recovery key first.
    const wrongKey = recovery.slice(0, -1) + (recovery.endsWith('a') ? 'b' : 'a');
    assertRefused(
      await rig.owner(['vault', 'passwd', '--recovery'], {
        input: wrongKey + '\n',
        env: { VAULT_PASSPHRASE_FILE: undefined, VAULT_NEW_PASSPHRASE_FILE: reset },
      }),
      'VLT-3002',
      'wrong recovery key',
    );
    const r = await rig.owner(['vault', 'passwd', '--recovery'], {
      input: recovery + '\n',
      env: { VAULT_PASSPHRASE_FILE: undefined, VAULT_NEW_PASSPHRASE_FILE: reset },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const ls = await rig.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: reset } });
    assert.equal(ls.code, 0, ls.stderr);
    assertRefused(await rig.owner(['entry', 'ls']), 'VLT-3002', 'original passphrase');
  });
});
