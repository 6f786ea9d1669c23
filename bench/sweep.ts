/**
 * `vault-cli sweep` beside `grep -F -f` over the same transcripts, in one run:
 * 1 GB (default) of generated Claude Code-style JSONL in 64 files, 1,000
 * values released by one `render`, a thousand of them planted. Prints seconds,
 * MB/s and each process's peak RSS (`/usr/bin/time -f %M`); asserts nothing.
 * Target: sweep not slower than grep, memory bounded (not growing with the
 * input).
 *
 * grep runs three ways: with the 1,000 values as the sweep gets them
 * (LANG=C.UTF-8, the user's locale) and with LC_ALL=C, its fastest; and with
 * every form the sweep looks for (plain, base64 at three alignments, URL,
 * JSON; about 5,000 patterns), which is the sweep's own task. The four run in
 * turn, BENCH_ROUNDS rounds (default 3) over a warm page cache, so a burst of
 * load on the shared machine falls on all of them alike; each row gives the
 * best and the median. The sweep's time includes its start-up, the owner
 * unlock, the host request for the values and the marks.
 *
 *   node --import tsx bench/sweep.ts [MB, default 1024]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { leakForms } from '../src/sweep/leak-forms.js';
import { rawPost } from '../test/support/raw-host.js';
import { CLI, PASSPHRASE, Rig } from '../test/support/rig.js';

const MB = Number(process.argv[2] ?? 1024);
const VALUES = Number(process.env.BENCH_VALUES ?? 1000);
const FILES = 64;

/** A transcript line as Claude Code writes one: a tool result in a user turn. */
function line(text: string): string {
  return (
    JSON.stringify({
      parentUuid: randomBytes(8).toString('hex'),
      isSidechain: false,
      userType: 'external',
      cwd: '/home/me/project',
      sessionId: 'b1d9c6f0-2f0a-4c53-9d6e-0f7b8f8a1c11',
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', content: text }] },
      timestamp: new Date().toISOString(),
    }) + '\n'
  );
}

const WORDS = (
  'the build failed because the module could not be resolved; running npm install again ' +
  'then the test suite passed with 412 tests in 31 seconds and the linter reported no ' +
  'problems, so I committed the change and pushed the branch for review. const x = ' +
  'await fetch(url, { headers }); if (!res.ok) throw new Error(res.statusText); export ' +
  'function handler(event) { return { statusCode: 200, body: JSON.stringify(event) } }'
).split(' ');

function filler(bytes: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(Math.random() * WORDS.length)] as string;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

interface Timed {
  seconds: number;
  rssMb: number;
  status: number | null;
  stdoutLines: number;
}

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv): Timed {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const kb = Number(/([0-9]+)\s*$/.exec(r.stderr)?.[1] ?? NaN);
  return {
    seconds,
    rssMb: kb / 1024,
    status: r.status,
    stdoutLines: r.stdout.split('\n').filter(Boolean).length,
  };
}

type Rounds = ReturnType<typeof rounds>[number];

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Each tool once a round, in turn: the best run of each, and the median time. */
function rounds(tools: readonly (() => Timed)[]): { best: Timed; median: number }[] {
  const runs: Timed[][] = tools.map(() => []);
  for (let r = 0; r < ROUNDS; r++) tools.forEach((run, i) => runs[i]?.push(run()));
  return runs.map((ts) => {
    const sorted = [...ts].sort((a, b) => a.seconds - b.seconds);
    return {
      best: sorted[0] as Timed,
      median: (sorted[Math.floor((sorted.length - 1) / 2)] as Timed).seconds,
    };
  });
}

/** BENCH_PROF=<dir>: the sweep runs under --cpu-prof, its profile left there. */
const prof = process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : [];

