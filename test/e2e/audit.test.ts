// The audit log through real processes (docs/how-it-works.md, issue 3): a
// record for every owner action and every agent attempt, allowed or not; the
// TIME ACTION ENTRY ACTOR listing and its JSON form; --agent and --since
// filters; --follow streaming; --verify catching a changed, removed,
// reordered or truncated record; never a secret in a record.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { recordHash } from '../../src/host/audit/log.js';
import type { AuditRecord } from '../../src/store/schema.js';
import { assertRefused, hex } from '../support/e2e-helpers.js';
import { CLI, PASSPHRASE, Rig, ok, type Result } from '../support/rig.js';
// The tamper tests rewrite raw audit records on purpose, below the Store API.
import { editRecords, type RawStore } from '../support/store-damage.js';

/** One line of `vault-cli audit --json`: every field of a record. */
interface Rec {
  readonly seq: number;
  readonly at: number;
  readonly time: string;
  readonly action: string;
  readonly actor: string;
  readonly source: string;
  readonly outcome: string;
  readonly entry: string | null;
  readonly field: string | null;
  readonly host: string | null;
  readonly subject: string | null;
}

const FIELDS = [
  'seq',
  'at',
  'time',
  'action',
  'actor',
  'source',
  'outcome',
  'entry',
  'field',
  'host',
  'subject',
];

