// Rate windows, violations and lockdown, with the clock passed in as plain numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_LIMITS,
  FRESH_RATE_STATE,
  HOUR_MS,
  MINUTE_MS,
  VIOLATION_SPAN_MS,
  chargeRefused,
  newSlots,
  decideRead,
  lockByHand,
  usage,
  valuesAvailable,
  VALUES_PER_MINUTE,
  type Decision,
  type Limits,
  type RateState,
} from '../../src/core/policy.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);
const T0 = Date.UTC(2025, 0, 1, 9, 0, 0);

function allowed(d: Decision): RateState {
  assert.equal(d.kind, 'allow', `expected allow, got ${JSON.stringify(d)}`);
  assert.ok(d.kind === 'allow');
  return d.state;
}

/** Reads `ids` one by one at the given times, every read allowed. */
function readAll(
  state: RateState,
  reads: readonly (readonly [string, number])[],
  limits = DEFAULT_LIMITS,
): RateState {
  let s = state;
  for (const [id, at] of reads) s = allowed(decideRead(s, limits, [id], at));
  return s;
}

/** a, b, c at T0, T0+1 s, T0+2 s. */
function threeReads(): RateState {
  return readAll(FRESH_RATE_STATE, [
    ['a', T0],
    ['b', T0 + 1000],
    ['c', T0 + 2000],
  ]);
}

test('the default limits are 3 per minute and 10 per hour, and 600 values a minute', () => {
  assert.deepEqual(DEFAULT_LIMITS, { perMinute: 3, perHour: 10 });
  assert.equal(VALUES_PER_MINUTE, 600);
  assert.equal(MINUTE_MS, 60_000);
  assert.equal(HOUR_MS, 3_600_000);
  assert.equal(VIOLATION_SPAN_MS, 2 * 3_600_000);
});

test('three distinct reads are allowed, the fourth is limited until the first ages out', () => {
  const s = threeReads();
  const d = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.equal(d.kind, 'limited');
  assert.ok(d.kind === 'limited');
  assert.equal(d.window, 'minute');
  assert.equal(d.retryAt, T0 + 60_000);
  assert.deepEqual(d.state.violations, [T0 + 3000]);
  assert.equal(d.state.lock, null);
  assert.equal('d' in d.state.reads, false, 'a refused read is not charged');
});

test('re-reading an entry already counted costs nothing, also as the fourth request', () => {
  let s = threeReads();
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['a'], T0 + 3000));
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['b'], T0 + 4000));
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['c', 'a'], T0 + 5000));
  assert.deepEqual(usage(s, T0 + 5000), { minute: 3, hour: 3 });
  assert.equal(s.violations.length, 0);
  // Still no room for a new one.
  assert.equal(decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 6000).kind, 'limited');
});

test('after a violation, re-reading a counted entry is still allowed', () => {
  const s = threeReads();
  const d = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(d.kind === 'limited');
  const again = allowed(decideRead(d.state, DEFAULT_LIMITS, ['b'], T0 + 4000));
  assert.deepEqual(again.violations, [T0 + 3000]);
});

test('the minute window: a read at t0 is out of it at exactly t0 + 60 s', () => {
  const s = threeReads();
  const before = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 59_999);
  assert.equal(before.kind, 'limited');
  const at = allowed(decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 60_000));
  assert.deepEqual(usage(at, T0 + 60_000), { minute: 3, hour: 4 });
  // b (T0 + 1 s) is still in the window: a fifth entry waits for it.
  const e = decideRead(at, DEFAULT_LIMITS, ['e'], T0 + 60_000);
  assert.ok(e.kind === 'limited');
  assert.equal(e.retryAt, T0 + 61_000);
});

/** Ten distinct reads in four minutes, three a minute. */
function tenReads(): RateState {
  const reads: [string, number][] = [];
  for (let i = 0; i < 10; i++) reads.push([`e${i}`, T0 + Math.floor(i / 3) * MINUTE_MS + i]);
  return readAll(FRESH_RATE_STATE, reads);
}

