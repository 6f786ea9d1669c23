// Team mode's optimistic commit (src/store/pg/pg.ts commitQueued, pg-worker.ts
// tryCommit), on a real PostgreSQL cluster with two stores (two hosts' worth:
// each its own worker, connection, listener and copy of the rows) in this
// process: a group decided on a copy another host has moved past is not
// committed, but run again on that host's rows, what it did outside the
// store undone first; read-modify-writes from both at once lose nothing, and
// a limit of 3 holds across both.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgStore } from '../../src/store/pg/pg.js';
import { Postgres } from '../support/postgres.js';

let pg: Postgres;
before(async () => {
  pg = await Postgres.start();
});
after(async () => {
  await pg?.stop();
});

async function twoHosts(): Promise<[PgStore, PgStore, string]> {
  const db = pg.database();
  const a = PgStore.open(db.url);
  a.create();
  const b = PgStore.open(db.url);
  // Harmless on a made vault; its longer bound covers the worker's start (TypeScript compiled under load).
  b.create();
  return [a, b, db.name];
}

const count = (s: PgStore) => s.read((tx) => tx.ownerFailures().count);

test('a group decided on a copy another host moved past is run again on that host’s rows, its undo first', async () => {
  const [a, b, name] = await twoHosts();
  try {
    await a.writeDurable((tx) => tx.putOwnerFailures({ count: 1, last: 1 }));
    assert.equal(count(b), 1, 'b loaded at 1');
    // a moves on; b's copy is still at the version before (b sent nothing since).
    await a.writeDurable((tx) => tx.putOwnerFailures({ count: 2, last: 2 }));
    let runs = 0;
    let undone = 0;
    const seen: number[] = [];
    const out = await b.writeDurable((tx) => {
      runs++;
      tx.onUndo(() => undone++);
      const n = tx.ownerFailures().count;
      seen.push(n);
      tx.putOwnerFailures({ count: n + 1, last: 3 });
      return n + 1;
    });
    assert.deepEqual(seen, [1, 2], 'the first run saw b’s copy, the second a’s commit');
    assert.equal(runs, 2);
    assert.equal(undone, 1, 'the lost run undone once, the committed one not');
    assert.equal(out, 3);
    assert.equal(b.conflicts.lost, 1);
    assert.equal(count(a), 3, 'a sees b’s commit');
    // The database holds one version per commit: no commit lost or doubled.
    assert.equal(pg.psql(name, 'SELECT version FROM vault_meta').trim(), '3');
  } finally {
    await a.close();
    await b.close();
  }
});

test('read-modify-writes from two hosts at once lose nothing; a limit of 3 holds across both', async () => {
  const [a, b, name] = await twoHosts();
  try {
    await a.writeDurable((tx) => tx.putOwnerFailures({ count: 0, last: 0 }));
    const each = 60;
    // Several in flight per host, so each host groups them and the two race.
    const granted: string[] = [];
    const loop = async (s: PgStore, who: string, lane: number) => {
      for (let i = 0; i < each / 4; i++) {
        const id = `${who}-${lane}-${i}`;
        const ok = await s.writeDurable((tx) => {
          const f = tx.ownerFailures();
          tx.putOwnerFailures({ count: f.count + 1, last: f.last });
          // "3 distinct a minute": the list a grant goes in, checked and extended in one transaction.
          const held = tx.pendingRotation();
          if (held.length >= 3) return false;
          tx.putPendingRotation([...held, id]);
          return true;
        });
        if (ok) granted.push(id);
        if (i % 5 === 0) await sleep(0);
      }
    };
    await Promise.all([0, 1, 2, 3].flatMap((lane) => [loop(a, 'a', lane), loop(b, 'b', lane)]));
    assert.equal(count(a), 2 * each, 'every increment kept');
    assert.equal(count(b), 2 * each);
    assert.equal(granted.length, 3, `granted ${granted.join(', ')}`);
    assert.deepEqual(
      b.read((tx) => tx.pendingRotation()),
      a.read((tx) => tx.pendingRotation()),
    );
    assert.deepEqual([...a.read((tx) => tx.pendingRotation())].sort(), [...granted].sort());
    const lost = a.conflicts.lost + b.conflicts.lost;
    const commits = Number(pg.psql(name, 'SELECT version FROM vault_meta').trim());
    console.log(
      `# ${commits} commits for ${2 * each + 1} writes; tries lost ${lost}, locked ${a.conflicts.locked + b.conflicts.locked}`,
    );
  } finally {
    await a.close();
    await b.close();
  }
});

test('another host’s commit wakes the followers (NOTIFY), its own does not, and a cached read after it sees it', async () => {
  const [a, b] = await twoHosts();
  try {
    let woke = 0;
    b.onForeignCommit(() => woke++);
    assert.equal(count(b), 0, 'b loaded, and listening');
    await b.writeDurable((tx) => tx.putOwnerFailures({ count: 1, last: 1 }));
    await a.writeDurable((tx) => tx.putOwnerFailures({ count: 2, last: 2 }));
    for (let i = 0; i < 200 && woke === 0; i++) await sleep(50);
    assert.equal(woke, 1, 'woken once: by a’s commit, not by its own');
    // Counted as another host's commit: the cached read fetches, and sees it.
    assert.equal(
      b.readCached((tx) => tx.ownerFailures().count),
      2,
    );
  } finally {
    await a.close();
    await b.close();
  }
});