function parseLines(out: string): Rec[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

async function records(rig: Rig, more: readonly string[] = []): Promise<Rec[]> {
  return parseLines(ok(await rig.owner(['audit', '--json', ...more])));
}

/** The records appended since `before` (a listing taken earlier). */
async function newSince(rig: Rig, before: readonly Rec[]): Promise<Rec[]> {
  const all = await records(rig);
  assert.deepEqual(all.slice(0, before.length), before, 'earlier records unchanged');
  return all.slice(before.length);
}

const byOrAbout = (agent: string) => (r: Rec) => r.actor === `cli:${agent}` || r.subject === agent;

/** `vault-cli` as a child process we hold on to (for --follow, and to know its pid). */
function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

function collect(child: ChildProcessWithoutNullStreams): {
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
} {
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  return { out: () => out, err: () => err, exited };
}

/** Polls `cond` until it holds or `maxMs` passes; returns whether it held. */
async function waitFor(cond: () => boolean, maxMs = 10_000): Promise<boolean> {
  const until = Date.now() + maxMs;
  while (!cond()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

async function stopChild(child: ChildProcessWithoutNullStreams, exited: Promise<unknown>) {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}

/** `YYYY-MM-DD HH:MM:SS` of `ms` shifted by `offsetMin` minutes, computed independently of the CLI. */
function wallClock(ms: number, offsetMin: number): string {
  return new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19).replace('T', ' ');
}

describe('records of owner and agent actions', () => {
  const rig = new Rig();
  const started = Date.now();
  const sentinel = `SENTINEL-${hex(12)}`;
  const rotated = `SENTINEL-${hex(12)}`;
  const tokens: string[] = [];
  let claude = '';
  let robot = '';

  before(async () => {
    await rig.create();
  });
  after(() => rig.dispose());

  test('vault_create is the first record, by the owner, with every field', async () => {
    const all = await records(rig);
    assert.ok(all.length >= 1);
    const first = all[0] as Rec;
    assert.deepEqual(Object.keys(first).sort(), [...FIELDS].sort());
    assert.equal(first.seq, 1);
    assert.equal(first.action, 'vault_create');
    assert.equal(first.actor, 'owner');
    assert.equal(first.outcome, 'ok');
    assert.match(first.source, /^pid:[0-9]+ uid:[0-9]+$/);
    assert.ok(first.at >= started - 1000 && first.at <= Date.now(), `at ${first.at}`);
    assert.equal(first.time, new Date(first.at).toISOString());
    assert.deepEqual(
      all.map((r) => r.seq),
      all.map((_, i) => i + 1),
    );
  });

  const ownerSteps: {
    what: string;
    run: () => Promise<unknown>;
    expect: Partial<Rec>[];
  }[] = [
    {
      what: 'entry_add',
      run: () => rig.set('Stripe Prod', 'hunter2'),
      expect: [{ action: 'entry_add', entry: 'Stripe Prod', field: 'password', subject: null }],
    },
    {
      what: 'field_add',
      run: () => rig.set('Stripe Prod', 'sk_live_x', 'key'),
      expect: [{ action: 'field_add', entry: 'Stripe Prod', field: 'key' }],
    },
    {
      what: 'rotate',
      run: () => rig.set('Stripe Prod', 'hunter3'),
      expect: [{ action: 'rotate', entry: 'Stripe Prod', field: 'password' }],
    },
    {
      what: 'entry_add of the entries agents read',
      run: async () => {
        await rig.set('GitHub', 'gh-token-value');
        await rig.set('Payroll', sentinel);
        await rig.set('Temp', 'short-lived');
      },
      expect: [
        { action: 'entry_add', entry: 'GitHub', field: 'password' },
        { action: 'entry_add', entry: 'Payroll', field: 'password' },
        { action: 'entry_add', entry: 'Temp', field: 'password' },
      ],
    },
    {
      what: 'entry_rm',
      run: async () => ok(await rig.owner(['entry', 'rm', 'Temp'])),
      expect: [{ action: 'entry_rm', entry: 'Temp', subject: null }],
    },
    {
      what: 'agent_add (ai by default, and a script agent)',
      run: async () => {
        claude = await rig.addAgent('claude', ['Stripe Prod']);
        robot = await rig.addAgent('robot', ['Stripe Prod'], ['--kind', 'script']);
        tokens.push(claude, robot);
      },
      expect: [
        { action: 'agent_add', subject: 'claude', entry: null, field: null },
        { action: 'agent_add', subject: 'robot' },
      ],
    },
    {
      what: 'agent_scope',
      run: async () => ok(await rig.owner(['agent', 'scope', 'claude', '--add', 'GitHub'])),
      expect: [{ action: 'agent_scope', subject: 'claude', entry: 'GitHub' }],
    },
    {
      what: 'agent_limits',
      run: async () =>
        ok(await rig.owner(['agent', 'limits', 'claude', '--per-minute', '5', '--per-hour', '20'])),
      expect: [{ action: 'agent_limits', subject: 'claude' }],
    },
  ];

  for (const step of ownerSteps) {
    test(`${step.what}: recorded when done, by the owner`, async () => {
      const before = await records(rig);
      await step.run();
      const fresh = await newSince(rig, before);
      assert.equal(fresh.length, step.expect.length, JSON.stringify(fresh));
      for (const r of fresh) {
        assert.equal(r.actor, 'owner', JSON.stringify(r));
        assert.equal(r.outcome, 'ok', JSON.stringify(r));
        assert.match(r.source, /^pid:[0-9]+ uid:[0-9]+$/);
        assert.equal(r.host, null);
      }
      for (const [i, want] of step.expect.entries()) {
        const got = fresh[i] as Rec;
        for (const [k, v] of Object.entries(want)) {
          assert.deepEqual(got[k as keyof Rec], v, `${k} of ${JSON.stringify(got)}`);
        }
      }
    });
  }

  test('ai_read: a value returned to an ai agent (the default kind), source is its pid and uid from the kernel', async () => {
    const before = await records(rig);
    const child = spawnCli(['get', 'Stripe Prod'], {
      ...rig.env,
      VAULT_PASSPHRASE_FILE: undefined,
      VAULT_TOKEN: claude,
    });
    const c = collect(child);
    child.stdin.end();
    assert.equal(await c.exited, 0, c.err());
    assert.equal(c.out(), 'hunter3\n');
    const fresh = await newSince(rig, before);
    assert.equal(fresh.length, 1, JSON.stringify(fresh));
    const r = fresh[0] as Rec;
    assert.deepEqual(Object.keys(r).sort(), [...FIELDS].sort());
    assert.equal(r.action, 'ai_read');
    assert.equal(r.actor, 'cli:claude');
    assert.equal(r.outcome, 'ok');
    assert.equal(r.entry, 'Stripe Prod');
    assert.equal(r.field, 'password');
    assert.equal(r.host, null);
    assert.equal(r.subject, null);
    assert.equal(r.source, `pid:${child.pid} uid:${process.getuid?.()}`);
    assert.equal(r.time, new Date(r.at).toISOString());
    assert.ok(r.at >= started && r.at <= Date.now());
  });

  test('read: a value returned to a script agent', async () => {
    const before = await records(rig);
    assert.equal(
      ok(await rig.agent(['get', 'Stripe Prod', '--field', 'key'], robot)),
      'sk_live_x\n',
    );
    const fresh = await newSince(rig, before);
    assert.equal(fresh.length, 1, JSON.stringify(fresh));
    assert.deepEqual(
      { ...fresh[0], at: 0, time: '', seq: 0, source: '' },
      {
        seq: 0,
        at: 0,
        time: '',
        action: 'read',
        actor: 'cli:robot',
        source: '',
        outcome: 'ok',
        entry: 'Stripe Prod',
        field: 'key',
        host: null,
        subject: null,
      },
    );
  });

  const denials: {
    what: string;
    args: string[];
    code: 'VLT-2041' | 'VLT-2044';
    entry: string;
    field: string;
  }[] = [
    {
      what: 'out of scope',
      args: ['get', 'Payroll'],
      code: 'VLT-2041',
      entry: 'Payroll',
      field: 'password',
    },
    {
      what: 'nonexistent',
      args: ['get', 'No Such'],
      code: 'VLT-2041',
      entry: 'No Such',
      field: 'password',
    },
    {
      what: 'missing field',
      args: ['get', 'Stripe Prod', '--field', 'pin'],
      code: 'VLT-2044',
      entry: 'Stripe Prod',
      field: 'pin',
    },
  ];
  for (const d of denials) {
    test(`denied (${d.what}): outcome ${d.code}`, async () => {
      const before = await records(rig);
      assertRefused(await rig.agent(d.args, claude), d.code, d.what);
      const fresh = await newSince(rig, before);
      assert.equal(fresh.length, 1, JSON.stringify(fresh));
      const r = fresh[0] as Rec;
      assert.equal(r.action, 'denied');
      assert.equal(r.actor, 'cli:claude');
      assert.equal(r.outcome, d.code);
      assert.equal(r.entry, d.entry);
      assert.equal(r.field, d.field);
      assert.match(r.source, /^pid:[0-9]+ uid:[0-9]+$/);
    });
  }

  test('agent_revoke, then denied for the revoked token', async () => {
    const gone = await rig.addAgent('gone', ['Stripe Prod']);
    tokens.push(gone);
    assert.equal(ok(await rig.agent(['get', 'Stripe Prod'], gone)), 'hunter3\n');
    const before = await records(rig);
    ok(await rig.owner(['agent', 'revoke', 'gone']));
    const revoked = await newSince(rig, before);
    assert.equal(revoked.length, 1, JSON.stringify(revoked));
    assert.equal(revoked[0]?.action, 'agent_revoke');
    assert.equal(revoked[0]?.actor, 'owner');
    assert.equal(revoked[0]?.subject, 'gone');

    const r = await rig.agent(['get', 'Stripe Prod'], gone);
    assertRefused(r, 'VLT-2040', 'revoked token');
    const fresh = await newSince(rig, [...before, ...revoked]);
    assert.ok(fresh.length >= 1, 'the refused read left no record');
    for (const rec of fresh) {
      assert.equal(rec.action, 'denied', JSON.stringify(rec));
      assert.equal(rec.actor, 'cli:gone');
      assert.equal(rec.outcome, 'VLT-2040');
    }
  });

  test('limited: a read over the per-minute limit', async () => {
    const greedy = await rig.addAgent(
      'greedy',
      ['Stripe Prod', 'GitHub'],
      ['--per-minute', '1', '--per-hour', '10'],
    );
    tokens.push(greedy);
    ok(await rig.agent(['get', 'Stripe Prod'], greedy));
    const before = await records(rig);
    assertRefused(await rig.agent(['get', 'GitHub'], greedy), 'VLT-2042', 'over the limit');
    const fresh = await newSince(rig, before);
    assert.equal(fresh.length, 1, JSON.stringify(fresh));
    assert.equal(fresh[0]?.action, 'limited');
    assert.equal(fresh[0]?.actor, 'cli:greedy');
    assert.equal(fresh[0]?.outcome, 'VLT-2042');
    assert.equal(fresh[0]?.entry, 'GitHub');
  });

  test('agent_lock, then locked for every read of the agent', async () => {
    const locky = await rig.addAgent('locky', ['Stripe Prod']);
    tokens.push(locky);
    const before = await records(rig);
    ok(await rig.owner(['agent', 'lock', 'locky']));
    const locked = await newSince(rig, before);
    assert.equal(locked.length, 1, JSON.stringify(locked));
    assert.equal(locked[0]?.action, 'agent_lock');
    assert.equal(locked[0]?.actor, 'owner');
    assert.equal(locked[0]?.subject, 'locky');

    assertRefused(await rig.agent(['get', 'Stripe Prod'], locky), 'VLT-2043', 'locked agent');
    const fresh = await newSince(rig, [...before, ...locked]);
    assert.equal(fresh.length, 1, JSON.stringify(fresh));
    assert.equal(fresh[0]?.action, 'locked');
    assert.equal(fresh[0]?.actor, 'cli:locky');
    assert.equal(fresh[0]?.outcome, 'VLT-2043');
    assert.equal(fresh[0]?.entry, 'Stripe Prod');
  });

  test('every owner and agent action of the section appears in the log', async () => {
    const actions = new Set((await records(rig)).map((r) => r.action));
    for (const a of [
      'vault_create',
      'entry_add',
      'field_add',
      'rotate',
      'entry_rm',
      'agent_add',
      'agent_scope',
      'agent_limits',
      'agent_lock',
      'agent_revoke',
      'ai_read',
      'read',
      'denied',
      'limited',
      'locked',
    ]) {
      assert.ok(actions.has(a), `no ${a} record`);
    }
  });

  test('the listing: TIME ACTION ENTRY ACTOR, one row per record, local time', async () => {
    const all = await records(rig);
    // A zone 5 h 45 min east of UTC: a listing in UTC would show other clock times.
    const table = ok(await rig.owner(['audit'], { env: { TZ: 'Asia/Kathmandu' } }));
    const lines = table.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^TIME\s+ACTION\s+ENTRY\s+ACTOR\s+ABOUT$/);
    const rows = lines.slice(1);
    assert.equal(rows.length, all.length);
    for (const [i, line] of rows.entries()) {
      const r = all[i] as Rec;
      const cells = line.split(/\s{2,}/);
      // ABOUT, the fifth, only when the record names whom (or what) it was about.
      assert.equal(cells.length, r.subject === null ? 4 : 5, line);
      assert.match(cells[0] ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.equal(cells[0], wallClock(r.at, 5 * 60 + 45), line);
      assert.equal(cells[1], r.action, line);
      const entry = r.entry === null ? '-' : /\s/.test(r.entry) ? JSON.stringify(r.entry) : r.entry;
      assert.equal(cells[2], entry, line);
      assert.equal(cells[3], r.actor, line);
      if (r.subject !== null) assert.equal(cells[4], r.subject, line);
    }
    // The same listing in UTC differs in its clock times only.
    const utc = ok(await rig.owner(['audit'], { env: { TZ: 'UTC' } }));
    const utcTimes = utc
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.slice(0, 19));
    assert.deepEqual(
      utcTimes,
      all.map((r) => wallClock(r.at, 0)),
    );
  });

  test('--agent shows only records by or about that agent', async () => {
    const all = await records(rig);
    for (const name of ['claude', 'robot', 'locky', 'gone']) {
      const mine = await records(rig, ['--agent', name]);
      assert.deepEqual(mine, all.filter(byOrAbout(name)), name);
      assert.ok(
        mine.some((r) => r.actor === 'owner' && r.subject === name),
        `${name}: about`,
      );
      assert.ok(
        mine.some((r) => r.actor === `cli:${name}`),
        `${name}: by`,
      );
    }
    const claudeTable = ok(await rig.owner(['audit', '--agent', 'claude']))
      .trimEnd()
      .split('\n')
      .slice(1);
    assert.equal(claudeTable.length, all.filter(byOrAbout('claude')).length);
    for (const line of claudeTable) assert.match(line, /\s(cli:claude|owner)(\s{2,}claude)?$/);
    // An agent nobody knows: no records, still a success.
    assert.deepEqual(await records(rig, ['--agent', 'nobody']), []);
  });

  test('--since: a recent span includes the records, a future time none, a cut in between', async () => {
    const all = await records(rig);
    assert.deepEqual(await records(rig, ['--since', '10m']), all);
    assert.deepEqual(await records(rig, ['--since', '1d']), all);

    const future = await rig.owner(['audit', '--since', '2099-01-01 00:00']);
    assert.equal(future.code, 0, future.stderr);
    assert.match(future.stdout, /^TIME\s+ACTION\s+ENTRY\s+ACTOR\s+ABOUT\n$/);
    assert.deepEqual(await records(rig, ['--since', '2099-01-01T00:00:00Z']), []);

    // From the time of a record in the middle: that record and every later one.
    const mid = all[Math.floor(all.length / 2)] as Rec;
    const cut = await records(rig, ['--since', new Date(mid.at).toISOString()]);
    assert.deepEqual(
      cut,
      all.filter((r) => r.at >= mid.at),
    );
    assert.ok(cut.length < all.length && cut.some((r) => r.seq === mid.seq));
  });

  for (const bad of ['yesterday', '10 minutes', '-5m', '2026-13-45 99:99']) {
    test(`--since ${JSON.stringify(bad)} is refused with VLT-1002`, async () => {
      const r = await rig.owner(['audit', '--since', bad]);
      assertRefused(r, 'VLT-1002', bad);
      assert.equal(r.code, 65);
    });
  }

  test('no value, token or passphrase in any record', async () => {
    // The sentinel is released once (and rotated) so the log has every chance to show it.
    const payroller = await rig.addAgent('payroller', ['Payroll'], ['--kind', 'script']);
    tokens.push(payroller);
    assert.equal(ok(await rig.agent(['get', 'Payroll'], payroller)), `${sentinel}\n`);
    await rig.set('Payroll', rotated);
    assert.equal(ok(await rig.agent(['get', 'Payroll'], payroller)), `${rotated}\n`);
    assertRefused(await rig.agent(['get', 'Payroll'], claude), 'VLT-2041');

    const json = ok(await rig.owner(['audit', '--json']));
    const table = ok(await rig.owner(['audit']));
    const recs = parseLines(json);
    assert.ok(recs.some((r) => r.entry === 'Payroll' && r.actor === 'cli:payroller'));
    assert.ok(recs.some((r) => r.entry === 'Payroll' && r.action === 'rotate'));
    for (const [what, out] of [
      ['json', json],
      ['table', table],
    ] as const) {
      assert.ok(!out.includes(sentinel), `${what}: the planted secret`);
      assert.ok(!out.includes(rotated), `${what}: the rotated secret`);
      assert.ok(!out.includes('SENTINEL'), `${what}: part of a secret`);
      assert.ok(!out.includes('hunter'), `${what}: a value`);
      assert.ok(!out.includes(PASSPHRASE), `${what}: the passphrase`);
      for (const t of tokens) {
        assert.ok(!out.includes(t), `${what}: a token`);
        assert.ok(!out.includes(t.slice(-24)), `${what}: part of a token`);
      }
    }
  });
});

describe('audit --follow', () => {
  const rig = new Rig();
  let alice = '';
  let bob = '';
  before(async () => {
    await rig.create();
    await rig.set('Alpha', 'alpha-value');
    await rig.set('Beta', 'beta-value');
    alice = await rig.addAgent('alice', ['Alpha', 'Beta']);
    bob = await rig.addAgent('bob', ['Alpha', 'Beta']);
  });
  after(() => rig.dispose());

  test('--follow --json prints the log, then each new record as it is written', async () => {
    const existing = await records(rig);
    const child = spawnCli(['audit', '--follow', '--json'], rig.env);
    const c = collect(child);
    child.stdin.end();
    try {
      const lines = () => parseLines(c.out().slice(0, c.out().lastIndexOf('\n') + 1));
      assert.ok(
        await waitFor(() => lines().length >= existing.length),
        `the existing records never came: ${c.out()} ${c.err()}`,
      );
      assert.deepEqual(lines().slice(0, existing.length), existing);

      assert.equal(ok(await rig.agent(['get', 'Alpha'], alice)), 'alpha-value\n');
      assert.ok(
        await waitFor(() => lines().some((r) => r.action === 'ai_read' && r.actor === 'cli:alice')),
        `alice's read never streamed: ${c.out()} ${c.err()}`,
      );
      assertRefused(await rig.agent(['get', 'Nope'], bob), 'VLT-2041');
      assert.equal(ok(await rig.agent(['get', 'Beta'], bob)), 'beta-value\n');
      assert.ok(
        await waitFor(() => lines().some((r) => r.action === 'ai_read' && r.actor === 'cli:bob')),
        `bob's read never streamed: ${c.out()} ${c.err()}`,
      );
      // What streamed is exactly what the log holds, in order, with every field.
      const streamed = lines();
      assert.deepEqual(streamed, await records(rig));
      const tail = streamed.slice(existing.length);
      assert.deepEqual(
        tail.map((r) => [r.action, r.actor, r.entry, r.outcome]),
        [
          ['ai_read', 'cli:alice', 'Alpha', 'ok'],
          ['denied', 'cli:bob', 'Nope', 'VLT-2041'],
          ['ai_read', 'cli:bob', 'Beta', 'ok'],
        ],
      );
      for (const r of tail) assert.deepEqual(Object.keys(r).sort(), [...FIELDS].sort());
      assert.equal(c.err(), '');
    } finally {
      await stopChild(child, c.exited);
    }
  });

  test('--follow --agent streams only that agent’s records', async () => {
    const child = spawnCli(['audit', '--follow', '--json', '--agent', 'bob'], rig.env);
    const c = collect(child);
    child.stdin.end();
    try {
      const lines = () => parseLines(c.out().slice(0, c.out().lastIndexOf('\n') + 1));
      // The backlog first: bob's agent_add among it.
      assert.ok(
        await waitFor(() => lines().some((r) => r.action === 'agent_add' && r.subject === 'bob')),
        `no backlog: ${c.out()} ${c.err()}`,
      );
      const backlog = lines().length;
      // Alice reads first; bob's read comes after it in the log, so once it has
      // streamed, alice's would have too if the filter let it through.
      ok(await rig.agent(['get', 'Beta'], alice));
      ok(await rig.owner(['agent', 'limits', 'alice', '--per-minute', '4']));
      ok(await rig.agent(['get', 'Alpha'], bob));
      assert.ok(
        await waitFor(() => lines().some((r) => r.actor === 'cli:bob' && r.entry === 'Alpha')),
        `bob's read never streamed: ${c.out()} ${c.err()}`,
      );
      const streamed = lines();
      assert.ok(streamed.length > backlog);
      for (const r of streamed) assert.ok(byOrAbout('bob')(r), `not bob's: ${JSON.stringify(r)}`);
      assert.deepEqual(streamed, (await records(rig)).filter(byOrAbout('bob')));
    } finally {
      await stopChild(child, c.exited);
    }
  });

  test('--follow without --json prints the header, then rows', async () => {
    const child = spawnCli(['audit', '--follow'], rig.env);
    const c = collect(child);
    child.stdin.end();
    try {
      assert.ok(
        await waitFor(() => /^TIME\s+ACTION\s+ENTRY\s+ACTOR\s+ABOUT\s*\n/.test(c.out())),
        `no header: ${c.out()} ${c.err()}`,
      );
      ok(await rig.agent(['get', 'Alpha'], alice));
      const row = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+ai_read\s+Alpha\s+cli:alice$/m;
      const count = () =>
        c
          .out()
          .split('\n')
          .filter((l) => row.test(l)).length;
      const allReads = (await records(rig)).filter(
        (r) => r.action === 'ai_read' && r.actor === 'cli:alice' && r.entry === 'Alpha',
      ).length;
      assert.ok(await waitFor(() => count() === allReads), `rows: ${c.out()} ${c.err()}`);
    } finally {
      await stopChild(child, c.exited);
    }
  });
});

describe('audit --verify', () => {
  /** A vault with a dozen records of every kind; returns the rig and its records. */
  async function populated(): Promise<{ rig: Rig; all: Rec[] }> {
    const rig = new Rig();
    await rig.create();
    await rig.set('One', 'v1');
    await rig.set('Two', 'v2');
    await rig.set('One', 'v1b');
    const token = await rig.addAgent('agent', ['One']);
    ok(await rig.agent(['get', 'One'], token));
    assertRefused(await rig.agent(['get', 'Two'], token), 'VLT-2041');
    ok(await rig.agent(['get', 'One'], token));
    const all = await records(rig);
    assert.ok(all.length >= 8, `only ${all.length} records`);
    return { rig, all };
  }

  function assertBroken(r: Result, record: number, what: string): void {
    const body = assertRefused(r, 'VLT-3003', what);
    assert.equal(r.code, 74);
    assert.match(body, new RegExp(`\\brecord ${record}\\b`), `${what}: names record ${record}`);
  }

  const key = (seq: number) => `audit/${String(seq).padStart(12, '0')}`;

  /** Stops the host and edits the store file directly. */
  async function tamper(rig: Rig, edit: (db: RawStore) => void): Promise<void> {
    await rig.stop();
    await editRecords(rig.vaultDir, edit);
  }

  test('an intact chain verifies, and keeps verifying as it grows', async () => {
    const { rig, all } = await populated();
    try {
      const r = await rig.owner(['audit', '--verify']);
      assert.equal(r.code, 0, r.stderr);
      // The listing just made (an owner command) anchored every record so far.
      const n = all.length;
      assert.equal(
        r.stdout,
        `audit chain verified: ${n} records; anchored up to record ${n} by the owner, 0 after it unanchored\n`,
      );
      assert.equal(r.stderr, '');
      await rig.set('Three', 'v3');
      // Across a host restart too.
      await rig.stop();
      assert.equal(
        ok(await rig.owner(['audit', '--verify'])),
        `audit chain verified: ${n + 1} records; anchored up to record ${n + 1} by the owner, 0 after it unanchored\n`,
      );
    } finally {
      await rig.dispose();
    }
  });

  test('a changed action is caught, naming the record', async () => {
    const { rig, all } = await populated();
    try {
      const target = all.find((r) => r.action === 'ai_read') as Rec;
      await tamper(rig, (db) => {
        const rec = db.get(key(target.seq)) as Record<string, unknown>;
        assert.equal(rec.action, 'ai_read');
        db.putSync(key(target.seq), { ...rec, action: 'read' });
      });
      assertBroken(await rig.owner(['audit', '--verify']), target.seq, 'changed action');
    } finally {
      await rig.dispose();
    }
  });

  test('a deleted middle record is caught, naming the record', async () => {
    const { rig, all } = await populated();
    try {
      const seq = Math.floor(all.length / 2);
      await tamper(rig, (db) => {
        assert.ok(db.get(key(seq)));
        assert.equal(db.removeSync(key(seq)), true);
      });
      assertBroken(await rig.owner(['audit', '--verify']), seq, 'deleted record');
    } finally {
      await rig.dispose();
    }
  });

  test('two swapped records are caught, naming the first', async () => {
    const { rig, all } = await populated();
    try {
      const a = 3;
      const b = all.length - 2;
      await tamper(rig, (db) => {
        const ra: unknown = db.get(key(a));
        const rb: unknown = db.get(key(b));
        assert.ok(ra && rb);
        db.putSync(key(a), rb);
        db.putSync(key(b), ra);
      });
      assertBroken(await rig.owner(['audit', '--verify']), a, 'swapped records');
    } finally {
      await rig.dispose();
    }
  });

  test('a deleted last record is caught though the head still names it', async () => {
    const { rig, all } = await populated();
    try {
      const last = all.length;
      await tamper(rig, (db) => {
        const head = db.get('audit-head') as { seq: number };
        assert.equal(head.seq, last);
        assert.equal(db.removeSync(key(last)), true);
      });
      assertBroken(await rig.owner(['audit', '--verify']), last, 'truncated log');
    } finally {
      await rig.dispose();
    }
  });

  /** The records from `from` on re-chained, as an attacker who can hash but not MAC does it. */
  function rechain(db: RawStore, records: AuditRecord[]): void {
    let prev = records[0]?.prev ?? Buffer.alloc(32);
    records.forEach((r, i) => {
      const base = { ...r, seq: i + 1, prev };
      const { hash: _old, ...rest } = base;
      void _old;
      const hash = recordHash(rest);
      db.putSync(key(i + 1), { ...rest, hash });
      prev = hash;
    });
    db.putSync('audit-head', { seq: records.length, hash: prev });
  }

  function readAll(db: RawStore): AuditRecord[] {
    return [...db.getRange({ start: 'audit/', end: 'audit0' })].map((r) => r.value as AuditRecord);
  }

  test('agent records after the last owner command are reported unanchored', async () => {
    const { rig, all } = await populated();
    try {
      const token = await rig.addAgent('later', ['One']);
      ok(await rig.agent(['get', 'One'], token));
      ok(await rig.agent(['get', 'One'], token));
      const n = all.length + 1;
      assert.equal(
        ok(await rig.owner(['audit', '--verify'])),
        `audit chain verified: ${n + 2} records; anchored up to record ${n} by the owner, 2 after it unanchored\n`,
      );
    } finally {
      await rig.dispose();
    }
  });

  test('a record deleted before the anchor and the rest re-chained is caught', async () => {
    const { rig, all } = await populated();
    try {
      await tamper(rig, (db) => {
        const records = readAll(db);
        assert.equal(records.length, all.length);
        const deny = records.findIndex((r) => r.action === 'denied');
        assert.ok(deny > 0);
        for (const r of records) db.removeSync(key(r.seq));
        rechain(db, [...records.slice(0, deny), ...records.slice(deny + 1)]);
      });
      const body = assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'rechained');
      assert.match(body, /anchor.*record \d+ is missing|rewritten|cut/);
    } finally {
      await rig.dispose();
    }
  });

  test('a re-chained rewrite before the anchor stays caught after more owner commands, verify included', async () => {
    const { rig } = await populated();
    try {
      await tamper(rig, (db) => {
        const records = readAll(db);
        const deny = records.findIndex((r) => r.action === 'denied');
        for (const r of records) db.removeSync(key(r.seq));
        rechain(db, [...records.slice(0, deny), ...records.slice(deny + 1)]);
      });
      // The owner's next commands must not vouch for the rewritten log.
      ok(await rig.owner(['entry', 'ls']));
      assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'first verify');
      ok(await rig.owner(['agent', 'ls']));
      const body = assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'second');
      assert.match(body, /anchor.*record \d+ is missing|rewritten|cut/);
    } finally {
      await rig.dispose();
    }
  });

  test('a log cut before the anchor, its head moved back, is caught', async () => {
    const { rig, all } = await populated();
    try {
      await tamper(rig, (db) => {
        const records = readAll(db);
        const keep = records.slice(0, records.length - 3);
        for (const r of records.slice(keep.length)) db.removeSync(key(r.seq));
        const last = keep.at(-1) as AuditRecord;
        db.putSync('audit-head', { seq: last.seq, hash: last.hash });
      });
      const body = assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'cut');
      assert.match(body, new RegExp(`cut: anchored record ${all.length} is missing`));
    } finally {
      await rig.dispose();
    }
  });

  test('a re-chained log with the anchor removed is caught', async () => {
    const { rig } = await populated();
    try {
      await tamper(rig, (db) => {
        db.removeSync('audit-anchor');
      });
      const body = assertRefused(await rig.owner(['audit', '--verify']), 'VLT-3003', 'no anchor');
      assert.match(body, /no anchor/);
    } finally {
      await rig.dispose();
    }
  });
});