test('the hour window: the eleventh distinct entry is limited until the first ages out', () => {
  const s = tenReads();
  assert.deepEqual(usage(s, T0 + 3 * MINUTE_MS + 9), { minute: 1, hour: 10 });
  const d = decideRead(s, DEFAULT_LIMITS, ['e10'], T0 + 30 * MINUTE_MS);
  assert.ok(d.kind === 'limited');
  assert.equal(d.window, 'hour');
  assert.equal(d.retryAt, T0 + HOUR_MS);
});

test('the hour window: a read at t0 is out of it at exactly t0 + 3600 s', () => {
  const s = tenReads();
  assert.equal(decideRead(s, DEFAULT_LIMITS, ['e10'], T0 + HOUR_MS - 1).kind, 'limited');
  const at = allowed(decideRead(s, DEFAULT_LIMITS, ['e10'], T0 + HOUR_MS));
  assert.deepEqual(usage(at, T0 + HOUR_MS), { minute: 1, hour: 10 });
  assert.equal('e0' in at.reads, false, 'reads older than an hour are pruned');
  // e1 (T0 + 1 ms) is still in the hour window.
  assert.equal(decideRead(at, DEFAULT_LIMITS, ['e11'], T0 + HOUR_MS).kind, 'limited');
});

test('re-reading refreshes an entry: it counts in the window of its latest read', () => {
  let s = threeReads();
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['a'], T0 + 50_000));
  // At T0 + 60 s the first read of a is old, but its re-read at T0 + 50 s is not.
  const d = decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 60_000);
  assert.ok(d.kind === 'limited');
  assert.equal(d.retryAt, T0 + 61_000);
});

