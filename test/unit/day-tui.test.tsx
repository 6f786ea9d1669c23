// Issue 38: the dashboard's header counts a locked agent's violations, and
// the entry list at 100 columns keeps the EXPOSED mark a sweep set.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import type { AgentSummary, EntrySummary } from '../../tui/api.js';
import { EntriesView } from '../../tui/components/EntriesView.js';
import { Header } from '../../tui/components/Header.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const strip = (s: string | undefined) => (s ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
afterEach(() => cleanup());

function locked(name: string): AgentSummary {
  return {
    id: `id-${name}`,
    name,
    kind: 'ai',
    state: 'locked',
    scope: ['github'],
    limits: { perMinute: 3, perHour: 10 },
    usage: { minute: 3, hour: 3 },
    valuesLeft: 600,
    violations: [T0 - 60_000, T0],
    lockedAt: T0,
    created: T0,
  };
}

test('the header counts the violations of a locked agent beside LOCKED', () => {
  const { lastFrame } = render(
    <Header vault="v" now={T0} view="agents" agents={[locked('claude')]} entries={[]} />,
  );
  const frame = strip(lastFrame());
  assert.match(frame, /1 locked · 2 violations/);
  assert.doesNotMatch(frame, /0 violations/);
});

test('at 100 columns an entry with many fields keeps its EXPOSED mark, within the width', () => {
  const fields = ['password', 'username', 'api_key', 'webhook_secret', 'recovery_code'].map(
    (name, i) => ({ name, version: 1, updated: T0, ...(i === 4 ? { exposed: T0 } : {}) }),
  );
  const e: EntrySummary = {
    name: 'Stripe Prod',
    tier: 'default',
    fields,
    hosts: ['api.stripe.com'],
    created: T0,
  };
  const { lastFrame } = render(<EntriesView entries={[e]} selected={0} rows={5} width={100} />);
  const line =
    strip(lastFrame())
      .split('\n')
      .find((l) => l.includes('Stripe')) ?? '';
  assert.match(line, /recovery_code v1 EXPOSED/);
  assert.match(line, /api\.stripe\.com/);
  assert.ok(Array.from(line).length <= 100, `${Array.from(line).length}: ${line}`);
  // Narrower still, the count stays at the end of the cut list.
  cleanup();
  const narrow = render(<EntriesView entries={[e]} selected={0} rows={5} width={60} />);
  const cut =
    strip(narrow.lastFrame())
      .split('\n')
      .find((l) => l.includes('Stripe')) ?? '';
  assert.match(cut, /EXPOSED/);
});
