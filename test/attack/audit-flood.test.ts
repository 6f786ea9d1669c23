// A flood of refused requests from an agent's shell (issue 29, "exhausting
// shared resources"): every refusal is accounted for in the audit log, in a
// bounded number of records (src/host/audit/refusals.ts), the legitimate agent
// and the owner are served meanwhile, the chain verifies, and another caller's
// refusals are still recorded in full. Real host, real vault-cli processes,
// and one real process that floods the socket.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SOCKET_NAME } from '../../src/core/protocol.js';
import {
  FULL_PER_WINDOW,
  REFUSAL_WINDOW_MS,
  SOURCES_PER_WINDOW,
} from '../../src/host/audit/refusals.js';
import { assertRefused, disposeAll, hostPid, waitGone } from '../support/e2e-helpers.js';
import { Rig, fate, ok } from '../support/rig.js';

interface Rec {
  readonly seq: number;
  readonly action: string;
  readonly actor: string;
  readonly source: string;
  readonly outcome: string;
  readonly entry: string | null;
}

/** Refusals the flooding process sends at least, whenever it is told to stop. */
const AT_LEAST = 2000;

/**
 * One process that sends `whoami` requests with the token in VAULT_TOKEN (a
 * garbage one when unset), `width` at a time, on fresh connections, until its
 * stdin ends and it has sent `least`; it prints `started` after its first
 * reply, then the number of replies refused as FLOOD_CODE and of any other
 * reply. `op` is `whoami`, or `read` (of db.password).
 */
const FLOOD = `
const { connect } = require('node:net');
const [sock, least, width, op] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const token = process.env.VAULT_TOKEN || 'not-a-token-' + 'x'.repeat(20);
const body = JSON.stringify(op === 'read' ? { token, mode: 'get', entry: process.env.FLOOD_ENTRY || 'db', field: 'password' } : { token });
const head = 'POST /v1/' + op + ' HTTP/1.1\\r\\nHost: vault-host\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\nConnection: close\\r\\n\\r\\n';
let ended = false, denied = 0, other = 0, said = false;
process.stdin.on('end', () => { ended = true; }).resume();
const one = () => new Promise((resolve) => {
  const s = connect(sock, () => s.write(head + body));
  let out = '';
  s.on('data', (c) => { out += c; });
  s.on('error', () => {});
  s.on('close', () => resolve(out));
});
(async () => {
  await Promise.all(Array.from({ length: width }, async () => {
    while (!ended || denied + other < least) {
      const r = await one();
      if (r.includes(process.env.FLOOD_CODE || 'VLT-2040')) denied++; else { if (other === 0) process.stderr.write(JSON.stringify(r)); other++; }
      if (!said) { said = true; process.stdout.write('started\\n'); }
    }
  }));
  process.stdout.write(JSON.stringify({ denied, other }) + '\\n');
})();
`;

const rig = new Rig();
let good = '';
let revoked = '';

before(async () => {
  await rig.create();
  await rig.set('db', 'flood-test-value');
  good = await rig.addAgent('good', ['db']);
  revoked = await rig.addAgent('other', ['db']);
  ok(await rig.owner(['agent', 'revoke', 'other']));
});
after(async () => disposeAll(rig));