test('refusals while still over the limit belong to the first violation', () => {
  const first = decideRead(threeReads(), DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(first.kind === 'limited' && first.counted);
  assert.equal(first.retryAt, T0 + 60_000);
  const burst = decideRead(first.state, DEFAULT_LIMITS, ['e'], T0 + 10_000);
  assert.ok(burst.kind === 'limited');
  assert.equal(burst.counted, false);
  assert.deepEqual(burst.state.violations, [T0 + 3000]);
  assert.equal(burst.state.lock, null);
});

test('a second violation within two hours of the first locks the agent', () => {
  const first = decideRead(threeReads(), DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(first.kind === 'limited');
  // Room again from T0 + 60 s: three new reads, then a fourth is a new violation.
  const second = violateAt(first.state, T0 + 70_000, 'x');
  assert.equal(second.kind, 'lockdown');
  assert.ok(second.kind === 'lockdown');
  assert.deepEqual(second.state.lock, { at: T0 + 70_000, reason: 'violations' });
  assert.deepEqual(second.state.violations, [T0 + 3000, T0 + 70_000]);
});

/** From `state`, three fresh reads at `at`, then a fourth distinct one: a violation at `at`. */
function violateAt(state: RateState, at: number, tag: string): Decision {
  const s = readAll(state, [
    [`${tag}1`, at],
    [`${tag}2`, at],
    [`${tag}3`, at],
  ]);
  return decideRead(s, DEFAULT_LIMITS, [`${tag}4`], at);
}

test('a second violation two hours minus a minute after the first still locks', () => {
  const first = decideRead(threeReads(), DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(first.kind === 'limited');
  const second = violateAt(first.state, T0 + 3000 + VIOLATION_SPAN_MS - MINUTE_MS, 'x');
  assert.equal(second.kind, 'lockdown');
});

test('a second violation two hours and a minute after the first is only limited', () => {
  const first = decideRead(threeReads(), DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(first.kind === 'limited');
  const at = T0 + 3000 + VIOLATION_SPAN_MS + MINUTE_MS;
  const second = violateAt(first.state, at, 'x');
  assert.equal(second.kind, 'limited');
  assert.ok(second.kind === 'limited');
  assert.equal(second.state.lock, null);
  assert.deepEqual(second.state.violations, [at]);
  // ...and a third one, once the window had room again, locks.
  const third = violateAt(second.state, at + 2 * MINUTE_MS, 'y');
  assert.equal(third.kind, 'lockdown');
});

test('once locked, every request is refused as locked: new, counted, empty, any time', () => {
  const first = decideRead(threeReads(), DEFAULT_LIMITS, ['d'], T0 + 3000);
  assert.ok(first.kind === 'limited');
  const lock = violateAt(first.state, T0 + 70_000, 'x');
  assert.ok(lock.kind === 'lockdown');
  for (const [ids, at] of [
    [['a'], T0 + 75_000],
    [['zzz'], T0 + 75_000],
    [[], T0 + 75_000],
    [['a', 'b'], T0 + 10 * HOUR_MS],
    [['a'], T0 + 365 * 24 * HOUR_MS],
  ] as const) {
    assert.deepEqual(decideRead(lock.state, DEFAULT_LIMITS, ids, at), { kind: 'locked' });
  }
});

test('render: all entries of one request are charged at once, or none', () => {
  const one = readAll(FRESH_RATE_STATE, [['a', T0]]);
  // a + three new ones is four: refused, and none of b, c, d is charged.
  const over = decideRead(one, DEFAULT_LIMITS, ['a', 'b', 'c'], T0 + 1000 - 1);
  assert.ok(over.kind === 'allow');
  const full = decideRead(over.state, DEFAULT_LIMITS, ['d'], T0 + 1000);
  assert.ok(full.kind === 'limited');
  assert.deepEqual(Object.keys(full.state.reads).sort(), ['a', 'b', 'c']);
  // a + two new ones fit: all charged at the same time.
  const fit = allowed(decideRead(one, DEFAULT_LIMITS, ['b', 'a', 'c'], T0 + 1000));
  assert.deepEqual(fit.reads, { a: T0 + 1000, b: T0 + 1000, c: T0 + 1000 });
  // Duplicates in one request count once.
  allowed(decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['a', 'a', 'b', 'b', 'c'], T0));
});

test('a request that alone exceeds a limit is refused as too many: nothing charged, no violation', () => {
  const d = decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['a', 'b', 'c', 'd'], T0);
  assert.deepEqual(d, { kind: 'too-many', window: 'minute', limit: 3, wanted: 4 });
  const wide = decideRead(
    FRESH_RATE_STATE,
    { perMinute: 20, perHour: 10 },
    ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'],
    T0,
  );
  assert.deepEqual(wide, { kind: 'too-many', window: 'hour', limit: 10, wanted: 11 });
  // However often it is asked, the agent stays as it was: no violation, no lock.
  let s = allowed(decideRead(FRESH_RATE_STATE, DEFAULT_LIMITS, ['x'], T0));
  for (let i = 0; i < 5; i++) {
    assert.equal(decideRead(s, DEFAULT_LIMITS, ['a', 'b', 'c', 'd'], T0 + i).kind, 'too-many');
  }
  s = allowed(decideRead(s, DEFAULT_LIMITS, ['a', 'b'], T0 + 10));
  assert.deepEqual(s.violations, []);
});

test('limits are per agent: custom limits are honoured', () => {
  const limits: Limits = { perMinute: 1, perHour: 2 };
  const s = allowed(decideRead(FRESH_RATE_STATE, limits, ['a'], T0));
  assert.equal(decideRead(s, limits, ['b'], T0 + 59_999).kind, 'limited');
  const s2 = allowed(decideRead(s, limits, ['b'], T0 + 60_000));
  const d = decideRead(s2, limits, ['c'], T0 + 120_000);
  assert.ok(d.kind === 'limited');
  assert.equal(d.window, 'hour');
  assert.equal(d.retryAt, T0 + HOUR_MS);
});

test('lockByHand locks a free agent and keeps an existing lock', () => {
  const s = threeReads();
  const locked = lockByHand(s, T0 + 5000);
  assert.deepEqual(locked.lock, { at: T0 + 5000, reason: 'manual' });
  assert.deepEqual(locked.reads, s.reads);
  assert.deepEqual(decideRead(locked, DEFAULT_LIMITS, ['a'], T0 + 6000), { kind: 'locked' });
  assert.equal(lockByHand(locked, T0 + 9000), locked);
  assert.equal(s.lock, null, 'the input state is not mutated');
});

test('usage counts distinct entries in the current minute and hour', () => {
  assert.deepEqual(usage(FRESH_RATE_STATE, T0), { minute: 0, hour: 0 });
  const s = tenReads();
  assert.deepEqual(usage(s, T0 + 2), { minute: 3, hour: 3 });
  assert.deepEqual(usage(s, T0 + 2 * MINUTE_MS + 8), { minute: 3, hour: 9 });
  assert.deepEqual(usage(s, T0 + HOUR_MS), { minute: 0, hour: 9 });
  assert.deepEqual(usage(s, T0 + 10 * HOUR_MS), { minute: 0, hour: 0 });
});

test('decideRead does not mutate the state it is given', () => {
  const s = threeReads();
  const copy = structuredClone(s);
  decideRead(s, DEFAULT_LIMITS, ['d'], T0 + 3000);
  decideRead(s, DEFAULT_LIMITS, ['a'], T0 + 3000);
  assert.deepEqual(s, copy);
});

interface Step {
  readonly dt: number;
  readonly ids: readonly string[];
}

const step: fc.Arbitrary<Step> = fc.record({
  dt: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 30_000 }) },
    { weight: 2, arbitrary: fc.constantFrom(0, 59_999, 60_000, 60_001) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * HOUR_MS }) },
  ),
  ids: fc.array(fc.constantFrom(...Array.from({ length: 14 }, (_, i) => `e${i}`)), {
    minLength: 1,
    maxLength: 4,
  }),
});

