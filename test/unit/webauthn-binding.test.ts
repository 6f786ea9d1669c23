// What a hardware-key challenge is bound to (src/core/webauthn.ts): the text
// whose SHA-256 follows the challenge's random bytes, so the key's signature
// names the operation, the origin and, for an unlock, the agent and lockdown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  challengeBinding,
  challengeRefusal,
  type ChallengePurpose,
} from '../../src/core/webauthn.js';

const ORIGIN = 'http://localhost:4242';
const unlockA: ChallengePurpose = { kind: 'unlock', agentId: 'id-a', agentName: 'a', lockAt: 100 };

test('every part of an unlock changes the binding', () => {
  const variants: [string, ChallengePurpose, string][] = [
    ['agent id', { ...unlockA, agentId: 'id-b' }, ORIGIN],
    ['agent name', { ...unlockA, agentName: 'b' }, ORIGIN],
    ['lockdown', { ...unlockA, lockAt: 101 }, ORIGIN],
    ['origin', unlockA, 'http://localhost:4243'],
    ['operation', { kind: 'vouch', name: 'a' }, ORIGIN],
  ];
  const base = challengeBinding(unlockA, ORIGIN);
  assert.equal(challengeBinding({ ...unlockA }, ORIGIN), base, 'the same purpose, the same text');
  for (const [what, p, origin] of variants) {
    assert.notEqual(challengeBinding(p, origin), base, what);
  }
});

test('an enrolment says who vouched, and a vouch which key it is for', () => {
  const first = challengeBinding({ kind: 'enrol', vouchedBy: null }, ORIGIN);
  const vouched = challengeBinding({ kind: 'enrol', vouchedBy: 'key-1' }, ORIGIN);
  const recovery = challengeBinding({ kind: 'enrol', vouchedBy: 'recovery key' }, ORIGIN);
  assert.equal(new Set([first, vouched, recovery]).size, 3);
  assert.notEqual(
    challengeBinding({ kind: 'vouch', name: 'spare' }, ORIGIN),
    challengeBinding({ kind: 'vouch', name: 'other' }, ORIGIN),
  );
});

test('a stored unlock challenge fits only its agent, by id and name, and its lockdown', () => {
  const stored = { purpose: unlockA, expires: 1000 };
  assert.equal(challengeRefusal(stored, unlockA, 0), null);
  assert.equal(challengeRefusal(stored, { ...unlockA, agentName: 'b' }, 0), 'wrong purpose');
  assert.equal(challengeRefusal(stored, { ...unlockA, agentId: 'id-b' }, 0), 'wrong purpose');
  assert.equal(challengeRefusal(stored, { ...unlockA, lockAt: 7 }, 0), 'wrong purpose');
  assert.equal(challengeRefusal(stored, { kind: 'vouch', name: 'a' }, 0), 'wrong purpose');
  assert.equal(challengeRefusal(stored, unlockA, 1000), 'expired');
});
