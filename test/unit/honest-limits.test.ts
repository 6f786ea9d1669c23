// Issue 38: limits that catch over-reading, not work. The honest sequences
// docs/how-it-works.md ("An honest agent's day") documents are never locked;
// an agent that asks for more new credentials than its limit every minute
// still is. Pure policy, the clock passed in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_LIMITS,
  FRESH_RATE_STATE,
  HOUR_MS,
  MINUTE_MS,
  chargeRefused,
  decideRead,
  raisesLimits,
  usage,
  type Decision,
  type Limits,
  type RateState,
} from '../../src/core/policy.js';
import { retryText } from '../../src/host/agent/limit-text.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);

function allowed(d: Decision): RateState {
  assert.equal(d.kind, 'allow', `expected allow, got ${JSON.stringify(d)}`);
  assert.ok(d.kind === 'allow');
  return d.state;
}

test('the newcomer: git push, a 3-reference render, a typo, the retry at T, a 5-reference render after agent limits: no lock', () => {
  let s = allowed(decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['github'], T0));
  const render = decideRead(s, DEFAULT_LIMITS, ['db', 'stripe', 'smtp'], T0 + 10_000);
  assert.ok(render.kind === 'limited' && render.counted);
  assert.equal(render.retryAt, T0 + MINUTE_MS);
  s = render.state;
  // A typo while waiting: refused (VLT-2041), charged nothing, so T stays true.
  s = chargeRefused(s, DEFAULT_LIMITS, ['?dbb'], T0 + 20_000);
  // A re-read of what it holds while waiting is free and does not move T.
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['github'], T0 + 30_000));
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['db', 'stripe', 'smtp'], render.retryAt ?? 0));
  assert.deepEqual(s.violations, [], 'the retry at T forgives the violation');
  const raised: Limits = { ...DEFAULT_LIMITS, perMinute: 5 };
  const five = ['db', 'stripe', 'smtp', 'sentry', 'openai'];
  s = allowed(decideRead(s, raised, five, T0 + MINUTE_MS + 5_000));
  assert.equal(s.lock, null);
});

test('a typo while told to wait is charged nothing, so the retry time stays true', () => {
  // The retry at T asks for nothing new; only a charge made after the
  // violation could make it fail, and none is made now.
  let s = allowed(decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['github'], T0));
  const render = decideRead(s, DEFAULT_LIMITS, ['a', 'b', 'c'], T0 + 10_000);
  assert.ok(render.kind === 'limited');
  s = chargeRefused(render.state, DEFAULT_LIMITS, ['?typo'], T0 + 20_000);
  assert.equal(usage(s, T0 + 20_000).minute, 1, 'nothing charged while told to wait');
});

test('a typo then its corrected retry take one slot; the same typo twice takes one', () => {
  let s = chargeRefused(FRESH_RATE_STATE, DEFAULT_LIMITS, ['?githb'], T0);
  s = chargeRefused(s, DEFAULT_LIMITS, ['?githb'], T0 + 1_000);
  assert.equal(usage(s, T0 + 1_000).minute, 1);
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['github'], T0 + 2_000));
  assert.equal(usage(s, T0 + 2_000).minute, 1);
  assert.equal(usage(s, T0 + 2_000).hour, 1);
  // Only the request right after: guesses followed by other work keep their slots.
  let g = chargeRefused(FRESH_RATE_STATE, DEFAULT_LIMITS, ['?x', '?y'], T0);
  g = allowed(decideRead(g, DEFAULT_LIMITS, ['a'], T0 + 1_000));
  assert.equal(usage(g, T0 + 1_000).minute, 2);
  const d = decideRead(g, DEFAULT_LIMITS, ['b', 'c'], T0 + 2_000);
  assert.equal(d.kind, 'limited', 'a guess still costs a slot');
});

test('a group counts once in the minute and each entry in the hour', () => {
  const limits: Limits = { ...DEFAULT_LIMITS, groups: { app: ['a', 'b', 'c', 'd', 'e'] } };
  let s = allowed(decideRead(FRESH_RATE_STATE, limits, ['a', 'b', 'c', 'd', 'e'], T0));
  s = allowed(decideRead(s, limits, ['x', 'y'], T0 + 1_000));
  const over = decideRead(s, limits, ['z'], T0 + 2_000);
  assert.ok(over.kind === 'limited' && over.window === 'minute');
  // The hour counts seven, so four more fill it.
  const later = T0 + 2 * MINUTE_MS;
  s = allowed(decideRead(s, limits, ['h1', 'h2', 'h3'], later));
  const hour = decideRead(s, limits, ['h4'], later + 2 * MINUTE_MS);
  assert.ok(hour.kind === 'limited' && hour.window === 'hour');
  // Ungrouped, the render alone is more than the minute allows.
  const alone = decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['a', 'b', 'c', 'd', 'e'], T0);
  assert.deepEqual(alone, { kind: 'too-many', window: 'minute', limit: 3, wanted: 5 });
});

test('declaring or growing a group widens the limits; removing one does not', () => {
  const none: Limits = DEFAULT_LIMITS;
  const app: Limits = { ...DEFAULT_LIMITS, groups: { app: ['a', 'b'] } };
  const more: Limits = { ...DEFAULT_LIMITS, groups: { app: ['a', 'b', 'c'] } };
  assert.equal(raisesLimits(none, app), true);
  assert.equal(raisesLimits(app, more), true);
  assert.equal(raisesLimits(more, app), false);
  assert.equal(raisesLimits(app, none), false);
  assert.equal(raisesLimits(app, app), false);
});