const limitsArb: fc.Arbitrary<Limits> = fc.oneof(
  fc.constant(DEFAULT_LIMITS),
  fc
    .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 10 }))
    .map(([m, extra]) => ({ perMinute: m, perHour: m + extra })),
);

/** Allowed reads of a run, as (time, entry) pairs. */
function simulate(limits: Limits, steps: readonly Step[]): { at: number; id: string }[] {
  const out: { at: number; id: string }[] = [];
  let state = FRESH_RATE_STATE;
  let now = T0;
  for (const s of steps) {
    now += s.dt;
    const d = decideRead(state, limits, s.ids, now);
    if (d.kind === 'allow') {
      // What the windows count: a re-read in a violation's quiet time keeps
      // its entry's earlier time (so the retry time told stays true).
      for (const id of new Set(s.ids)) if (d.state.reads[id] === now) out.push({ at: now, id });
      state = d.state;
    } else if (d.kind === 'limited') {
      state = d.state;
      if (d.retryAt !== null) {
        // The promised retry time is honest: the same request is allowed then.
        assert.ok(d.retryAt > now, 'retryAt lies in the future');
        assert.equal(decideRead(state, limits, s.ids, d.retryAt).kind, 'allow');
      }
    } else if (d.kind === 'too-many') {
      // Only a request larger than a window's limit is refused so, and it changes nothing.
      assert.ok(new Set(s.ids).size > Math.min(limits.perMinute, limits.perHour));
    } else if (d.kind === 'lockdown') {
      // The owner unlocks (what the hardware key does), so the run goes on.
      state = { ...d.state, lock: null, violations: [] };
    } else {
      assert.fail('never locked here: lockdown is undone at once');
    }
  }
  return out;
}

/** The most distinct entries allowed within any span of `span` ms. */
function maxDistinct(reads: readonly { at: number; id: string }[], span: number): number {
  let max = 0;
  // The busiest span can be taken to end at an allowed read.
  for (const end of reads) {
    const ids = new Set(
      reads.filter((r) => r.at <= end.at && end.at - r.at < span).map((r) => r.id),
    );
    max = Math.max(max, ids.size);
  }
  return max;
}

