// The pure parts of counting exfiltration attempts (issue 27): a violation
// that is no read (core/policy.ts recordViolation) against the same
// two-strike state machine as the rate limits, the proxy's plan that carries
// a Host mismatch as a signal to report, and the answer once the host counted it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VaultError } from '../../src/core/errors.js';
import { MAX_REFS } from '../../src/core/requests.js';
import {
  FRESH_RATE_STATE,
  HOUR_MS,
  MINUTE_MS,
  decideRead,
  recordViolation,
  unlock,
  type RateState,
} from '../../src/core/policy.js';
import { countedRefusal, planFill, type Signal } from '../../src/proxy/policy.js';
import { RawHeaders } from '../../src/proxy/raw-headers.js';
import type { Destination } from '../../src/proxy/routing.js';
import { alarmOf } from '../../tui/format.js';

const T0 = 1_000_000_000_000;
const limits = { perMinute: 3, perHour: 10 };

function recorded(state: RateState, now: number): RateState {
  const r = recordViolation(state, now);
  assert.equal(r.kind, 'recorded');
  return r.kind === 'recorded' ? r.state : state;
}

describe('recordViolation', () => {
  test('the first is recorded and does not lock; a second within two hours locks', () => {
    const s = recorded(FRESH_RATE_STATE, T0);
    assert.deepEqual(s.violations, [T0]);
    assert.equal(s.lock, null);
    const r = recordViolation(s, T0 + 2 * HOUR_MS - 1);
    assert.equal(r.kind, 'lockdown');
    assert.deepEqual(r.kind === 'lockdown' && r.state.lock, {
      at: T0 + 2 * HOUR_MS - 1,
      reason: 'violations',
    });
  });

  test('two hours after the first, the next is a first again', () => {
    const s = recorded(FRESH_RATE_STATE, T0);
    assert.deepEqual(recorded(s, T0 + 2 * HOUR_MS).violations, [T0 + 2 * HOUR_MS]);
  });

  test('a locked agent: nothing more is recorded', () => {
    const locked = { ...FRESH_RATE_STATE, lock: { at: T0, reason: 'manual' as const } };
    assert.deepEqual(recordViolation(locked, T0 + 1), { kind: 'locked' });
  });

  test('it adds up with a rate-limit violation, in either order, and ignores the rate limit’s quiet time', () => {
    // Over the minute window: a rate-limit violation, which sets a quiet time.
    let s: RateState = FRESH_RATE_STATE;
    const read = decideRead(s, limits, ['a', 'b', 'c'], T0);
    assert.equal(read.kind, 'allow');
    s = read.kind === 'allow' ? read.state : s;
    const over = decideRead(s, limits, ['d'], T0 + 1);
    assert.ok(over.kind === 'limited' && over.counted);
    s = over.kind === 'limited' ? over.state : s;
    assert.ok((s.quietUntil ?? 0) > T0 + 2);
    // Within the quiet time, an exfiltration attempt is no retry of that read: it locks.
    assert.equal(recordViolation(s, T0 + 2).kind, 'lockdown');
    // The other order: an exfiltration attempt, then a read over the limit.
    const first = recorded(FRESH_RATE_STATE, T0);
    const reads = decideRead(first, limits, ['a', 'b', 'c'], T0 + MINUTE_MS);
    const after = reads.kind === 'allow' ? reads.state : first;
    assert.equal(decideRead(after, limits, ['d'], T0 + MINUTE_MS + 1).kind, 'lockdown');
  });

  test('an unlock forgives it: the next is a first violation again', () => {
    const r = recordViolation(recorded(FRESH_RATE_STATE, T0), T0 + 1);
    assert.equal(r.kind, 'lockdown');
    const lifted = unlock(r.kind === 'lockdown' ? r.state : FRESH_RATE_STATE);
    assert.equal(recordViolation(lifted, T0 + 2).kind, 'recorded');
  });
});

describe('planFill: a Host mismatch with references is a signal to report', () => {
  const api: Destination = { tls: true, host: 'api.example.com', port: 443 };
  const plan = (...raw: string[]) => {
    const h = new RawHeaders(raw);
    return planFill(h, h, api);
  };

  test('refused VLT-2048 with the destination and the references as written, never a value', () => {
    const p = plan(
      'Host',
      'evil.example',
      'Authorization',
      'Bearer vault://GitHub/token',
      'X-Other',
      '{{ vault://My Entry/key }}',
    );
    assert.equal(p.kind, 'refuse');
    assert.ok(p.kind === 'refuse');
    assert.equal(p.error.code, 'VLT-2048');
    assert.deepEqual(p.signal, {
      kind: 'host_mismatch',
      host: 'api.example.com',
      refs: [
        { entry: 'GitHub', field: 'token' },
        { entry: 'My Entry', field: 'key' },
      ],
    });
  });

  test('however many references the request holds, the signal names no more than one host request takes', () => {
    const many = Array.from({ length: 1500 }, (_, i) => `vault://e${i}/f`).join(' ');
    const p = plan('Host', 'evil.example', 'X-Keys', many);
    assert.ok(p.kind === 'refuse');
    assert.equal(p.signal?.refs.length, MAX_REFS);
  });

  test('no signal without a reference, for a matching Host, or for a malformed reference', () => {
    assert.equal(plan('Host', 'evil.example', 'Authorization', 'Bearer plain').kind, 'pass');
    assert.equal(plan('Host', 'api.example.com', 'X-Key', 'vault://A/b').kind, 'fill');
    const malformed = plan('Host', 'evil.example', 'X-Key', 'vault://A/');
    assert.ok(malformed.kind === 'refuse');
    assert.equal(malformed.error.code, 'VLT-2046');
    assert.equal(malformed.signal, undefined);
  });
});

describe('countedRefusal', () => {
  const signal: Signal = { kind: 'host_mismatch', host: 'api.example.com', refs: [] };
  const refusal = new VaultError('VLT-2048', 'Host "x" is not the destination; nothing was sent.');

  test('recorded: the refusal, saying so and what the next one does', () => {
    const e = countedRefusal(refusal, signal, 'recorded');
    assert.equal(e.code, 'VLT-2048');
    assert.match(
      e.message,
      /^Host "x" is not the destination; nothing was sent\. Violation recorded/,
    );
    assert.match(e.message, /a second within two hours locks the agent\.$/);
  });

  test('lockdown and already locked: VLT-2043', () => {
    const locked = countedRefusal(refusal, signal, 'lockdown');
    assert.equal(locked.code, 'VLT-2043');
    assert.match(locked.message, /^Second violation \(a reference sent with a Host/);
    assert.equal(
      countedRefusal(refusal, signal, 'locked').message,
      new VaultError('VLT-2043').message,
    );
  });
});

test('the dashboard feed marks an exfiltration attempt as a violation', () => {
  const record = {
    seq: 1,
    at: T0,
    action: 'exfil' as const,
    actor: 'cli:a',
    source: 'pid:1',
    outcome: 'VLT-2048',
    entry: 'API',
    field: 'token',
    host: 'api.example.com',
    subject: null,
  };
  assert.equal(alarmOf(record), 'limited');
  assert.equal(alarmOf({ ...record, action: 'denied', outcome: 'VLT-2041' }), null);
});
