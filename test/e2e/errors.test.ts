// Every error code as a user meets it, through real `vault-cli` processes:
// the exit status of docs/errors.md, nothing on stdout, one stderr line.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertRefused, auditRecords } from '../support/e2e-helpers.js';
import { FakeClock, LIBFAKETIME } from '../support/faketime.js';
import { Rig, ok } from '../support/rig.js';

const rig = new Rig();
/** A second vault, for a well-formed token no agent of `rig` has. */
const other = new Rig();
const roomy = ['--per-minute', '1000', '--per-hour', '1000'];
let token = '';
let foreignToken = '';

before(async () => {
  await rig.create();
  await rig.set('Stripe Prod', 'sk-old-value');
  await rig.set('GitHub', 'gh-value');
  await rig.set('Payroll', 'payroll-secret');
  token = await rig.addAgent('claude', ['Stripe Prod', 'GitHub'], roomy);
  await other.create();
  await other.set('Elsewhere', 'x');
  foreignToken = await other.addAgent('stranger', ['Elsewhere']);
  await other.stop();
});
after(async () => {
  await rig.dispose();
  await other.dispose();
});

describe('VLT-2040: no, malformed, unknown or revoked token', () => {
  test('no token at all: no VAULT_TOKEN and no init', async () => {
    assert.equal(existsSync(join(rig.configDir, 'token')), false);
    assertRefused(await rig.agent(['get', 'Stripe Prod']), 'VLT-2040');
    assertRefused(await rig.agent(['totp', 'GitHub']), 'VLT-2040');
  });

  test('a malformed token in VAULT_TOKEN', async () => {
    // One character changed: the checksum no longer holds.
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    const typo = token.slice(0, -1) + last;
    assertRefused(await rig.agent(['get', 'Stripe Prod'], typo), 'VLT-2040', 'typo');
    assertRefused(await rig.agent(['get', 'Stripe Prod'], 'not-a-token'), 'VLT-2040', 'garbage');
    assertRefused(await rig.agent(['get', 'Stripe Prod'], token.slice(0, -3)), 'VLT-2040', 'cut');
  });

  test('a well-formed token of an agent this vault does not know', async () => {
    assert.match(foreignToken, /^vlt_[0-9A-Za-z]{71}$/);
    assertRefused(await rig.agent(['get', 'Stripe Prod'], foreignToken), 'VLT-2040');
    assertRefused(await rig.agent(['get', 'Elsewhere'], foreignToken), 'VLT-2040');
  });

  test('init with a malformed or unknown token writes no token file', async () => {
    const tokenFile = join(rig.configDir, 'token');
    const bad = token.slice(0, 10) + (token[10] === 'x' ? 'y' : 'x') + token.slice(11);
    assertRefused(await rig.agent(['init'], undefined, { input: bad + '\n' }), 'VLT-2040');
    assert.equal(existsSync(tokenFile), false);
    assertRefused(await rig.agent(['init'], undefined, { input: foreignToken + '\n' }), 'VLT-2040');
    assert.equal(existsSync(tokenFile), false);
    assertRefused(await rig.agent(['init'], undefined, { input: '' }), 'VLT-2040', 'empty');
    assert.equal(existsSync(tokenFile), false);
    // No half-written temporary file either.
    // (anchors.json is the owner's anchor memory: this rig's owner shares the config dir.)
    const left = existsSync(rig.configDir) ? readdirSync(rig.configDir) : [];
    assert.deepEqual(
      left.filter((f) => f !== 'anchors.json'),
      [],
    );
  });

  test('a revoked token, after agent revoke', async () => {
    const t = await rig.addAgent('doomed', ['GitHub'], roomy);
    assert.equal(ok(await rig.agent(['get', 'GitHub'], t)), 'gh-value\n');
    const rv = await rig.owner(['agent', 'revoke', 'doomed']);
    assert.equal(rv.code, 0, rv.stderr);
    assertRefused(await rig.agent(['get', 'GitHub'], t), 'VLT-2040');
    assertRefused(await rig.agent(['init'], undefined, { input: t + '\n' }), 'VLT-2040', 'init');
    assert.equal(existsSync(join(rig.configDir, 'token')), false);
    // The revoked agent is gone for the owner too.
    assertRefused(await rig.owner(['agent', 'show', 'doomed']), 'VLT-4002');
  });
});

