// The dashboard's components against a fake stdout (ink-testing-library):
// agent states readable without colour, usage against limits, alarms in the
// audit feed, a typed secret in no frame, a token shown once, and a footer
// that is the key table. Keys go through the real reducer and key table.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { useInput } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { useReducer } from 'react';
import type { AgentSummary, AuditView, EntrySummary } from '../../tui/api.js';
import { Screen } from '../../tui/app.js';
import { AgentsTable } from '../../tui/components/AgentsTable.js';
import { AuditFeed } from '../../tui/components/AuditFeed.js';
import { EntriesView } from '../../tui/components/EntriesView.js';
import { KEY_TABLE, bindingsFor, keyPresses, shortHelp } from '../../tui/keys.js';
import { initialState, reduce, type Action, type State } from '../../tui/state.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
// Escape sequences (colour) out, so assertions read what a colour-blind user reads.
const strip = (s: string | undefined) => (s ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

afterEach(() => cleanup());

function agent(
  name: string,
  state: AgentSummary['state'],
  usage = { minute: 0, hour: 0 },
): AgentSummary {
  return {
    id: `id-${name}`,
    name,
    kind: 'ai',
    state,
    scope: ['github'],
    limits: { perMinute: 3, perHour: 10 },
    usage,
    valuesLeft: 600,
    violations: state === 'active' ? [] : [T0],
    lockedAt: state === 'locked' ? T0 : null,
    created: T0,
  };
}

function entry(name: string): EntrySummary {
  return {
    name,
    tier: 'default',
    fields: [{ name: 'password', version: 4, updated: T0 }],
    hosts: ['api.github.com'],
    created: T0,
  };
}

function record(seq: number, action: AuditView['action'], outcome = 'ok'): AuditView {
  return {
    seq,
    at: T0 + seq * 1000,
    action,
    actor: 'cli:claude',
    source: 'pid:7',
    outcome,
    entry: `entry${seq}`,
    field: 'password',
    host: null,
    subject: null,
  };
}

/** Waits (with a deadline, never a fixed sleep) until `ok` holds. */
async function until(ok: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const loaded = reduce(
  initialState(T0),
  {
    type: 'snapshot',
    agents: [agent('claude', 'active', { minute: 2, hour: 7 }), agent('ci', 'violation')],
    entries: [entry('github'), entry('aws')],
    audit: [record(1, 'read')],
  },
  T0,
);

/** The real reducer and key table behind the real screen; `dispatch` for what the vault would say. */
function harness(initial: State) {
  const seen: { state: State; dispatch: (a: Action) => void } = {
    state: initial,
    dispatch: () => {},
  };
  function Harness() {
    const [state, dispatch] = useReducer((s: State, a: Action) => reduce(s, a, T0), initial);
    seen.state = state;
    seen.dispatch = dispatch;
    useInput((input, key) => {
      for (const press of keyPresses(input, key)) dispatch({ type: 'key', key: press });
    });
    return <Screen state={state} rows={24} vault="test" />;
  }
  return { ...render(<Harness />), seen };
}

test('each agent state reads differently without colour: active, violation recorded, locked', () => {
  const { lastFrame } = render(
    <AgentsTable
      agents={[agent('alpha', 'active'), agent('beta', 'violation'), agent('gamma', 'locked')]}
      selected={0}
      rows={5}
      active
    />,
  );
  const lines = strip(lastFrame()).split('\n');
  const row = (name: string) => lines.find((l) => l.includes(name)) ?? '';
  assert.match(row('alpha'), /● active/);
  assert.match(row('beta'), /▲ violation recorded/);
  assert.match(row('gamma'), /■ LOCKED/);
  assert.doesNotMatch(row('alpha'), /violation|LOCKED/);
  assert.doesNotMatch(row('beta'), /LOCKED|active/);
});

test('usage shows distinct reads this minute and hour against the limits', () => {
  const { lastFrame } = render(
    <AgentsTable
      agents={[agent('claude', 'active', { minute: 2, hour: 7 })]}
      selected={0}
      rows={3}
      active
    />,
  );
  const line = strip(lastFrame())
    .split('\n')
    .find((l) => l.includes('claude'));
  assert.match(line ?? '', /2\/3\s+7\/10/);
});

test('an agent under request caveats shows them in its row: each entry and how many rules', () => {
  const bound: AgentSummary = {
    ...agent('claude', 'active'),
    caveats: [{ entry: 'GitHub', rules: ['GET /repos/acme/**', 'POST /graphql'] }],
  };
  const { lastFrame } = render(
    <AgentsTable agents={[bound, agent('other', 'active')]} selected={0} rows={3} active />,
  );
  const lines = strip(lastFrame()).split('\n');
  assert.match(lines.find((l) => l.includes('claude')) ?? '', /caveats: GitHub \(2 rules\)/);
  assert.doesNotMatch(lines.find((l) => l.includes('other')) ?? '', /caveats/);
});

test('the audit feed marks violations and lockdowns, and nothing else', () => {
  const records = [
    record(1, 'read'),
    record(2, 'limited', 'VLT-2042'),
    record(3, 'locked', 'VLT-2043'),
    record(4, 'agent_lock'),
  ];
  const { lastFrame } = render(<AuditFeed records={records} rows={10} />);
  const lines = strip(lastFrame()).split('\n');
  assert.match(lines[0] ?? '', /TIME\s+ACTION\s+ENTRY\s+ACTOR\s+OUTCOME/);
  const row = (e: string) => lines.find((l) => l.includes(e)) ?? '';
  assert.match(row('entry1/'), /\sread\s/);
  assert.doesNotMatch(row('entry1/'), /[▲■]/);
  assert.match(row('entry2/'), /▲ limited.*VLT-2042/);
  assert.match(row('entry3/'), /■ locked.*VLT-2043/);
  assert.match(row('entry4/'), /■ agent_lock/);
});

test('a value pasted with its Enter in one read fills the form and submits it', async () => {
  const { stdin, lastFrame, seen } = harness(loaded);
  stdin.write('\t');
  await until(() => seen.state.view === 'entries', 'the entries view');
  stdin.write('r');
  await until(() => strip(lastFrame()).includes('Rotate a field of github'), 'the rotate form');
  stdin.write('\r\r');
  stdin.write('pasted-value\r');
  await until(() => seen.state.request !== null, 'the request');
  assert.deepEqual(seen.state.request?.call, {
    op: 'setField',
    entry: 'github',
    field: 'password',
    value: 'pasted-value',
  });
});

test('a rotated value typed one key at a time appears in no frame', async () => {
  const sentinel = 'S3ntinel-f4ce-0ff';
  const { stdin, frames, lastFrame, seen } = harness(loaded);
  stdin.write('\t');
  await until(() => seen.state.view === 'entries', 'the entries view');
  stdin.write('r');
  await until(() => strip(lastFrame()).includes('Rotate a field of github'), 'the rotate form');
  let n = 0;
  for (const c of sentinel) {
    stdin.write(c);
    n++;
    await until(() => strip(lastFrame()).includes(`(hidden, ${n} char`), `${n} chars`);
  }
  stdin.write('\r');
  await until(() => seen.state.request !== null, 'the request');
  assert.deepEqual(seen.state.request?.call, {
    op: 'setField',
    entry: 'github',
    field: 'password',
    value: sentinel,
  });
  seen.dispatch({ type: 'result', id: seen.state.request?.id ?? -1, version: 5 });
  await until(() => strip(lastFrame()).includes('version 5'), 'the result');
  assert.ok(frames.length > sentinel.length);
  for (const frame of frames) {
    // Not the value, and not any four characters of it in a row.
    for (let i = 0; i + 4 <= sentinel.length; i++) {
      assert.ok(
        !frame.includes(sentinel.slice(i, i + 4)),
        `frame shows ${sentinel.slice(i, i + 4)}`,
      );
    }
  }
  assert.ok(!JSON.stringify(seen.state).includes(sentinel));
});

test("a new agent's token is shown once, then gone from the screen and the state", async () => {
  const token = 'vlt_1_tokentokentoken';
  const { stdin, lastFrame, frames, seen } = harness(loaded);
  stdin.write('n');
  await until(() => strip(lastFrame()).includes('New agent'), 'the form');
  for (const c of 'deploy') stdin.write(c);
  await until(() => strip(lastFrame()).includes('deploy'), 'the name');
  for (let i = 0; i < 5; i++) stdin.write('\r');
  await until(() => seen.state.request !== null, 'the request');
  seen.dispatch({ type: 'result', id: seen.state.request?.id ?? -1, token });
  await until(() => strip(lastFrame()).includes(token), 'the token');
  assert.match(strip(lastFrame()), /shown once, copy it now/);
  const shownAt = frames.length;
  stdin.write('j');
  await until(() => !strip(lastFrame()).includes(token), 'the token to go');
  assert.equal(seen.state.token, null);
  assert.ok(!JSON.stringify(seen.state).includes(token));
  stdin.write('?');
  await until(() => strip(lastFrame()).includes('Keys (any key closes this)'), 'help');
  for (const frame of frames.slice(shownAt + 1)) assert.ok(!frame.includes(token));
});

test('the footer and the help screen are the key table', async () => {
  const { stdin, lastFrame } = harness(loaded);
  await until(() => strip(lastFrame()).includes('claude'), 'the first frame');
  const footer = strip(lastFrame());
  for (const b of bindingsFor('agents').filter((x) => x.footer !== false)) {
    assert.ok(footer.includes(`${b.label} ${shortHelp(b)}`), `${b.label} in the footer`);
  }
  stdin.write('\t');
  await until(() => strip(lastFrame()).includes('[Entries]'), 'the entries view');
  assert.ok(strip(lastFrame()).includes('r rotate'));
  assert.ok(!strip(lastFrame()).includes('x revoke'));
  stdin.write('?');
  await until(() => strip(lastFrame()).includes('Keys (any key closes this)'), 'help');
  const help = strip(lastFrame());
  for (const b of KEY_TABLE.filter((x) => x.modes.includes('agents'))) {
    assert.ok(help.includes(b.help), `${b.help} in the help screen`);
  }
});

test('the screen fits 80x24 with every view', () => {
  const tall = reduce(
    loaded,
    {
      type: 'snapshot',
      agents: Array.from({ length: 30 }, (_, i) => agent(`agent${i}`, 'active')),
      audit: Array.from({ length: 100 }, (_, i) => record(i + 1, 'read')),
    },
    T0,
  );
  for (const view of ['agents', 'entries', 'audit'] as const) {
    const { lastFrame } = render(<Screen state={{ ...tall, view }} rows={24} vault="v" />);
    assert.ok(strip(lastFrame()).split('\n').length <= 23, `${view} fits`);
  }
});

test('until the first data the screen says loading, never an empty vault', () => {
  const empty = initialState(T0);
  const { lastFrame } = render(<Screen state={empty} rows={24} vault="v" />);
  const frame = lastFrame() ?? '';
  assert.match(frame, /loading…/);
  assert.doesNotMatch(frame, /0 agents|no audit records yet|no agents yet/);
  cleanup();
  const loaded = reduce(empty, { type: 'snapshot', agents: [], entries: [], audit: [] }, T0);
  const after = render(<Screen state={loaded} rows={24} vault="v" />).lastFrame() ?? '';
  assert.match(after, /0 agents/);
  assert.match(after, /no audit records yet/);
  assert.doesNotMatch(after, /loading…/);
});

test('a field a sweep found reads EXPOSED in the entry list until set anew', () => {
  const found = {
    ...entry('GitHub'),
    fields: [{ name: 'token', version: 2, updated: T0, exposed: T0 }],
  };
  const { lastFrame, rerender } = render(
    <EntriesView entries={[found, entry('Stripe')]} selected={0} rows={5} />,
  );
  const lines = strip(lastFrame()).split('\n');
  assert.match(lines.find((l) => l.includes('GitHub')) ?? '', /token v2 EXPOSED/);
  assert.doesNotMatch(lines.find((l) => l.includes('Stripe')) ?? '', /EXPOSED/);
  rerender(<EntriesView entries={[entry('GitHub')]} selected={0} rows={5} />);
  assert.doesNotMatch(strip(lastFrame()), /EXPOSED/);
});