async function main(): Promise<void> {
  const rig = new Rig();
  try {
    await rig.create();
    const values = Array.from(
      { length: VALUES },
      (_, i) => `sk_${i % 2 === 0 ? 'live' : 'test'}_${randomBytes(18).toString('base64url')}`,
    );
    const socket = join(rig.vaultDir, 'host.sock');
    for (let i = 0; i < VALUES; i++) {
      const reply = await rawPost(socket, 'entry.set', {
        passphrase: PASSPHRASE,
        entry: `Bench ${i}`,
        field: 'token',
        value: Buffer.from(values[i] as string).toString('base64'),
      });
      if (!reply.includes('"ok":true')) throw new Error(`entry.set: ${reply}`);
    }
    const names = values.map((_, i) => `Bench ${i}`);
    const token = await rig.addAgent('bench', names, [
      '--per-minute',
      '100000',
      '--per-hour',
      '100000',
    ]);
    await rig.liftValuesLimit('bench');
    // Released one read each (the `get` request, straight to the socket): on
    // this tree a render of many distinct references can fail with VLT-3003
    // (reported; not the sweep's).
    for (const entry of names) {
      const reply = await rawPost(socket, 'read', { mode: 'get', token, entry, field: 'token' });
      if (!reply.includes('"ok":true')) throw new Error(`read: ${reply.slice(-200)}`);
    }

    const dir = join(rig.root, 'transcripts');
    mkdirSync(dir);
    const perFile = Math.ceil((MB * 1024 * 1024) / FILES);
    const plantEvery = Math.ceil((MB * 1024 * 1024) / VALUES);
    let written = 0;
    let nextPlant = plantEvery / 2;
    let planted = 0;
    for (let f = 0; f < FILES; f++) {
      const fd = openSync(join(dir, `session-${f}.jsonl`), 'w');
      let inFile = 0;
      let block = '';
      while (inFile < perFile) {
        let text = filler(200 + Math.floor(Math.random() * 600));
        if (written + inFile >= nextPlant) {
          text += ` token=${values[planted % VALUES] as string} ok`;
          planted++;
          nextPlant += plantEvery;
        }
        const l = line(text);
        block += l;
        inFile += Buffer.byteLength(l);
        if (block.length > 1 << 20) {
          writeSync(fd, block);
          block = '';
        }
      }
      writeSync(fd, block);
      closeSync(fd);
      written += inFile;
    }
    const plain = join(rig.root, 'values.txt');
    writeFileSync(plain, values.join('\n') + '\n');
    const everyForm = join(rig.root, 'forms.txt');
    const forms = values.flatMap((v) =>
      leakForms(Buffer.from(v)).map((f) => f.bytes.toString('latin1')),
    );
    writeFileSync(everyForm, [...new Set(forms)].join('\n') + '\n');

    const mb = written / 1024 / 1024;
    // Warm the page cache.
    spawnSync('sh', ['-c', `cat "$0"/* > /dev/null`, dir]);
    const grepEnv = { PATH: process.env.PATH, LANG: 'C.UTF-8' };
    const [sweep, grep, grepC, grepForms] = rounds([
      () =>
        timed(
          process.execPath,
          [...prof, CLI, 'sweep', '--paths-only', '--path', dir, '--json'],
          rig.env,
        ),
      () => timed('grep', ['-rFn', '-f', plain, dir], grepEnv),
      () => timed('grep', ['-rFn', '-f', plain, dir], { ...grepEnv, LC_ALL: 'C' }),
      () => timed('grep', ['-rFn', '-f', everyForm, dir], { ...grepEnv, LC_ALL: 'C' }),
    ]) as [Rounds, Rounds, Rounds, Rounds];
    const row = (name: string, t: Rounds, what: string) =>
      `| ${name.padEnd(34)} | ${t.best.seconds.toFixed(2).padStart(6)} | ${t.median.toFixed(2).padStart(6)} | ${(mb / t.best.seconds).toFixed(0).padStart(6)} | ${t.best.rssMb.toFixed(0).padStart(6)} | ${String(t.best.stdoutLines).padStart(6)} | ${what}`;
    console.log(
      `# ${mb.toFixed(0)} MB in ${FILES} files, ${VALUES} released values, ${planted} planted; ` +
        `${forms.length} forms (${new Set(forms).size} distinct); ${ROUNDS} rounds`,
    );
    console.log(
      '| tool                               | best s | median |   MB/s | RSS MB |  lines | patterns',
    );
    console.log(
      row('vault-cli sweep', sweep, `${VALUES} values, every form (exit ${sweep.best.status})`),
    );
    console.log(row('grep -rFn -f values (C.UTF-8)', grep, `${VALUES} plain`));
    console.log(row('grep -rFn -f values (LC_ALL=C)', grepC, `${VALUES} plain`));
    console.log(row('grep -rFn -f forms (LC_ALL=C)', grepForms, 'every form'));
    const ratio = (a: Rounds, b: Rounds) =>
      `${(a.best.seconds / b.best.seconds).toFixed(2)}x (best), ${(a.median / b.median).toFixed(2)}x (median)`;
    console.log(`# sweep / grep (C.UTF-8): ${ratio(sweep, grep)} the time`);
    console.log(`# sweep / grep (LC_ALL=C): ${ratio(sweep, grepC)} the time`);
    rmSync(dir, { recursive: true, force: true });
  } finally {
    await rig.dispose();
  }
}

await main();