const ids = Array.from({ length: 14 }, (_, i) => `e${i}`);

type Act =
  | { kind: 'read'; dt: number; ids: string[] }
  | { kind: 'typo'; dt: number; name: string }
  | { kind: 'reread'; dt: number };

const act: fc.Arbitrary<Act> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      dt: fc.oneof(fc.integer({ min: 0, max: 30_000 }), fc.integer({ min: 0, max: HOUR_MS })),
      ids: fc.uniqueArray(fc.constantFrom(...ids), { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('typo' as const),
      dt: fc.integer({ min: 0, max: 30_000 }),
      name: fc.constantFrom('?a', '?b', '?c', '?d'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('reread' as const),
      dt: fc.integer({ min: 0, max: 30_000 }),
    }),
  },
);

const limitsArb: fc.Arbitrary<Limits> = fc.oneof(
  fc.constant(DEFAULT_LIMITS),
  fc
    .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 10 }))
    .map(([m, extra]) => ({ perMinute: m, perHour: m + extra })),
);

/** What the minute window counts now: entries a re-read keeps free. */
function counted(s: RateState, now: number): string[] {
  return Object.entries(s.reads)
    .filter(([id, at]) => !id.startsWith('?') && now - at < MINUTE_MS && at <= now)
    .map(([id]) => id);
}

/**
 * The honest agent docs/how-it-works.md describes: any work, typos included;
 * refused as too many, it drops the request (the owner raises the limit);
 * refused with "retry after T", it asks for nothing new until T (typos and
 * re-reads of what it holds are fine) and then retries that request first.
 */
test('property: no honest sequence is ever locked', () => {
  fc.assert(
    fc.property(
      limitsArb,
      fc.array(act, { maxLength: 60 }),
      fc.integer({ min: 0, max: 5_000 }),
      (limits, acts, late) => {
        let s = FRESH_RATE_STATE;
        let now = T0;
        let waiting: { until: number; ids: string[] } | null = null;
        for (const a of acts) {
          now += a.dt;
          if (waiting !== null && now >= waiting.until) {
            // Its retry, at T or a little later, before anything new.
            const at = waiting.until + late;
            now = Math.max(now, at);
            const d = decideRead(s, limits, waiting.ids, at);
            s = allowed(d);
            waiting = null;
          }
          if (a.kind === 'typo') {
            s = chargeRefused(s, limits, [a.name], now);
          } else if (a.kind === 'reread') {
            const held = counted(s, now);
            if (held.length > 0) s = allowed(decideRead(s, limits, held, now));
          } else if (waiting === null) {
            const d = decideRead(s, limits, a.ids, now);
            assert.notEqual(d.kind, 'lockdown');
            assert.notEqual(d.kind, 'locked');
            if (d.kind === 'allow') s = d.state;
            if (d.kind === 'limited') {
              assert.ok(d.retryAt !== null && d.counted, JSON.stringify(d));
              s = d.state;
              waiting = { until: d.retryAt, ids: a.ids };
            }
          }
          assert.equal(s.lock, null);
        }
      },
    ),
    { numRuns: RUNS },
  );
});

test('property: an agent asking for more new names than its limit each minute is locked by the second minute', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 10 }),
      fc.integer({ min: 0, max: 9_000 }),
      fc.integer({ min: 0, max: 5_000 }),
      (m, extra, pace, start) => {
        // An hour with room for both minutes: a smaller one refuses it all for
        // the hour anyway (one violation whose quiet time spans the hour).
        const limits: Limits = { perMinute: m, perHour: 2 * (m + 1) + extra };
        let s = FRESH_RATE_STATE;
        let n = 0;
        let locked = false;
        for (let minute = 0; minute < 2; minute++) {
          for (let j = 0; j <= m; j++) {
            const now = T0 + minute * MINUTE_MS + start + j * pace;
            const d = decideRead(s, limits, [`new${n++}`], now);
            if (d.kind === 'locked' || d.kind === 'lockdown') locked = true;
            if (d.kind === 'allow' || d.kind === 'limited' || d.kind === 'lockdown') s = d.state;
          }
        }
        assert.ok(locked, 'locked by the end of the second minute');
      },
    ),
    { numRuns: RUNS },
  );
});

test('one violation is told as one: its request again is told the same; another under its quiet time, that it is no new one and clears nothing', () => {
  let s = allowed(decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['a', 'b', 'c'], T0));
  const first = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 1_000);
  assert.ok(first.kind === 'limited' && first.counted && first.clears);
  s = first.state;
  // The client retries it at once (curl --retry, an agent's HTTP client on a 429).
  const again = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 3_000);
  assert.ok(again.kind === 'limited' && !again.counted && again.clears);
  assert.equal(retryText(again), retryText(first), 'the same refusal, word for word');
  assert.match(retryText(first), /violation recorded \(retried then.*clears it\); retry after /);
  // Something else meanwhile: refused under the same violation, and told so.
  const other = decideRead(s, DEFAULT_LIMITS, ['e'], T0 + 5_000);
  assert.ok(other.kind === 'limited' && !other.counted && !other.clears);
  assert.doesNotMatch(retryText(other), /violation recorded|clears it\)/);
  assert.match(retryText(other), /no new violation.*does not clear; retry after /);
  assert.deepEqual(s.violations, [T0 + 1_000], 'one violation');
  // What it was told holds: the other request at T does not forgive it; the first's does.
  const at = (first.retryAt ?? 0) + 1;
  assert.deepEqual(allowed(decideRead(s, DEFAULT_LIMITS, ['d'], at)).violations, []);
});
