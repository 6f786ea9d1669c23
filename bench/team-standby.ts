/**
 * The primary-and-synchronous-standby run of docs/team.md: two hosts fill
 * values from a team vault whose database has a synchronous standby; the
 * primary's postmaster is killed with SIGKILL in the middle of the load, the
 * standby promoted and put where the primary was (the hosts' URL unchanged),
 * and the load goes on. Then it counts: every value a client received must
 * have its fill record in the promoted database's audit chain, and the chain
 * must verify. Prints the counts; exits 1 if a released value is unaudited.
 * Too slow for CI's budget (a base backup and two server starts), so a bench.
 *
 *   node --import tsx bench/team-standby.ts [fills before the kill]   (after npm run build)
 */
import { call } from '../src/client/client.js';
import type { ClientOptions } from '../src/client/options.js';
import { auditRecords } from '../test/support/e2e-helpers.js';
import { Postgres } from '../test/support/postgres.js';
import { CLI, ok, Rig } from '../test/support/rig.js';

const BEFORE = Number(process.argv[2] ?? 300);
const WORKERS = 4;

function client(r: Rig): ClientOptions {
  return {
    vaultDir: r.vaultDir,
    daemon: { node: process.execPath, script: CLI, env: r.env },
    autoStart: false,
  };
}

const pg = await Postgres.start();
const rigs: Rig[] = [];
let failed = false;
try {
  const db = pg.database();
  const a = new Rig();
  const b = new Rig();
  rigs.push(a, b);
  b.env.VAULT_STORE_URL = db.url;
  ok(await a.owner(['vault', 'create', '--store', db.url]));
  await a.set('db', 'standby-value');
  const token = await a.addAgent('filler', ['db']);
  await a.liftValuesLimit('filler');
  ok(await b.owner(['agent', 'show', 'filler']));
  const say = (what: string) => process.stderr.write(`team-standby: ${what}\n`);
  say(`vault made (${a.root}, ${b.root})`);
  const standby = await pg.startStandby();
  say('standby synchronous; load starts');

  let released = 0;
  let refused = 0;
  let running = true;
  const codes = new Map<string, number>();
  const loops = Array.from({ length: WORKERS }, async (_, w) => {
    while (running) {
      try {
        await call(client(w % 2 === 0 ? a : b), 'resolve', {
          token,
          refs: [{ entry: 'db', field: 'password' }],
        });
        released++;
      } catch (err) {
        refused++;
        const code = String((err as { code?: unknown }).code);
        codes.set(code, (codes.get(code) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });
  while (released < BEFORE) {
    await new Promise((r) => setTimeout(r, 500));
    say(`${released} released, ${refused} refused ${JSON.stringify([...codes])}`);
  }
  const t0 = Date.now();
  await pg.crash();
  const atKill = released;
  say('primary killed');
  await pg.promoteStandby(standby);
  say('standby promoted');
  const down = Date.now() - t0;
  const resumedAt = released;
  while (released < resumedAt + 100) {
    await new Promise((r) => setTimeout(r, 500));
    say(`${released} released, ${refused} refused ${JSON.stringify([...codes])}`);
  }
  running = false;
  await Promise.all(loops);

  const records = (await auditRecords(a)).filter((r) => r.action === 'fill' && r.outcome === 'ok');
  const verify = await a.owner(['audit', '--verify']);
  console.log('team standby run: primary SIGKILLed under load, standby promoted in its place');
  console.log(`  fills released before the kill     ${atKill}`);
  console.log(`  fills released in all              ${released}`);
  console.log(
    `  refusals (${[...codes].map(([c, n]) => `${c} x${n}`).join(', ') || 'none'})  ${refused}`,
  );
  console.log(`  kill to promoted standby serving   ${down} ms`);
  console.log(`  fill records in the promoted chain ${records.length}`);
  console.log(
    `  audit --verify                     ${verify.code === 0 ? 'ok' : verify.stderr.trim()}`,
  );
  failed = records.length < released || verify.code !== 0;
  console.log(
    failed ? '  LOST: a released value has no audit record' : '  nothing released unaudited',
  );
} finally {
  for (const r of rigs) await r.dispose();
  await pg.stop();
}
process.exitCode = failed ? 1 : 0;