test('property: no 60 s span sees more than perMinute distinct entries, no 3600 s span more than perHour', () => {
  fc.assert(
    fc.property(limitsArb, fc.array(step, { maxLength: 60 }), (limits, steps) => {
      const reads = simulate(limits, steps);
      assert.ok(maxDistinct(reads, MINUTE_MS) <= limits.perMinute);
      assert.ok(maxDistinct(reads, HOUR_MS) <= limits.perHour);
    }),
    { numRuns: RUNS },
  );
});

test('property: a lone read of a fresh agent is always allowed', () => {
  // Entry ids are hex, as the store makes them.
  const id = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1 });
  fc.assert(
    fc.property(id, fc.integer({ min: 0, max: 2 ** 45 }), limitsArb, (id, now, limits) => {
      allowed(decideRead(FRESH_RATE_STATE, limits, [id], now));
    }),
    { numRuns: RUNS },
  );
});

// Issue 16: names refused with VLT-2041 take slots of the windows, never more
// than the hour's limit holds, and record no violation.
test('chargeRefused: each distinct refused name takes a slot; the hour bounds what is stored', () => {
  const limits = DEFAULT_LIMITS;
  const a = chargeRefused(FRESH_RATE_STATE, limits, ['?a', '?b'], T0);
  assert.deepEqual(usage(a, T0), { minute: 2, hour: 2 });
  assert.deepEqual(a.violations, []);
  // The same name again costs nothing more; a real read now meets a fuller window.
  const b = chargeRefused(a, limits, ['?a'], T0 + 1000);
  assert.deepEqual(usage(b, T0 + 1000), { minute: 2, hour: 2 });
  assert.equal(decideRead(b, limits, ['e1'], T0 + 2000).kind, 'allow');
  // The read right after a refusal takes its name's slot over (a typo's
  // retry, issue 38): ?a's here, so three new ones meet ?b and are over.
  assert.equal(decideRead(b, limits, ['e1', 'e2'], T0 + 2000).kind, 'allow');
  assert.equal(decideRead(b, limits, ['e1', 'e2', 'e3'], T0 + 2000).kind, 'limited');
  // A thousand guesses store no more names than the hour allows.
  const many = Array.from({ length: 1000 }, (_, i) => `?g${i}`);
  const c = chargeRefused(b, limits, many, T0 + 3000);
  assert.equal(Object.keys(c.reads).length, limits.perHour);
  assert.deepEqual(c.violations, []);
  assert.equal(c.lock, null);
});

// A refusal that takes no new slot is audited coalesced (access.ts): newSlots
// must say exactly what chargeRefused adds, for any state and any names.
test('newSlots: the names chargeRefused adds to the hour, no more, no fewer', () => {
  const name = fc.constantFrom(
    '?a',
    '?b',
    '?c',
    'e1',
    'e2',
    'e3',
    '?d',
    '?e',
    '?f',
    '?g',
    '?h',
    '?i',
    '?j',
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.array(name, { maxLength: 4 }), fc.nat({ max: 3_700_000 })), {
        maxLength: 20,
      }),
      fc.array(name, { maxLength: 6 }),
      (history, ids) => {
        let state = FRESH_RATE_STATE;
        let now = T0;
        for (const [names, later] of history) {
          now += later;
          state = chargeRefused(state, DEFAULT_LIMITS, names, now);
        }
        const hourBefore = usage(state, now).hour;
        const after = chargeRefused(state, DEFAULT_LIMITS, ids, now);
        assert.equal(
          newSlots(state, DEFAULT_LIMITS, ids, now),
          usage(after, now).hour - hourBefore,
        );
      },
    ),
  );
  // The same name again, or any name once the hour is full: nothing new.
  const a = chargeRefused(FRESH_RATE_STATE, DEFAULT_LIMITS, ['?a'], T0);
  assert.equal(newSlots(a, DEFAULT_LIMITS, ['?a'], T0 + 1000), 0);
  const full = chargeRefused(
    a,
    DEFAULT_LIMITS,
    Array.from({ length: 20 }, (_, i) => `?g${i}`),
    T0,
  );
  assert.equal(newSlots(full, DEFAULT_LIMITS, ['?new'], T0 + 1000), 0);
  assert.equal(newSlots(a, DEFAULT_LIMITS, ['?new', '?new'], T0 + 1000), 1);
});

