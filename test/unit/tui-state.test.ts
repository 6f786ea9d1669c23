// The dashboard's reducer: keys from the one table, forms, requests and their
// results, the audit ring; and as a property, that no action sequence throws,
// the ring stays bounded and a typed secret is gone once its form has closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { AgentSummary, AuditView, EntrySummary } from '../../tui/api.js';
import {
  KEY_TABLE,
  bindingFor,
  footerText,
  keyName,
  keyPresses,
  rawKeyName,
} from '../../tui/keys.js';
import {
  AUDIT_RING,
  NOTICE_MS,
  initialState,
  mergeAudit,
  modeOf,
  reduce,
  type Action,
  type State,
} from '../../tui/state.js';
import { VaultError } from '../../src/core/errors.js';
import { errorLine } from '../../tui/state.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

function agent(name: string, state: AgentSummary['state'] = 'active'): AgentSummary {
  return {
    id: `id-${name}`,
    name,
    kind: 'ai',
    state,
    scope: ['github'],
    limits: { perMinute: 3, perHour: 10 },
    usage: { minute: 1, hour: 2 },
    valuesLeft: 600,
    violations: [],
    lockedAt: state === 'locked' ? T0 : null,
    created: T0,
  };
}

function entry(name: string): EntrySummary {
  return {
    name,
    tier: 'default',
    fields: [{ name: 'password', version: 2, updated: T0 }],
    hosts: [],
    created: T0,
  };
}

function record(seq: number, action: AuditView['action'] = 'read'): AuditView {
  return {
    seq,
    at: T0 + seq * 1000,
    action,
    actor: 'cli:claude',
    source: 'pid:1',
    outcome: 'ok',
    entry: 'github',
    field: 'password',
    host: null,
    subject: null,
  };
}

/** Runs actions from a state, the clock one second on per action. */
function run(s: State, ...actions: Action[]): State {
  return actions.reduce((acc, a) => reduce(acc, a, acc.now + 1000), s);
}

const press = (name: string, text = ''): Action => ({ type: 'key', key: { name, text } });
/** Typing text one character at a time, as a terminal sends it. */
const type = (text: string): Action[] => Array.from(text, (c) => press(c, c));

const loaded = run(initialState(T0), {
  type: 'snapshot',
  agents: [agent('claude'), agent('ci', 'violation'), agent('bot', 'locked')],
  entries: [entry('github'), entry('aws')],
  audit: [record(1), record(2)],
});

test('the key table names every key once per mode, and the footer comes from it', () => {
  for (const b of KEY_TABLE) {
    for (const m of b.modes) {
      for (const k of b.keys)
        assert.equal(
          bindingFor(k, m),
          KEY_TABLE.find((x) => x.modes.includes(m) && x.keys.includes(k)),
        );
    }
  }
  const footer = footerText('agents');
  for (const label of ['↑↓/jk', 'Tab', 'u', 'n', 'x', 's', 'l', '?', 'q/Esc']) {
    assert.ok(footer.includes(label), `${label} in ${footer}`);
  }
  assert.ok(!footerText('entries').includes('x revoke'));
});

test('key names: ink key facts and raw terminal bytes agree', () => {
  assert.equal(keyName(']', { ctrl: true }).name, 'ctrl+]');
  assert.equal(rawKeyName('\x1d'), 'ctrl+]');
  assert.equal(rawKeyName('\x03'), 'ctrl+c');
  assert.equal(rawKeyName('\x1b'), 'escape');
  assert.deepEqual(keyName('q', {}), { name: 'q', text: 'q' });
  // Keys that arrive in one read (fast typing, a paste) are pressed one by one.
  assert.deepEqual(keyPresses('s3cret\r', {}), [
    { name: 's3cret', text: 's3cret' },
    { name: 'return', text: '' },
  ]);
  assert.deepEqual(keyPresses('a\tb\x1d', {}), [
    { name: 'a', text: 'a' },
    { name: 'tab', text: '' },
    { name: 'b', text: 'b' },
    { name: 'ctrl+]', text: '' },
  ]);
  assert.deepEqual(keyPresses('abc', {}), [{ name: 'abc', text: 'abc' }]);
  assert.deepEqual(keyName('', { tab: true, shift: true }), { name: 'shift+tab', text: '' });
});

