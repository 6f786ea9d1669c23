// The owner session's durations as the host's configuration sets them
// (VAULT_OWNER_SESSION_MINUTES, VAULT_OWNER_IDLE_MINUTES): whoever starts a
// same-user host chose its environment, an agent included, so no value makes
// a session outlive the caps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_IDLE_MS,
  DEFAULT_TTL_MS,
  MAX_CONFIG_IDLE_MS,
  MAX_TTL_MS,
  sessionTerms,
} from '../../src/host/owner/unlock.js';

const MIN = 60_000;

test('unset: 15 minutes, 5 idle', () => {
  assert.deepEqual(sessionTerms(undefined, undefined), { ttlMs: 15 * MIN, idleMs: 5 * MIN });
  assert.equal(DEFAULT_TTL_MS, 15 * MIN);
  assert.equal(DEFAULT_IDLE_MS, 5 * MIN);
});

test('whole minutes are taken as they are, within the caps', () => {
  assert.deepEqual(sessionTerms('30', '10'), { ttlMs: 30 * MIN, idleMs: 10 * MIN });
  assert.deepEqual(sessionTerms(' 60 ', '60'), { ttlMs: 60 * MIN, idleMs: 60 * MIN });
});

test('a hostile configuration cannot make a session last longer than 12 h, or idle longer than 1 h', () => {
  for (const huge of ['720', '721', '999999999', '100000']) {
    const t = sessionTerms(huge, huge);
    assert.equal(t.ttlMs, MAX_TTL_MS, huge);
    assert.equal(MAX_TTL_MS, 12 * 60 * MIN);
    assert.equal(t.idleMs, MAX_CONFIG_IDLE_MS, huge);
    assert.equal(MAX_CONFIG_IDLE_MS, 60 * MIN);
  }
  // Not whole minutes: the default, never a number JavaScript reads as endless.
  for (const odd of ['Infinity', '1e400', '9999999999999', '-5', '1.5', '0x10', '', 'NaN', '15m']) {
    assert.deepEqual(sessionTerms(odd, odd), { ttlMs: 15 * MIN, idleMs: 5 * MIN }, odd);
  }
});

test('the idle timeout is never longer than the lifetime; a lifetime of 0 turns sessions off', () => {
  assert.deepEqual(sessionTerms('3', '10'), { ttlMs: 3 * MIN, idleMs: 3 * MIN });
  assert.equal(sessionTerms('0', undefined).ttlMs, 0);
});