describe('VLT-2041: out of scope and no such entry look the same', () => {
  test('an entry outside the scope and a missing entry give the same bytes', async () => {
    const out = await rig.agent(['get', 'Payroll'], token);
    const none = await rig.agent(['get', 'No Such Entry'], token);
    assert.equal(assertRefused(out, 'VLT-2041'), 'Access denied.');
    assertRefused(none, 'VLT-2041');
    assert.equal(none.stderr, out.stderr);
    assert.deepEqual(none.stdoutBytes, out.stdoutBytes);
    assert.equal(none.code, out.code);
  });

  test('the same with --field, with a field that does not exist, and with totp', async () => {
    const pairs: [string[], string[]][] = [
      [
        ['get', 'Payroll', '--field', 'key'],
        ['get', 'Missing', '--field', 'key'],
      ],
      [
        ['get', 'Payroll', '--field', 'nope'],
        ['get', 'Missing', '--field', 'nope'],
      ],
      [
        ['totp', 'Payroll'],
        ['totp', 'Missing'],
      ],
    ];
    for (const [a, b] of pairs) {
      const ra = await rig.agent(a, token);
      const rb = await rig.agent(b, token);
      assertRefused(ra, 'VLT-2041', a.join(' '));
      assert.equal(rb.stderr, ra.stderr, b.join(' '));
      assert.equal(rb.stdout, ra.stdout);
      assert.equal(rb.code, ra.code);
    }
  });
});

test('VLT-2044: a missing field of an entry in scope', async () => {
  const msg = assertRefused(
    await rig.agent(['get', 'Stripe Prod', '--field', 'key'], token),
    'VLT-2044',
  );
  assert.doesNotMatch(msg, /sk-old-value/);
  // totp of an in-scope entry without a totp field is the same refusal.
  assertRefused(await rig.agent(['totp', 'Stripe Prod'], token), 'VLT-2044', 'totp');
});

describe('VLT-3001: no vault at the configured location', () => {
  test('get and entry ls with no vault, and no store file is created', async () => {
    const empty = new Rig();
    try {
      assertRefused(await empty.agent(['get', 'Stripe Prod'], foreignToken), 'VLT-3001', 'get');
      assertRefused(await empty.owner(['entry', 'ls']), 'VLT-3001', 'entry ls');
      assertRefused(await empty.owner(['entry', 'set', 'X']), 'VLT-3001', 'entry set');
      assertRefused(await empty.owner(['audit']), 'VLT-3001', 'audit');
      assert.equal(existsSync(join(empty.vaultDir, 'vault.mdb')), false);
      const files = existsSync(empty.vaultDir) ? readdirSync(empty.vaultDir) : [];
      assert.ok(!files.some((f) => f.startsWith('vault.mdb')), files.join(' '));
    } finally {
      await empty.dispose();
    }
  });
});

describe('VLT-3002: wrong passphrase', () => {
  test('entry set with a wrong passphrase changes nothing; each refusal is audited', async () => {
    const before = await auditRecords(rig);
    const wrong = join(rig.root, 'wrong-passphrase');
    writeFileSync(wrong, 'not the passphrase at all\n', { mode: 0o600 });
    const r = await rig.owner(['entry', 'set', 'Stripe Prod'], {
      input: 'sk-new-value',
      env: { VAULT_PASSPHRASE_FILE: wrong },
    });
    const msg = assertRefused(r, 'VLT-3002');
    assert.doesNotMatch(msg, /not the passphrase/);
    assertRefused(
      await rig.owner(['entry', 'ls'], { env: { VAULT_PASSPHRASE_FILE: wrong } }),
      'VLT-3002',
      'entry ls',
    );
    assertRefused(
      await rig.owner(['agent', 'add', 'sneaky', '--scope', 'Payroll'], {
        env: { VAULT_PASSPHRASE_FILE: wrong },
      }),
      'VLT-3002',
      'agent add',
    );
    const after = await auditRecords(rig);
    const failed = after.filter((r) => r.action === 'passphrase_failed');
    assert.deepEqual(
      failed.map((r) => [r.actor, r.outcome, r.subject]),
      [1, 2, 3].map((n) => ['owner', 'VLT-3002', `attempt ${n}`]),
    );
    assert.deepEqual(
      after.filter((r) => r.action !== 'passphrase_failed'),
      before,
    );
    assert.equal(ok(await rig.agent(['get', 'Stripe Prod'], token)), 'sk-old-value\n');
    assertRefused(await rig.owner(['agent', 'show', 'sneaky']), 'VLT-4002');
  });
});

test('VLT-3006: a second vault create', async () => {
  assertRefused(await rig.owner(['vault', 'create']), 'VLT-3006');
  // The existing vault is untouched.
  assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh-value\n');
});

describe('VLT-1001: usage errors exit 64', () => {
  const cases: string[][] = [
    ['frobnicate'],
    ['entry', 'frob'],
    ['get', 'GitHub', '--bogus'],
    ['get', 'GitHub', '-x'],
    ['get', 'GitHub', '--field'],
    ['get'],
    ['get', 'GitHub', 'extra'],
    ['totp'],
    ['entry', 'set'],
    ['entry', 'set', 'X', '--value', 'secret'],
    ['agent', 'add', 'x', '--per-minute', '0'],
    ['agent', 'add', 'x', '--per-minute', 'many'],
    ['agent', 'show'],
    ['audit', '--json=yes'],
  ];
  for (const argv of cases) {
    test(`vault-cli ${argv.join(' ')}`, async () => {
      assertRefused(await rig.agent(argv, token), 'VLT-1001');
      assertRefused(await rig.owner(argv), 'VLT-1001');
    });
  }
});

