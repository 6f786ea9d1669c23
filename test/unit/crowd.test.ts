// The main socket's budget (src/host/serve/crowd.ts) under any order of connections
// and closes: never more held than the budget, and a connection past it is
// always paid for by a process holding the most.
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { Crowd } from '../../src/host/serve/crowd.js';

type Op = { add: number } | { close: number };

test('any order of connections and closes: at most the budget held, the largest holder always pays', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.array(
        fc.oneof(
          fc.record({ add: fc.integer({ min: 0, max: 5 }) }),
          fc.record({ close: fc.nat({ max: 40 }) }),
        ),
        { maxLength: 120 },
      ),
      (budget, ops: Op[]) => {
        const crowd = new Crowd(() => budget);
        const live: { peer: string; socket: Socket }[] = [];
        const heldBy = (peer: string) => live.filter((l) => l.peer === peer).length;
        for (const op of ops) {
          if ('add' in op) {
            const peer = `p${op.add}`;
            const socket = new Socket();
            const before = new Map(live.map((l) => [l.peer, heldBy(l.peer)]));
            before.set(peer, (before.get(peer) ?? 0) + 1);
            const most = Math.max(...before.values());
            live.push({ peer, socket });
            crowd.add(peer, socket);
            for (const gone of live.filter((l) => l.socket.destroyed)) {
              // One connection past the budget at most, paid by a holder of the most.
              assert.equal(before.get(gone.peer), most, `${gone.peer} was not a largest holder`);
            }
            for (let i = live.length - 1; i >= 0; i--)
              if (live[i]!.socket.destroyed) live.splice(i, 1);
          } else if (live.length > 0) {
            const [l] = live.splice(op.close % live.length, 1);
            crowd.remove(l!.peer, l!.socket);
            crowd.remove(l!.peer, l!.socket);
          }
          assert.ok(crowd.size <= budget);
          assert.equal(crowd.size, live.length);
        }
      },
    ),
  );
});

test('a crowd of processes at the budget: a newcomer with one connection gets in, the largest loses its oldest', () => {
  const crowd = new Crowd(() => 6);
  const a = [new Socket(), new Socket(), new Socket(), new Socket()];
  const b = [new Socket(), new Socket()];
  for (const s of a) crowd.add('a', s);
  for (const s of b) crowd.add('b', s);
  const owner = new Socket();
  crowd.add('owner', owner);
  assert.equal(owner.destroyed, false);
  assert.deepEqual(
    a.map((s) => s.destroyed),
    [true, false, false, false],
  );
  assert.equal(
    b.some((s) => s.destroyed),
    false,
  );
  assert.equal(crowd.size, 6);
});