test('names an agent asks for with terminal controls or bidi overrides reach the owner’s audit escaped, and read back exactly', async () => {
  const rig = new Rig();
  try {
    await rig.create();
    await rig.set('Mine', `mine-${hex(6)}`);
    const token = await rig.addAgent('probe', ['Mine']);
    // CSI as one C1 character (ED: clear the screen), an OSC 52 clipboard
    // write, a right-to-left override that would turn the line around.
    const names = ['x\u009b2Jy', 'x\u001b]52;c;cHduZWQ=\u0007y', 'ok \u202eyrros'];
    for (const n of names) assertRefused(await rig.agent(['get', n], token), 'VLT-2041');
    const before = (await records(rig)).length;
    const text = ok(await rig.owner(['audit']));
    const json = ok(await rig.owner(['audit', '--json']));
    for (const out of [text, json]) {
      assert.doesNotMatch(
        out,
        /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u,
      );
    }
    // The text says which name it was, as JSON would; --json parses to the very names.
    for (const n of names)
      assert.ok(
        text.includes(
          JSON.stringify(n).replace(
            /[\u0080-\u009f\u202e]/gu,
            (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
          ),
        ),
        n,
      );
    const asked = parseLines(json)
      .slice(0, before)
      .filter((r) => r.actor === 'cli:probe' && r.action === 'denied')
      .map((r) => r.entry);
    assert.deepEqual(asked, names);
  } finally {
    await rig.dispose();
  }
});