describe('VLT-1002: invalid input', () => {
  test('an empty value stores nothing', async () => {
    assertRefused(await rig.owner(['entry', 'set', 'Empty'], { input: '' }), 'VLT-1002');
    assertRefused(await rig.owner(['entry', 'set', 'Empty'], { input: '\n' }), 'VLT-1002', 'LF');
    assertRefused(await rig.owner(['entry', 'show', 'Empty']), 'VLT-4001');
  });

  test('an entry name with a control character', async () => {
    for (const name of ['bad\u0001name', 'tab\there', 'new\nline', 'del\u007f']) {
      const r = await rig.owner(['entry', 'set', name], { input: 'v' });
      assertRefused(r, 'VLT-1002', JSON.stringify(name));
    }
    const ls = JSON.parse(ok(await rig.owner(['entry', 'ls', '--json']))) as { name: string }[];
    assert.deepEqual(ls.map((e) => e.name).sort(), ['GitHub', 'Payroll', 'Stripe Prod']);
  });

  test('a short passphrase at vault create', async () => {
    const fresh = new Rig();
    try {
      writeFileSync(fresh.passphraseFile, 'short\n');
      assertRefused(await fresh.owner(['vault', 'create']), 'VLT-1002');
      assert.equal(existsSync(join(fresh.vaultDir, 'vault.mdb')), false);
    } finally {
      await fresh.dispose();
    }
  });
});

test('VLT-4001: entry rm of a missing entry', async () => {
  const msg = assertRefused(await rig.owner(['entry', 'rm', 'Ghost']), 'VLT-4001');
  assert.match(msg, /Ghost/);
  assertRefused(await rig.owner(['entry', 'show', 'Ghost']), 'VLT-4001', 'show');
  // The control character of a typed name is shown escaped, on one line.
  assertRefused(await rig.owner(['entry', 'rm', 'Gh\nost']), 'VLT-4001', 'newline');
});

test('VLT-4002: agent show of a missing agent', async () => {
  assertRefused(await rig.owner(['agent', 'show', 'nobody']), 'VLT-4002');
  assertRefused(await rig.owner(['agent', 'lock', 'nobody']), 'VLT-4002', 'lock');
  assertRefused(await rig.owner(['agent', 'revoke', 'nobody']), 'VLT-4002', 'revoke');
});

test('VLT-4003: a second agent with the same name', async () => {
  const before = await rig.owner(['agent', 'show', 'claude', '--json']);
  assertRefused(await rig.owner(['agent', 'add', 'claude', '--scope', 'Payroll']), 'VLT-4003');
  // The first agent keeps its scope and its token.
  assert.equal((await rig.owner(['agent', 'show', 'claude', '--json'])).stdout, before.stdout);
  assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh-value\n');
});