test('selection moves within the list and follows the name across refreshes', () => {
  let s = run(loaded, press('down'), press('j'), press('j'));
  assert.equal(s.selected.agents, 2);
  s = run(s, { type: 'snapshot', agents: [agent('zed'), agent('bot', 'locked'), agent('claude')] });
  assert.equal(s.agents[s.selected.agents]?.name, 'bot');
  s = run(s, { type: 'snapshot', agents: [agent('one')] });
  assert.equal(s.selected.agents, 0);
});

test('revoked agents are listed after the live ones', () => {
  const s = run(loaded, {
    type: 'snapshot',
    agents: [agent('old', 'revoked'), agent('new'), agent('locked', 'locked')],
  });
  assert.deepEqual(
    s.agents.map((a) => a.name),
    ['new', 'locked', 'old'],
  );
});

test('Tab cycles agents, entries, audit; q, Esc and Ctrl-] leave', () => {
  const s = run(loaded, press('tab'));
  assert.equal(s.view, 'entries');
  assert.equal(run(s, press('tab'), press('tab')).view, 'agents');
  for (const k of ['q', 'escape', 'ctrl+]']) assert.equal(run(loaded, press(k, k)).leaving, true);
});

test('audit records are kept once each, in order, the latest AUDIT_RING', () => {
  let s = run(loaded, { type: 'audit', record: record(2) }, { type: 'audit', record: record(4) });
  s = run(
    s,
    { type: 'audit', record: record(3) },
    { type: 'snapshot', audit: [record(1), record(4)] },
  );
  assert.deepEqual(
    s.audit.map((r) => r.seq),
    [1, 2, 3, 4],
  );
  const many = mergeAudit(
    [],
    Array.from({ length: 500 }, (_, i) => record(i + 1)),
  );
  assert.equal(many.length, AUDIT_RING);
  assert.equal(many[0]?.seq, 500 - AUDIT_RING + 1);
});

test('u on a locked agent opens the unlock panel; on an active one it says so', () => {
  const onActive = run(loaded, press('u', 'u'));
  assert.equal(onActive.unlock, null);
  assert.match(onActive.notice?.text ?? '', /not locked/);
  let s = run(loaded, press('down'), press('down'), press('u', 'u'));
  assert.equal(s.unlock?.agent, 'bot');
  assert.equal(modeOf(s), 'panel');
  const id = s.unlock?.id ?? -1;
  s = run(s, { type: 'unlockUrl', id, url: 'http://localhost:1234/x' });
  assert.equal(s.unlock?.status, 'waiting');
  s = run(s, {
    type: 'unlockFailed',
    id,
    agent: 'bot',
    line: 'vault-cli: VLT-4007: Hardware key not accepted; nothing was changed.',
  });
  assert.equal(s.unlock?.status, 'failed');
  assert.match(s.notice?.text ?? '', /^vault-cli: VLT-4007: /);
  assert.equal(run(s, press('escape')).unlock, null);
});

test('rotate: the form asks for a call; the result closes it and drops the value', () => {
  let s = run(loaded, press('tab'), press('r', 'r'));
  assert.equal(s.form?.kind, 'rotate');
  assert.equal(s.form?.fields[0]?.value, 'github');
  s = run(s, ...type('n3w-s3cret'), press('return'));
  assert.deepEqual(s.request?.call, {
    op: 'setField',
    entry: 'github',
    field: 'password',
    value: 'n3w-s3cret',
  });
  assert.equal(s.form?.busy, true);
  const id = s.request?.id ?? -1;
  s = run(s, { type: 'result', id, version: 3 });
  assert.equal(s.form, null);
  assert.equal(s.request, null);
  assert.match(s.notice?.text ?? '', /version 3/);
  assert.ok(!JSON.stringify(s).includes('n3w-s3cret'));
});

