/**
 * The PostgreSQL connection of a host, on a thread of its own, so the host's
 * synchronous transactions (../tx.ts) can wait for the database: the host
 * posts one request and blocks on a shared flag (pg.ts `call`) until this
 * thread has the answer. The only code that talks to the database.
 *
 * Schema: one vault per database. `vault_rows` holds each store key's record
 * as the same sealed bytes LMDB holds (MessagePack), with the version that
 * last wrote it (a null value is a removal, kept so other hosts learn of it);
 * `vault_meta` holds the vault's version. Every commit moves it from the
 * version the host decided on to the next, or writes nothing (`tryCommit`):
 * that one check orders every host's writes, which is what makes limits,
 * locks and the audit chain global. Its row is locked only for the length of
 * that one statement (or, on the locked path, `begin` to `commit`).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { Keeper, HORIZON_SCHEMA, upgrade } from './horizon.js';
import { edgeAfterKey, pageShare, sharesOf, type ChunkShares } from './digest-chunks.js';
import { coldKey, packRows } from './mirror.js';
import { fromPassfile } from './password.js';
import { lostConnection as lost } from './refusals.js';
import type { PgReply, PgRequest, PgRow } from './pg-protocol.js';

interface Start {
  readonly url: string;
  readonly port: MessagePort;
  readonly flag: Int32Array;
  /** Where LISTEN's wake-ups go (pg.ts onForeignCommit). */
  readonly notify: MessagePort;
  /** This host's id, in the payload of its own NOTIFYs (which it then ignores). */
  readonly self: string;
  /**
   * Shared with the host: [0] 1 while LISTEN is up (so every foreign commit
   * is counted), [1] the count of foreign commits NOTIFY reported.
   */
  readonly seen: Int32Array;
}

const start = workerData as Start;
const { Client } = pg;

/**
 * Milliseconds. A connect or a wait for the version row's lock ends here as
 * an answer (lost, or refused) before the host stops waiting (pg.ts
 * ANSWER_MS, 2 s). A statement may run longer (a large import's commit): the
 * host's wait for it grows with its rows.
 *
 * A lock wait is well under half the host's: a writer queued behind another
 * waiter waits twice (for the row's turn, then for its holder's commit), and
 * each wait's timeout is its own. At 1.5 s, two waits outlasted the host's
 * 2 s, which then took a database that answers for one that does not
 * (issue 37). A lock not had is contention: the host runs the write again
 * (group.ts CONTENDED), so a short wait costs a try, not a refusal.
 */