describe('VLT-2042 and VLT-2043: rate limit, lockdown, lock by hand', () => {
  // The second violation must come once the window has had room again, so the
  // host's wall clock is moved with libfaketime (refusals before the retry time
  // belong to the first violation).
  const skip = LIBFAKETIME === null ? 'needs Debian faketime' : false;
  const timed = new Rig();
  const clock = new FakeClock(timed);
  after(async () => {
    if (!skip) await clock.stop();
    await timed.dispose();
  });

  test(
    'a second distinct entry within the minute is refused; a second violation locks',
    { skip },
    async () => {
      await clock.start();
      clock.set(0);
      await timed.create();
      await timed.set('One', 'v-one');
      await timed.set('Two', 'v-two');
      await timed.set('Three', 'v-three');
      await timed.set('Outside', 'v-out');
      const t = await timed.addAgent('greedy', ['One', 'Two', 'Three'], ['--per-minute', '1']);

      const t0 = Date.now();
      assert.equal(ok(await timed.agent(['get', 'One'], t)), 'v-one\n');
      const t1 = Date.now();

      const msg = assertRefused(await timed.agent(['get', 'Two'], t), 'VLT-2042');
      // It says when to retry: when the read of One leaves the rolling minute,
      // in local time, to the second (rounded up: never early).
      const when = /retry after (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.$/.exec(msg);
      assert.ok(when, msg);
      const retry = new Date(`${when[1]}T${when[2]}`).getTime();
      assert.ok(retry >= t0 + 60_000 && retry < t1 + 61_000, msg);
      // Asking again before then is refused the same way.
      assertRefused(await timed.agent(['get', 'Two'], t), 'VLT-2042', 'again');

      const shown = JSON.parse(ok(await timed.owner(['agent', 'show', 'greedy', '--json']))) as {
        state: string;
        violations: number[];
      };
      assert.equal(shown.state, 'violation');
      assert.equal(shown.violations.length, 1);
      // Re-reading the entry already counted costs nothing.
      assert.equal(ok(await timed.agent(['get', 'One'], t)), 'v-one\n');

      // A minute later there is room again; asking for something new instead
      // of retrying Two (which would clear the violation), the next excess is
      // the second violation.
      clock.set(70);
      assert.equal(ok(await timed.agent(['get', 'Three'], t)), 'v-three\n');
      assertRefused(await timed.agent(['get', 'Two'], t), 'VLT-2043', 'lockdown');
      for (const argv of [
        ['get', 'One'],
        ['get', 'Two'],
        ['get', 'Three'],
        ['totp', 'One'],
      ]) {
        assertRefused(await timed.agent(argv, t), 'VLT-2043', argv.join(' '));
      }
      // render too, with nothing on stdout: of Three alone, which the minute's limit
      // would allow (it was read in this minute), so only the lock refuses it.
      assertRefused(
        await timed.agent(['render', '-'], t, { input: 'three=vault://Three/password\n' }),
        'VLT-2043',
        'render',
      );
      // Out of scope and missing entries: locked comes first.
      assertRefused(await timed.agent(['get', 'Outside'], t), 'VLT-2043', 'out of scope');
      assertRefused(await timed.agent(['get', 'Nope'], t), 'VLT-2043', 'missing');
      assertRefused(
        await timed.agent(['init'], undefined, { input: t + '\n' }),
        'VLT-2043',
        'init',
      );

      const locked = JSON.parse(ok(await timed.owner(['agent', 'show', 'greedy', '--json']))) as {
        state: string;
        lockedAt: number | null;
      };
      assert.equal(locked.state, 'locked');
      assert.notEqual(locked.lockedAt, null);
      assert.match(ok(await timed.owner(['agent', 'show', 'greedy'])), /^state:\s+locked\b/m);

      // State survives a restart of the host (on the real clock now).
      await clock.stop();
      assertRefused(await timed.agent(['get', 'Two'], t), 'VLT-2043', 'after restart');

      const actions = (await auditRecords(timed))
        .filter((r) => r.actor === 'cli:greedy')
        .map((r) => `${r.action} ${r.entry ?? '-'} ${r.outcome}`);
      assert.deepEqual(actions.slice(0, 6), [
        'ai_read One ok',
        'limited Two VLT-2042',
        'limited Two VLT-2042',
        'ai_read One ok',
        'ai_read Three ok',
        'locked Two VLT-2043',
      ]);
    },
  );

  test('agent lock by hand', async () => {
    const t = await rig.addAgent('handy', ['GitHub'], roomy);
    assert.equal(ok(await rig.agent(['get', 'GitHub'], t)), 'gh-value\n');
    const lock = await rig.owner(['agent', 'lock', 'handy']);
    assert.equal(lock.code, 0, lock.stderr);
    assert.match(lock.stdout, /^state:\s+locked\b/m);
    assertRefused(await rig.agent(['get', 'GitHub'], t), 'VLT-2043');
    assertRefused(await rig.agent(['get', 'Payroll'], t), 'VLT-2043', 'out of scope');
    assertRefused(await rig.agent(['totp', 'GitHub'], t), 'VLT-2043', 'totp');
    assertRefused(
      await rig.agent(['render', '-'], t, { input: 'token: vault://GitHub/password\n' }),
      'VLT-2043',
      'render',
    );
    const file = join(rig.root, 'handy.tmpl');
    writeFileSync(file, '{{ vault://GitHub/password }}');
    assertRefused(await rig.agent(['render', file], t), 'VLT-2043', 'render <file>');
    // Each refusal has its record; nothing was released after the lock.
    const handy = (await auditRecords(rig))
      .filter((r) => r.actor === 'cli:handy')
      .map((r) => `${r.action} ${r.entry ?? '-'} ${r.outcome}`);
    assert.deepEqual(handy.slice(-5), [
      'locked GitHub VLT-2043',
      'locked Payroll VLT-2043',
      'locked GitHub VLT-2043',
      'locked GitHub VLT-2043',
      'locked GitHub VLT-2043',
    ]);
    const shown = JSON.parse(ok(await rig.owner(['agent', 'show', 'handy', '--json']))) as {
      state: string;
    };
    assert.equal(shown.state, 'locked');
    // Other agents are not affected.
    assert.equal(ok(await rig.agent(['get', 'GitHub'], token)), 'gh-value\n');
  });
});