test('values a minute: re-reads are free for the distinct windows but not for the bucket; over it is a violation, the second locks', () => {
  const limits: Limits = { perMinute: 3, perHour: 10, valuesPerMinute: 600 };
  let s = FRESH_RATE_STATE;
  for (let i = 0; i < 600; i++) s = allowed(decideRead(s, limits, ['a'], T0));
  assert.equal(valuesAvailable(s, limits, T0), 0);
  const over = decideRead(s, limits, ['a'], T0);
  assert.ok(over.kind === 'limited');
  assert.equal(over.window, 'values a minute');
  assert.equal(over.counted, true);
  // One comes back every 100 ms (600 a minute).
  assert.equal(over.retryAt, T0 + 100);
  // A retry inside the quiet time belongs to the same violation.
  const again = decideRead(over.state, limits, ['a'], T0 + 50);
  assert.ok(again.kind === 'limited' && !again.counted);
  const later = allowed(decideRead(over.state, limits, ['a'], T0 + 100));
  // Looping on past the quiet time is the second violation: locked.
  assert.equal(decideRead(later, limits, ['a'], T0 + 101).kind, 'lockdown');
  // Never below the distinct credentials a minute: a render of that many passes.
  const wide: Limits = { perMinute: 50, perHour: 50, valuesPerMinute: 3 };
  assert.equal(valuesAvailable(FRESH_RATE_STATE, wide, T0), 50);
  const ids = Array.from({ length: 50 }, (_, i) => `e${i}`);
  assert.equal(decideRead(FRESH_RATE_STATE, wide, ids, T0).kind, 'allow');
  // An agent made before the limit existed gets the default.
  const old: Limits = { perMinute: 3, perHour: 10 };
  assert.equal(valuesAvailable(FRESH_RATE_STATE, old, T0), 600);
});

test('values a minute: no 60 s ever releases more than twice the limit, and a steady pace at the limit is never refused', () => {
  const request = fc.record({
    ids: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1, maxLength: 5 }),
    later: fc.integer({ min: 0, max: 20_000 }),
  });
  fc.assert(
    fc.property(
      fc.integer({ min: 5, max: 40 }),
      fc.array(request, { maxLength: 200 }),
      (cap, requests) => {
        // Five entries: the distinct windows never refuse, only the values limit does.
        const limits: Limits = { perMinute: 5, perHour: 1000, valuesPerMinute: cap };
        let s = FRESH_RATE_STATE;
        let now = T0;
        const released: number[] = [];
        for (const r of requests) {
          now += r.later;
          const d = decideRead(s, limits, r.ids, now);
          if (d.kind === 'locked') break;
          if (d.kind === 'too-many') continue;
          // Lift locks and violations: the bound must hold whatever the agent's history.
          s = { ...d.state, lock: null, violations: [], quietUntil: null };
          if (d.kind === 'allow') for (let i = 0; i < r.ids.length; i++) released.push(now);
        }
        for (const t of released) {
          const inMinute = released.filter((u) => u >= t && u < t + MINUTE_MS).length;
          assert.ok(inMinute <= 2 * cap, `${inMinute} released in a minute, limit ${cap}`);
        }
      },
    ),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 600 }), (cap) => {
      const limits: Limits = { perMinute: 3, perHour: 10, valuesPerMinute: cap };
      const every = Math.ceil(MINUTE_MS / cap);
      let s = FRESH_RATE_STATE;
      for (let i = 0; i < 3 * cap; i++) s = allowed(decideRead(s, limits, ['a'], T0 + i * every));
    }),
    { numRuns: 30 },
  );
});