const CONNECT_MS = 1_500;
const LOCK_MS = 600;
const STATEMENT_MS = 60_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vault_meta (
  id integer PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS vault_rows (
  key text COLLATE "C" PRIMARY KEY,
  value bytea,
  version bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS vault_rows_version ON vault_rows (version);
INSERT INTO vault_meta (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
${HORIZON_SCHEMA}`;

let client: pg.Client | null = null;
interface Page {
  /** Rows fetched (a page past the cursor's end has fewer than asked for). */
  readonly count: number;
  readonly packed: ArrayBuffer;
  readonly share: ReturnType<typeof pageShare> | null;
}
/**
 * A load's next pages, asked for (and packed, and their digest shares taken)
 * before the host asks, in order: two, so neither thread waits on the other
 * when one of them is slower for a page (issue 37).
 */
let prefetched: Promise<Page>[] = [];
const AHEAD = 2;
/** The load's state key, if the host has it, and the shares its file holds. */
let loadKey: Buffer | null = null;
let loadShares: ChunkShares | null = null;
/**
 * Rows after the last chunk's edge (digest-chunks.ts), sent with the next
 * page: a page ends where a chunk does (else a chunk cut where a page of
 * 5,000 happened to end would change with every row inserted before it),
 * up to CARRY_MAX rows a page (the file is a cache).
 */
let carried: PgRow[] = [];
const CARRY_MAX = 20_000;
/** Pages of the load under way read so far. */
let pages = 0;
function page(q: Promise<pg.QueryResult<PgRow>>, limit: number): Promise<Page> {
  return q.then((r) => {
    const got = r.rows;
    let rows = carried.length === 0 ? got : carried.concat(got);
    carried = [];
    if (got.length === limit && rows.length < CARRY_MAX) {
      let cut = rows.length;
      while (cut > 0 && !edgeAfterKey((rows[cut - 1] as PgRow).key)) cut--;
      carried = rows.slice(cut);
      rows = rows.slice(0, cut);
    }
    // Every other page's share of the digest is the host's own to take (pg.ts load),
    // while this thread reads and packs the next: the threads share the digest.
    const mine = pages++ % 2 === 1;
    const packed = packRows(rows);
    return {
      count: got.length,
      // allocUnsafeSlow (packRows): the buffer is its ArrayBuffer's alone, so it can move.
      packed: packed.buffer as ArrayBuffer,
      share: loadKey === null || !mine ? null : pageShare(packed, loadKey, loadShares, rows),
    };
  });
}
let listener: pg.Client | null = null;

function newClient(): pg.Client {
  const c = new Client({
    connectionString: start.url,
    connectionTimeoutMillis: CONNECT_MS,
    // Durable on commit (and on the synchronous standby, where one is configured),
    // whatever the database's default: a value leaves only after its audit record.
    options: `-c synchronous_commit=on -c lock_timeout=${LOCK_MS} -c statement_timeout=${STATEMENT_MS} -c idle_in_transaction_session_timeout=${STATEMENT_MS}`,
  });
  // Writable on the client, and asked for only when the server wants a password.
  if (c.password === null) Object.assign(c, { password: () => fromPassfile(c) });
  return c;
}

async function connected(): Promise<pg.Client> {
  if (client !== null) return client;
  const c = newClient();
  // An error between requests (the server went away): the next request reconnects.
  c.on('error', () => {
    if (client === c) client = null;
  });
  await c.connect();
  // A vault made before the horizon gets its tables, once per connection.
  await upgrade(c);
  client = c;
  return c;
}

/** Reports this host's version and collects tombstones behind the horizon (horizon.ts). */
const keeper = new Keeper(start.self, newClient);

/**
 * The rows a host holds (mirror.ts COLD: not audit records and checksums,
 * which it reads when asked for). Only these come back with a refresh, a
 * lost try or the locked path's fetch: the host dropped the rest on
 * arrival, and after another host's import of 4,000 entries they were most
 * of a lost try's 28,003 rows, whose answer took 1.4 s of the host's 2 s
 * wait (issue 37). (`key` is vault_rows' alone in every query it is put in.)
 */
const HELD = `key NOT LIKE 'audit/%' AND key NOT LIKE 'sum/%'`;

const ROWS = `SELECT key, value FROM vault_rows WHERE version > $1 AND ${HELD}`;

type Reply = Promise<Extract<PgReply, { ok: true }>>;

async function create(): Reply {
  const c = await connected();
  await c.query(SCHEMA);
  return { ok: true };
}

async function refresh(since: number): Reply {
  const c = await connected();
  // One statement, so the version and the rows come from one snapshot.
  let res;
  try {
    // No rows from a version the horizon passed (its removals may be gone).
    res = await c.query<{ v: string; h: string; key: string | null; value: Buffer | null }>(
      `SELECT m.version AS v, m.horizon AS h, r.key, r.value FROM vault_meta m
         LEFT JOIN vault_rows r ON r.version > $1 AND m.horizon <= $1 AND ${HELD}
       WHERE m.id = 1`,
      [since],
    );
  } catch (err) {
    if ((err as { code?: unknown }).code === '42P01') return { ok: true, missing: true };
    throw err;
  }
  const first = res.rows[0];
  if (first === undefined) return { ok: true, missing: true };
  if (since < Number(first.h)) return { ok: true, version: Number(first.v), behind: true };
  const rows = res.rows.filter((r) => r.key !== null) as PgRow[];
  return { ok: true, version: Number(first.v), rows };
}

async function load(req: Extract<PgRequest, { op: 'load' }>): Reply {
  // A first load in pages of the one snapshot, in key order: neither this
  // thread nor the host's holds the whole table's answer at once (issue 37).
  const c = await connected();
  let version: number | undefined;
  if (!req.more) {
    prefetched = [];
    pages = 0;
    carried = [];
    loadKey = req.sealKey ? Buffer.from(req.sealKey) : null;
    loadShares = req.shares ? sharesOf(req.shares) : null;
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const meta = await c.query<{ version: string }>(
        'SELECT version FROM vault_meta WHERE id = 1',
      );
      const v = meta.rows[0]?.version;
      if (v === undefined) {
        await c.query('ROLLBACK');
        return { ok: true, missing: true };
      }
      version = Number(v);
      keeper.loaded(version);
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      if ((err as { code?: unknown }).code === '42P01') return { ok: true, missing: true };
      throw err;
    }
  }
  try {
    // One cursor over the snapshot, read a page at a time: one plan for
    // the whole load, in the table's order (the host sorts the keys once);
    // not the rows a host does not hold (mirror.ts COLD: audit records,
    // checksums), read when asked for.
    // A statement per page (`key > $1 ... LIMIT`) waited on the server
    // about 30 ms a page at 30,000 entries; the key's index, in order,
    // took 550 ms against a plain scan's 80 ms.
    if (!req.more) {
      await c.query(
        `DECLARE vault_load NO SCROLL CURSOR FOR
           SELECT key, value FROM vault_rows WHERE value IS NOT NULL
             AND ${HELD}`,
      );
    }
    const limit = Math.max(1, Math.floor(req.limit));
    const fetch = `FETCH FORWARD ${limit} FROM vault_load`;
    const got = await (prefetched.shift() ?? page(c.query<PgRow>(fetch), limit));
    const done = got.count < req.limit;
    if (done) {
      // Pages asked for past the end (empty), answered before the snapshot closes.
      const past = prefetched;
      prefetched = [];
      await Promise.all(past);
      endLoad();
      await c.query('COMMIT');
    } else {
      // The next pages read, packed and their digest shares taken while the
      // host takes this one in (the connection runs them in order; a
      // failure is a later request's: it awaits that same promise).
      while (prefetched.length < AHEAD) {
        const next = page(c.query<PgRow>(fetch), limit);
        next.catch(() => {});
        prefetched.push(next);
      }
    }
    const s = got.share;
    return {
      ok: true,
      packed: got.packed,
      digest: s?.share ?? null,
      ...(s === null ? {} : { chunks: s.chunks, reused: s.reused, computed: s.computed }),
      done,
      ...(version === undefined ? {} : { version }),
    };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** The locked path (an owner's write, or a group past its tries): the version row held. */
async function begin(since: number): Reply {
  const c = await connected();
  await c.query('BEGIN');
  try {
    // Every host's writers queue here, one at a time, across the fleet.
    const meta = await c.query<{ version: string; horizon: string }>(
      'SELECT version, horizon FROM vault_meta WHERE id = 1 FOR UPDATE',
    );
    const version = meta.rows[0]?.version;
    if (version === undefined) {
      await c.query('ROLLBACK');
      return { ok: true, missing: true };
    }
    if (since < Number(meta.rows[0]?.horizon)) {
      // Loaded afresh first (pg.ts), then asked again: nothing held meanwhile.
      await c.query('ROLLBACK');
      return { ok: true, version: Number(version), behind: true };
    }
    // Read committed: after the lock, this statement sees every commit before it.
    const rows = await c.query<PgRow>(ROWS, [since]);
    return { ok: true, version: Number(version), rows: rows.rows };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * A commit's rows to write, and the removals of rows no host holds (mirror.ts
 * COLD) apart: those are deleted outright, with no tombstone (horizon.ts).
 */
function split(req: { keys: string[]; values: (Uint8Array | null)[] }) {
  const keys: string[] = [];
  const values: (Buffer | null)[] = [];
  const gone: string[] = [];
  req.keys.forEach((k, i) => {
    const v = req.values[i] ?? null;
    if (v === null && coldKey(k)) gone.push(k);
    else {
      keys.push(k);
      values.push(v === null ? null : Buffer.from(v));
    }
  });
  return { keys, values, gone };
}

async function commit(req: Extract<PgRequest, { op: 'commit' }>): Reply {
  const c = await connected();
  try {
    if (req.keys.length > 0) {
      const { keys, values, gone } = split(req);
      await c.query(
        `WITH meta AS (UPDATE vault_meta SET version = $1 WHERE id = 1),
         gone AS (DELETE FROM vault_rows WHERE key = ANY($4::text[]))
         INSERT INTO vault_rows (key, value, version)
           SELECT k, v, $1 FROM unnest($2::text[], $3::bytea[]) AS t(k, v)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version`,
        [req.version, keys, values, gone],
      );
      await c.query(`SELECT pg_notify('vault_commit', $1)`, [start.self]);
    }
    await c.query('COMMIT');
    return { ok: true };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * The optimistic commit, one statement and so one round trip, no lock held
 * across the host's work: the rows are written with version `since + 1`
 * only if the vault is still at `since` (the version the host decided on).
 * The version row is locked for this statement and its commit alone; a
 * writer that meets it locked waits for that commit, then finds the version
 * moved on and writes nothing. A group that wrote nothing is checked the same
 * way (its answers were decided on the copy at `since`). Otherwise the rows
 * newer than `since`, from the statement's snapshot, come back with the
 * refusal, so the host's next try needs no fetch of its own.
 */
const TRY = `
WITH bump AS (
  UPDATE vault_meta SET version = $1::bigint + 1
   WHERE id = 1 AND version = $1::bigint
     AND cardinality($2::text[]) + cardinality($5::text[]) > 0
  RETURNING version, pg_notify('vault_commit', $4::text)
), put AS (
  INSERT INTO vault_rows (key, value, version)
    SELECT t.k, t.v, b.version FROM bump b, unnest($2::text[], $3::bytea[]) AS t(k, v)
  ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version
), gone AS (
  DELETE FROM vault_rows r USING bump b WHERE r.key = ANY($5::text[])
)
SELECT m.version AS v, m.horizon AS h, (SELECT count(*) FROM bump) AS won, r.key, r.value
  FROM vault_meta m
  LEFT JOIN vault_rows r ON r.version > $1::bigint AND NOT EXISTS (SELECT 1 FROM bump)
    AND ${HELD}
    AND m.horizon <= $1::bigint
 WHERE m.id = 1`;

async function tryCommit(req: Extract<PgRequest, { op: 'try' }>): Reply {
  const c = await connected();
  // Named: parsed and planned once per connection, not at every commit.
  const { keys, values, gone } = split(req);
  const res = await c.query<{
    v: string;
    h: string;
    won: string;
    key: string | null;
    value: Buffer | null;
  }>({
    name: 'vault_try',
    text: TRY,
    values: [req.since, keys, values, start.self, gone],
  });
  const first = res.rows[0];
  if (first === undefined) return { ok: true, missing: true };
  if (Number(first.won) > 0) return { ok: true, won: true, version: req.since + 1 };
  const version = Number(first.v);
  if (req.since < Number(first.h)) return { ok: true, won: false, version, behind: true };
  // Nothing to write and nothing written since: the group's answers stand.
  if (req.keys.length === 0 && version === req.since) return { ok: true, won: true, version };
  if (version <= req.since) {
    // Lost to a commit still under way when this statement took its snapshot
    // (it waited for that commit's lock): its rows come in a snapshot of
    // their own, or the host's next try would be decided without them and lose again.
    return { ...(await refresh(req.since)), won: false };
  }
  const rows = res.rows.filter((r) => r.key !== null) as PgRow[];
  return { ok: true, won: false, version, rows };
}

/** The load is over (or abandoned): its key wiped, its shares and rows carried let go. */
function endLoad(): void {
  loadKey?.fill(0);
  loadKey = null;
  loadShares = null;
  carried = [];
}

async function rollback(): Reply {
  prefetched = [];
  endLoad();
  if (client !== null) await client.query('ROLLBACK');
  return { ok: true };
}

/**
 * LISTENs on a connection of its own. Each foreign commit's NOTIFY bumps the
 * shared count (pg.ts reads it with no round trip: a copy synced since the
 * last one is current) and wakes the host's followers; the shared flag says
 * whether the count can be trusted (the listener is connected and listening).
 */
async function cold(req: Extract<PgRequest, { op: 'cold' }>): Reply {
  const c = await connected();
  // One statement: the rows and the version they are at from one snapshot
  // (inside a write transaction, the version its lock holds).
  const res = await c.query<{ v: string; key: string | null; value: Buffer | null }>(
    `SELECT m.version AS v, r.key, r.value FROM vault_meta m
       LEFT JOIN LATERAL (SELECT key, value FROM vault_rows
         WHERE key >= $1 AND key < $2 AND value IS NOT NULL ORDER BY key LIMIT $3) r ON true
       WHERE m.id = 1`,
    [req.start, req.end, req.limit],
  );
  const first = res.rows[0];
  if (first === undefined) return { ok: true, missing: true };
  const rows = res.rows.filter((r) => r.key !== null) as PgRow[];
  return { ok: true, version: Number(first.v), rows };
}

async function listen(): Reply {
  if (listener === null) {
    const l = newClient();
    l.on('notification', (n) => {
      if (n.payload === start.self) return;
      Atomics.add(start.seen, 1, 1);
      start.notify.postMessage('commit');
    });
    l.on('error', () => {
      if (listener === l) listener = null;
      // Untrusted from now: every read fetches again until a later request listens again.
      Atomics.store(start.seen, 0, 0);
      Atomics.add(start.seen, 1, 1);
    });
    await l.connect();
    await l.query('LISTEN vault_commit');
    listener = l;
    Atomics.store(start.seen, 0, 1);
  }
  return { ok: true };
}

async function close(): Reply {
  Atomics.store(start.seen, 0, 0);
  await Promise.allSettled([client?.end(), listener?.end(), keeper.close()]);
  client = null;
  listener = null;
  return { ok: true };
}

function handle(req: PgRequest): Reply {
  switch (req.op) {
    case 'create':
      return create();
    case 'refresh':
      keeper.saw(req.since);
      return refresh(req.since);
    case 'load':
      return load(req);
    case 'begin':
      keeper.saw(req.since);
      return begin(req.since);
    case 'commit':
      return commit(req);
    case 'try':
      keeper.saw(req.since);
      return tryCommit(req);
    case 'rollback':
      return rollback();
    case 'cold':
      return cold(req);
    case 'listen':
      return listen();
    case 'close':
      return close();
  }
}

function reply(r: PgReply): void {
  const moved = r.ok && r.packed !== undefined ? [r.packed] : [];
  start.port.postMessage(r, moved);
  Atomics.store(start.flag, 0, 1);
  Atomics.notify(start.flag, 0);
}

start.port.on('message', (req: PgRequest) => {
  handle(req).then(reply, (err: unknown) => {
    const isLost = lost(err);
    if (isLost && client !== null) {
      const c = client;
      client = null;
      c.end().catch(() => {});
    }
    reply({
      ok: false,
      message: err instanceof Error ? err.message : String(err),
      code: String((err as { code?: unknown }).code ?? ''),
      lost: isLost,
    });
  });
});
parentPort?.postMessage('ready');
