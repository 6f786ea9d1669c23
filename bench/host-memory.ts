/**
 * A host's memory under a sustained audit log (issue 42; not CI; asserts
 * nothing, prints figures). `reads` agent reads (each one audit record),
 * `conc` at a time on kept-alive connections (the client library's channel,
 * as the proxy calls the host), from this one process, so the host is what is
 * measured. Every twentieth of the run a line with the host's RSS split into
 * anonymous (heap, buffers) and file-backed (the node binary and libraries,
 * and the store's mapped pages, also shown alone), the store's size, the
 * reads a second and the host's CPU time a read. At the end, whether an LMDB
 * host stayed under the bound docs/benchmarks.md states (HOST_BOUND), and how
 * much each host grew over the second half of the run (levelled off: about
 * nothing).
 *
 * The baseline beside it, in the same run: the same host's figures once warmed
 * up (after the first 2% of the reads), and, with `--baseline <dist>` (another
 * build's dist/, e.g. a `git archive` of the commit before, built), a host of
 * that build on a vault of its own, loaded in the same interleaved loop (a
 * chunk each in turn) and sampled alike. `--engine pg`: team hosts, on a
 * PostgreSQL cluster started here (test/support/postgres.ts).
 *
 *   node --import tsx bench/host-memory.ts [reads=1000000] [--conc 32] [--baseline <dist>] [--engine pg]
 */
import { realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { HostChannel } from '../src/client/channel.js';
import { loadReader } from '../test/support/e2e-helpers.js';
import { Postgres } from '../test/support/postgres.js';
import { HOST_BOUND, cpuMs, memoryOf, residentOf, type Memory } from '../test/support/procs.js';
import { CLI, Rig } from '../test/support/rig.js';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const conc = Number(opt('--conc') ?? 32);
const baseline = opt('--baseline');
const engine = opt('--engine') ?? 'lmdb';
const total = Number(args[0] ?? 1_000_000);
const MiB = 1024 * 1024;
const mib = (n: number) => (n / MiB).toFixed(0);
const pg = engine === 'pg' ? await Postgres.start() : null;

interface Sample extends Memory {
  /** The store file's mapped pages resident in the host (LMDB; 0 for a team host). */
  readonly store: number;
  readonly reads: number;
}

interface Subject {
  readonly label: string;
  readonly rig: Rig;
  readonly channel: HostChannel;
  readonly token: string;
  readonly pid: number;
  readonly samples: Sample[];
  reads: number;
  refused: number;
  warm: Sample | null;
}

const storeFile = (s: Subject) => join(s.rig.vaultDir, 'vault.mdb');

function sample(s: Subject): Sample {
  const store = pg === null ? residentOf(s.pid, realpathSync(storeFile(s))) : 0;
  return { ...memoryOf(s.pid), store, reads: s.reads };
}

async function subject(label: string, script: string): Promise<Subject> {
  const rig = new Rig();
  rig.cli = script;
  if (pg !== null) rig.env.VAULT_STORE_URL = pg.database().url;
  const { token, channel, pid } = await loadReader(rig, 'memory-bench-value');
  const s = { label, rig, channel, token, pid, samples: [], reads: 0, refused: 0, warm: null };
  return s;
}

/** `n` reads of `s`'s host, `conc` at a time. */
async function load(s: Subject, n: number): Promise<void> {
  let left = n;
  const body = { token: s.token, entry: 'E', field: 'password', mode: 'get' as const };
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (left > 0) {
        left--;
        try {
          await s.channel.call('read', body);
          s.reads++;
        } catch {
          s.refused++;
        }
      }
    }),
  );
}

const subjects = [await subject('this tree', CLI)];
if (baseline !== undefined)
  subjects.push(
    await subject(`baseline ${baseline}`, join(resolve(baseline), 'src', 'cli', 'main.js')),
  );