test('a failed call shows its VLT line and keeps the form to correct it', () => {
  let s = run(
    loaded,
    press('tab'),
    press('a', 'a'),
    ...type('new entry'),
    press('return'),
    press('return'),
  );
  s = run(s, ...type('v'), press('return'));
  const id = s.request?.id ?? -1;
  s = run(s, { type: 'failed', id, line: errorLine(new VaultError('VLT-3002')) });
  assert.equal(s.notice?.text, 'vault-cli: VLT-3002: Wrong passphrase.');
  assert.equal(s.form?.busy, false);
  assert.equal(run(s, press('escape')).form, null);
});

test('invalid input is refused before any call, in the error format', () => {
  const s = run(
    loaded,
    press('n', 'n'),
    ...type('Bad Name'),
    press('return'),
    press('return'),
    press('return'),
    press('return'),
    press('return'),
  );
  assert.equal(s.request, null);
  assert.match(s.notice?.text ?? '', /^vault-cli: VLT-1002: Agent names/);
});

test('add agent: the token is shown once and gone at the next key', () => {
  let s = run(
    loaded,
    press('n', 'n'),
    ...type('deploy'),
    press('tab'),
    press('right'),
    press('tab'),
  );
  s = run(
    s,
    ...type('github, aws'),
    press('tab'),
    press('backspace'),
    ...type('5'),
    press('return'),
    press('return'),
  );
  assert.deepEqual(s.request?.call, {
    op: 'addAgent',
    name: 'deploy',
    kind: 'script',
    scope: ['github', 'aws'],
    limits: { perMinute: 5, perHour: 10 },
  });
  s = run(s, { type: 'result', id: s.request?.id ?? -1, token: 'vlt_tok_123' });
  assert.equal(s.token?.token, 'vlt_tok_123');
  s = run(s, press('j', 'j'));
  assert.equal(s.token, null);
  assert.ok(!JSON.stringify(s).includes('vlt_tok_123'));
  assert.equal(s.selected.agents, 0, 'the key that closed the token did nothing else');
});

test('revoke and remove ask first; n cancels, y makes the call', () => {
  let s = run(loaded, press('x', 'x'));
  assert.equal(s.confirm?.target, 'claude');
  assert.equal(run(s, press('n', 'n')).confirm, null);
  s = run(s, press('y', 'y'));
  assert.deepEqual(s.request?.call, { op: 'revokeAgent', name: 'claude' });
  s = run(loaded, press('tab'), press('d', 'd'), press('y', 'y'));
  assert.deepEqual(s.request?.call, { op: 'removeEntry', entry: 'github' });
});

test('scope and limits forms make their calls', () => {
  let s = run(
    loaded,
    press('s', 's'),
    ...type('aws'),
    press('tab'),
    ...type('github'),
    press('return'),
  );
  assert.deepEqual(s.request?.call, {
    op: 'changeScope',
    name: 'claude',
    add: ['aws'],
    rm: ['github'],
  });
  s = run(loaded, press('l', 'l'), press('ctrl+u'), ...type('7'), press('return'), press('return'));
  assert.deepEqual(s.request?.call, {
    op: 'changeLimits',
    name: 'claude',
    perMinute: 7,
    perHour: 10,
  });
});

test('notices expire with the clock', () => {
  const s = run(loaded, press('u', 'u'));
  assert.notEqual(s.notice, null);
  assert.equal(reduce(s, { type: 'tick' }, s.now + NOTICE_MS.info + 1).notice, null);
  assert.notEqual(reduce(s, { type: 'tick' }, s.now + 10).notice, null);
});

// --- properties ----------------------------------------------------------

/** Never typed by the random keys: a value typed as one, into secret fields only. */
const SENTINEL = 'Z#Q%SENTINEL%X';
const KEYS = [...new Set(KEY_TABLE.flatMap((b) => b.keys)), 'shift+tab', 'left', 'right', 'ctrl+a'];
const textKey = fc.stringMatching(/^[a-z0-9 ,._-]{1,3}$/).map((t) => press(t, t));
const namedKey = fc.constantFrom(...KEYS).map((k) => press(k, k.length === 1 ? k : ''));
const recordArb = fc
  .integer({ min: 0, max: 400 })
  .map((n) => ({ type: 'audit', record: record(n) }) as Action);