async function records(): Promise<Rec[]> {
  return ok(await rig.owner(['audit', '--json']))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

/** How many refusals one record stands for: a count record its count, any other one. */
function counted(r: Rec): number {
  const m = r.entry === null ? null : /^\((\d+) more refusals? of this kind/.exec(r.entry);
  return m === null ? 1 : Number(m[1]);
}

/** The flooding process: `least` requests at least, `width` at a time, with `token` if given. */
function flooder(
  least: number,
  width: number,
  token?: string,
  op = 'whoami',
  entry = 'db',
  code = op !== 'read' ? 'VLT-2040' : entry === 'db' ? 'VLT-2043' : 'VLT-2041',
) {
  const args = ['-e', FLOOD, join(rig.vaultDir, SOCKET_NAME), `${least}`, `${width}`, op];
  return spawn(process.execPath, args, {
    env: {
      ...rig.env,
      VAULT_PASSPHRASE_FILE: undefined,
      VAULT_TOKEN: token,
      FLOOD_CODE: code,
      FLOOD_ENTRY: entry,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

const isCount = (r: Rec) => r.entry !== null && /^\(\d+ more refusals?/.test(r.entry);
const isMarker = (r: Rec) => r.entry?.startsWith('(further refusals') === true;
const storeBytes = () => statSync(join(rig.vaultDir, 'vault.mdb')).size;

/** Runs a flood of `least` requests to its end; what it counted. */
async function flooded(
  least: number,
  width: number,
  token?: string,
  op = 'whoami',
  entry = 'db',
  code?: string,
): Promise<{ denied: number; other: number }> {
  const flood = flooder(least, width, token, op, entry, code);
  flood.stdin.end();
  const result = await fate(flood);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as {
    denied: number;
    other: number;
  };
}

test('a flood of garbage tokens is coalesced: bounded records, every refusal counted, others still served and recorded', async () => {
  // The host is up (and its store at its size) before the flood.
  await hostPid(rig);
  const before = await records();
  const bytesBefore = storeBytes();
  const started = Date.now();

  const flood = flooder(AT_LEAST, 4);
  const ended = fate(flood);
  await new Promise<void>((resolve, reject) => {
    flood.stdout.on('data', (c: Buffer) => {
      if (c.toString('utf8').includes('started')) resolve();
    });
    flood.on('close', () => reject(new Error('the flood ended before it started')));
  });

  // During the flood: the agent reads, the owner works, and two other
  // callers' refusals (a garbage token from another process, a revoked
  // token) come in.
  assert.equal(ok(await rig.agent(['get', 'db'], good)), 'flood-test-value\n');
  ok(await rig.owner(['entry', 'ls']));
  assertRefused(await rig.agent(['get', 'db'], 'not-a-token-either'), 'VLT-2040');
  assertRefused(await rig.agent(['get', 'db'], revoked), 'VLT-2040');
  // A shell loop: a new process (pid) per refusal.
  const loop = SOURCES_PER_WINDOW + 4;
  for (let i = 0; i < loop; i += 2) {
    const two = await Promise.all([
      rig.agent(['get', 'db'], `not-a-token-${i}`),
      rig.agent(['get', 'db'], `not-a-token-${i + 1}`),
    ]);
    for (const r of two) assertRefused(r, 'VLT-2040');
  }
  assert.equal(ok(await rig.agent(['get', 'db'], good)), 'flood-test-value\n');

  flood.stdin.end();
  const result = await ended;
  assert.equal(result.code, 0, result.stderr);
  const sent = JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as {
    denied: number;
    other: number;
  };
  assert.equal(sent.other, 0, 'every flood request was refused as VLT-2040');
  assert.ok(sent.denied >= AT_LEAST);

  const fresh = (await records()).slice(before.length);
  const floodSource = (r: Rec) => r.source.startsWith(`pid:${flood.pid} `);
  const garbage = fresh.filter((r) => r.action === 'denied' && r.actor === 'cli:?');

  // Every garbage refusal is accounted for: a record in full, a marker, or a count.
  const accounted = garbage.reduce((n, r) => n + counted(r), 0);
  assert.equal(accounted, sent.denied + 1 + loop, JSON.stringify(garbage));

  // The flooding process: its first refusals in full, a marker, then counts.
  const mine = garbage.filter(floodSource);
  assert.equal(mine.filter((r) => !isCount(r) && !isMarker(r)).length >= FULL_PER_WINDOW, true);
  assert.ok(mine.some(isMarker), 'a marker says counting began');
  assert.ok(mine.some(isCount), 'a record carries the count');
  assert.equal(
    mine.reduce((n, r) => n + counted(r), 0),
    sent.denied,
  );
  // Per window: FULL_PER_WINDOW + a marker + a count, and a count per `audit` read.
  assert.ok(mine.length <= 2 * (FULL_PER_WINDOW + 2) + 2, `${mine.length} records`);
  // A record takes about 380 bytes: uncoalesced, the flood alone would add sent.denied x 380.
  const grown = storeBytes() - bytesBefore;
  assert.ok(grown <= 256 * 1024, `the store grew by ${grown} bytes`);
  assert.ok(sent.denied * 380 > 2 * 256 * 1024, 'the flood was large enough to tell');

  // The other process's garbage token and the revoked token: each recorded in full.
  const others = garbage.filter((r) => !floodSource(r) && !isCount(r) && !isMarker(r));
  assert.ok(others.length >= 1, 'another process’s first refusal is in full');
  const other = fresh.filter((r) => r.actor === 'cli:other');
  assert.equal(other.length, 1, JSON.stringify(other));
  assert.equal(other[0]?.action, 'denied');
  assert.equal(other[0]?.outcome, 'VLT-2040');
  assert.equal(isCount(other[0] as Rec) || isMarker(other[0] as Rec), false);
  // Successful reads are never coalesced: both recorded, in full.
  const reads = fresh.filter((r) => r.actor === 'cli:good');
  assert.deepEqual(
    reads.map((r) => [r.outcome, r.entry]),
    [
      ['ok', 'db'],
      ['ok', 'db'],
    ],
  );

  // The shell loop's processes: at most SOURCES_PER_WINDOW of them in full
  // per window, the rest counted under the group (`pid:* uid:<n>`).
  const loopSources = new Set(
    garbage.filter((r) => !floodSource(r) && !r.source.startsWith('pid:*')).map((r) => r.source),
  );
  assert.ok(loopSources.size <= 2 * SOURCES_PER_WINDOW, `${loopSources.size} sources in full`);
  if (Date.now() - started < REFUSAL_WINDOW_MS) {
    // All in one window: 1 + loop processes besides the flood's, more than the budget.
    assert.ok(loopSources.size <= SOURCES_PER_WINDOW - 1, `${loopSources.size} sources in full`);
    assert.ok(garbage.some((r) => r.source.startsWith('pid:* ') && isMarker(r)));
  }

  const verify = await rig.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
  assert.match(verify.stdout, /audit chain verified/);
});

test('a count still open when the host stops is written before it stops', async () => {
  const before = await records();
  const pid = await hostPid(rig);
  // FULL_PER_WINDOW + 1 + 5 refusals from one process, of a revoked token (a
  // kind of its own: the first test's garbage floods leave its group's budget
  // alone): the last 5 only counted.
  const n = FULL_PER_WINDOW + 6;
  const flood = flooder(n, 1, revoked);
  flood.stdin.end();
  const result = await fate(flood);
  assert.equal(result.code, 0, result.stderr);
  const sent = JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as { denied: number };
  assert.equal(sent.denied, n);
  ok(await rig.owner(['daemon', 'stop']));
  assert.notEqual(pid, 0);
  const all = (await records()).slice(before.length);
  const fresh = all.filter((r) => r.source.startsWith(`pid:${flood.pid} `));
  assert.equal(fresh.filter(isCount).length, 1, JSON.stringify(all));
  assert.equal(
    fresh.reduce((k, r) => k + counted(r), 0),
    n,
  );
  assert.equal(fresh.length, FULL_PER_WINDOW + 2);
  const verify = await rig.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
});

test('a locked agent asking again and again: its refusals coalesced as well', async () => {
  const locked = await rig.addAgent('stuck', ['db']);
  ok(await rig.owner(['agent', 'lock', 'stuck']));
  const before = await records();
  const n = FULL_PER_WINDOW + 6;
  const sent = await flooded(n, 1, locked, 'read');
  assert.deepEqual(sent, { denied: n, other: 0 });
  const fresh = (await records()).slice(before.length).filter((r) => r.actor === 'cli:stuck');
  assert.ok(
    fresh.every((r) => r.action === 'locked' && r.outcome === 'VLT-2043'),
    JSON.stringify(fresh),
  );
  // In full (naming the entry asked for), then a marker, then one count.
  assert.deepEqual(
    fresh.map((r) => (isCount(r) ? 'count' : isMarker(r) ? 'marker' : r.entry)),
    [...Array.from({ length: FULL_PER_WINDOW }, () => 'db'), 'marker', 'count'],
  );
  assert.equal(
    fresh.reduce((k, r) => k + counted(r), 0),
    n,
  );
  const verify = await rig.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
});

test('an agent asking again and again for a name out of its scope: the first in full, the repeats coalesced', async () => {
  const guesser = await rig.addAgent('guesser', ['db']);
  const before = await records();
  const n = FULL_PER_WINDOW + 6;
  const sent = await flooded(n, 1, guesser, 'read', 'payroll');
  assert.deepEqual(sent, { denied: n, other: 0 });
  const fresh = (await records()).slice(before.length).filter((r) => r.actor === 'cli:guesser');
  // The first takes a slot of the windows and is recorded on its own; the
  // repeats take none and are coalesced per source: in full, a marker, a count.
  assert.deepEqual(
    fresh.map((r) => (isCount(r) ? 'count' : isMarker(r) ? 'marker' : `${r.outcome} ${r.entry}`)),
    [...Array.from({ length: 1 + FULL_PER_WINDOW }, () => 'VLT-2041 payroll'), 'marker', 'count'],
  );
  assert.equal(
    fresh.reduce((k, r) => k + counted(r), 0),
    n,
  );
  const verify = await rig.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
});

test('an agent over its limit asking again and again while its violation is quiet: the violation in full, the repeats coalesced', async () => {
  await rig.set('db2', 'second-value');
  const over = await rig.addAgent('over', ['db', 'db2'], ['--per-minute', '1']);
  assert.equal(ok(await rig.agent(['get', 'db'], over)), 'flood-test-value\n');
  const before = await records();
  const n = FULL_PER_WINDOW + 6;
  const sent = await flooded(n, 1, over, 'read', 'db2', 'VLT-2042');
  assert.deepEqual(sent, { denied: n, other: 0 });
  const fresh = (await records()).slice(before.length).filter((r) => r.actor === 'cli:over');
  assert.ok(
    fresh.every((r) => r.action === 'limited' && r.outcome === 'VLT-2042'),
    JSON.stringify(fresh),
  );
  // The violation, then its repeats: in full, a marker, one count.
  assert.deepEqual(
    fresh.map((r) => (isCount(r) ? 'count' : isMarker(r) ? 'marker' : r.entry)),
    [...Array.from({ length: FULL_PER_WINDOW + 1 }, () => 'db2'), 'marker', 'count'],
  );
  assert.equal(
    fresh.reduce((k, r) => k + counted(r), 0),
    n,
  );
  // One violation, not locked: the repeats were one burst.
  assert.match(ok(await rig.owner(['agent', 'show', 'over'])), /state:\s+violation/);
  ok(await rig.owner(['audit', '--verify']));
});

test('an agent re-reading an entry it may read, again and again: locked past its values a minute, its records bounded', async () => {
  const looper = await rig.addAgent('looper', ['db']);
  const before = await records();
  const bytesBefore = statSync(join(rig.vaultDir, 'vault.mdb')).size;
  const n = 3000;
  const sent = await flooded(n, 4, looper, 'read');
  // Released, then VLT-2042 (over the limit, and its quiet time), then VLT-2043 for the rest.
  assert.ok(sent.denied > 2000, JSON.stringify(sent));
  const fresh = (await records()).slice(before.length).filter((r) => r.actor === 'cli:looper');
  const released = fresh.filter((r) => r.outcome === 'ok');
  assert.ok(released.length >= 600 && released.length < 700, String(released.length));
  assert.ok(
    fresh.some((r) => r.outcome === 'VLT-2042'),
    JSON.stringify(fresh.slice(-12)),
  );
  assert.match(ok(await rig.owner(['agent', 'show', 'looper'])), /state:\s+locked/);
  // 3,000 releases would have written ~1.1 MB of records.
  assert.ok(fresh.length < 720, `${fresh.length} records`);
  const grown = statSync(join(rig.vaultDir, 'vault.mdb')).size - bytesBefore;
  assert.ok(grown <= 512 * 1024, `the store grew by ${grown} bytes`);
  // Another agent is served.
  assert.equal(ok(await rig.agent(['get', 'db'], good)), 'flood-test-value\n');
  ok(await rig.owner(['audit', '--verify']));
});

test('a host killed mid-window loses only the open count, and the log shows it', async () => {
  const token = await rig.addAgent('gone', ['db']);
  ok(await rig.owner(['agent', 'revoke', 'gone']));
  const before = await records();
  const n = FULL_PER_WINDOW + 6;
  const flood = flooder(n, 1, token);
  flood.stdin.end();
  const result = await fate(flood);
  assert.equal(result.code, 0, result.stderr);
  const pid = await hostPid(rig);
  process.kill(pid, 'SIGKILL');
  assert.equal(await waitGone(pid), true);
  const fresh = (await records()).slice(before.length).filter((r) => r.actor === 'cli:gone');
  // The first refusals in full and the marker survive; the count after the
  // marker (n - FULL_PER_WINDOW - 1 refusals) went with the host.
  assert.deepEqual(
    fresh.map((r) => (isCount(r) ? 'count' : isMarker(r) ? 'marker' : r.outcome)),
    [...Array.from({ length: FULL_PER_WINDOW }, () => 'VLT-2040'), 'marker'],
  );
  const verify = await rig.owner(['audit', '--verify']);
  assert.equal(verify.code, 0, verify.stderr);
});