for (const s of subjects) console.log(`${s.label}: ${engine} host ${s.pid}`);
console.log(
  `${total} reads per host, ${conc} at a time; MiB: rss = anonymous + file-backed (binary, libraries, mapped store); store: its pages resident, its size`,
);
console.log(
  `${'reads'.padEnd(9)} ${subjects.map((s) => `| ${s.label.slice(0, 20).padEnd(20)}  rss  anon  file  peak  store  size  reads/s  cpu ms`).join(' ')}`,
);
const step = Math.max(1, Math.floor(total / 20));
const warmAt = Math.max(1, Math.floor(total / 50));
const t0 = Date.now();
for (let done = 0; done < total;) {
  const chunk = Math.min(step, total - done);
  // Warm-up first: its end is the in-run baseline.
  if (done === 0) {
    for (const s of subjects) {
      await load(s, warmAt);
      s.warm = sample(s);
    }
  }
  const cells: string[] = [];
  for (const s of subjects) {
    const began = Date.now();
    const cpu0 = cpuMs(s.pid);
    const n = done === 0 ? chunk - warmAt : chunk;
    await load(s, n);
    const rate = (n * 1000) / (Date.now() - began);
    const cpu = (cpuMs(s.pid) - cpu0) / n;
    const p = sample(s);
    s.samples.push(p);
    const size = pg === null ? mib(statSync(storeFile(s)).size) : '-';
    cells.push(
      `| ${''.padEnd(20)} ${mib(p.rss).padStart(4)} ${mib(p.anon).padStart(5)} ${mib(p.file).padStart(5)} ${mib(p.hwm).padStart(5)} ${mib(p.store).padStart(6)} ${size.padStart(5)} ${rate.toFixed(0).padStart(8)} ${cpu.toFixed(2).padStart(7)}`,
    );
  }
  done += chunk;
  console.log(`${String(done).padEnd(9)} ${cells.join(' ')}`);
}
const secs = (Date.now() - t0) / 1000;
console.log(
  pg === null
    ? `stated bound (docs/benchmarks.md): anonymous <= ${HOST_BOUND.anonMiB} MiB, store pages resident <= ${HOST_BOUND.storeMiB} MiB`
    : `stated bound (docs/benchmarks.md): anonymous <= ${HOST_BOUND.anonMiB} MiB (the audit records are not held)`,
);
for (const s of subjects) {
  const w = s.warm as Sample;
  const end = s.samples.at(-1) as Sample;
  const peak = (k: 'anon' | 'file' | 'store') => Math.max(...s.samples.map((p) => p[k]));
  const half = s.samples[Math.floor(s.samples.length / 2) - 1] ?? w;
  // Levelled off: growth over the second half, per 100,000 reads.
  const slope = (k: 'anon' | 'file') =>
    ((end[k] - half[k]) / MiB / Math.max(1, end.reads - half.reads)) * 100_000;
  const under =
    peak('anon') <= HOST_BOUND.anonMiB * MiB && peak('store') <= HOST_BOUND.storeMiB * MiB;
  console.log(
    `${s.label}: ${s.reads} reads (${s.refused} refused) in ${secs.toFixed(0)} s (${(s.reads / secs).toFixed(0)}/s, all hosts); ` +
      `anonymous ${mib(w.anon)} MiB warm -> ${mib(half.anon)} at half -> peak ${mib(peak('anon'))} -> ${mib(end.anon)} at the end; ` +
      `file-backed ${mib(w.file)} -> ${mib(half.file)} -> peak ${mib(peak('file'))} -> ${mib(end.file)}, store pages in it peak ${mib(peak('store'))}; ` +
      `second half: anonymous ${slope('anon').toFixed(1)} MiB, file-backed ${slope('file').toFixed(1)} MiB per 100,000 reads` +
      `; ${under ? 'under' : 'OVER'} the bound`,
  );
  s.channel.close();
  await s.rig.dispose();
}
await pg?.stop();