/** Short runs that reach the secret forms often enough to matter. */
const toForm = fc
  .constantFrom(['tab', 'r'], ['r'], ['tab', 'a'], ['a'], ['return'], ['tab', 'tab'])
  .map((keys) => keys.map((k) => press(k, k.length === 1 ? k : '')));
const arbAction = fc.oneof(
  { weight: 6, arbitrary: namedKey },
  { weight: 3, arbitrary: toForm },
  { weight: 2, arbitrary: fc.constant(['secret' as const, press('return'), 'result' as const]) },
  { weight: 4, arbitrary: textKey },
  { weight: 2, arbitrary: fc.constant('secret' as const) },
  { weight: 2, arbitrary: recordArb },
  { weight: 1, arbitrary: fc.constant({ type: 'tick' } as Action) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constant('result' as const),
      fc.constant('failed' as const),
      fc.constant('unlock' as const),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      type: 'snapshot',
      agents: [agent('a', 'locked'), agent('b')],
      entries: [entry('e')],
    } as Action),
  },
);

test('property: no sequence throws, the ring stays bounded, a secret leaves with its form', () => {
  fc.assert(
    fc.property(fc.array(arbAction, { minLength: 10, maxLength: 150, size: 'large' }), (script) => {
      let s = loaded;
      let typedSecret = false;
      for (const step of script.flat()) {
        let action: Action;
        if (step === 'secret') {
          const f = s.form;
          // The sentinel goes only where a secret is typed.
          if (f === null || f.busy || f.fields[f.focus]?.kind !== 'secret') continue;
          for (const c of SENTINEL) s = reduce(s, press(c, c), s.now + 1);
          typedSecret = true;
          continue;
        } else if (step === 'result' || step === 'failed') {
          const id = s.request?.id ?? 0;
          action =
            step === 'result'
              ? { type: 'result', id, token: 't', version: 1 }
              : { type: 'failed', id, line: 'vault-cli: VLT-3005: x' };
        } else if (step === 'unlock') {
          action = { type: 'unlockDone', id: s.unlock?.id ?? 0, agent: 'a', outcome: 'unlocked' };
        } else {
          action = step;
        }
        s = reduce(s, action, s.now + 500);
        assert.ok(s.audit.length <= AUDIT_RING);
        for (let i = 1; i < s.audit.length; i++) {
          assert.ok((s.audit[i]?.seq ?? 0) > (s.audit[i - 1]?.seq ?? 0));
        }
        if (s.form === null && typedSecret) {
          assert.ok(!JSON.stringify(s).includes(SENTINEL), 'the secret outlived its form');
          typedSecret = false;
        }
      }
    }),
    { numRuns: Number(process.env.FC_RUNS ?? 300) },
  );
});

test('e in any view opens the enrolment panel; its end is a notice, Esc closes it', () => {
  for (const keys of [[], [press('tab')], [press('tab'), press('tab')]]) {
    let s = run(loaded, ...keys, press('e', 'e'));
    assert.equal(s.unlock?.kind, 'enrol');
    assert.equal(s.unlock?.status, 'starting');
    assert.equal(modeOf(s), 'panel');
    const id = s.unlock?.id ?? -1;
    s = run(s, { type: 'unlockUrl', id, url: 'http://localhost:1234/x' });
    assert.equal(s.unlock?.status, 'waiting');
    s = run(s, { type: 'enrolDone', id, name: 'key-1' });
    assert.equal(s.unlock?.status, 'enrolled');
    assert.equal(s.unlock?.agent, 'key-1');
    assert.match(s.notice?.text ?? '', /key-1 is enrolled/);
    assert.equal(run(s, press('escape')).unlock, null);
  }
});
