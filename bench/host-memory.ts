/**
 * The LMDB host's memory under a sustained audit log (issue 42; not CI;
 * asserts nothing, prints figures). `reads` agent reads (each one audit
 * record), `conc` at a time, through the client library from this one
 * process, so the host is what is measured; every twentieth of the run a line
 * with the host's RSS, split into anonymous (heap, buffers: what the stated
 * bound is about) and file-backed (the store's mapped pages), its peak, and
 * the store's size. The baseline beside it, in the same run: the same host's
 * figures once warmed up (after the first 2% of the reads), and, with
 * `--baseline <dist>` (another build's dist/, e.g. a worktree of the commit
 * before), a host of that build on a vault of its own, loaded in the same
 * interleaved loop (a chunk each in turn) and sampled alike.
 *
 *   node --import tsx bench/host-memory.ts [reads=1000000] [--conc 16] [--baseline <dist>]
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { call } from '../src/client/client.js';
import type { ClientOptions } from '../src/client/options.js';
import { CLI, Rig } from '../test/support/rig.js';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const conc = Number(opt('--conc') ?? 16);
const baseline = opt('--baseline');
const total = Number(args[0] ?? 1_000_000);
const MiB = 1024 * 1024;
const mib = (n: number) => (n / MiB).toFixed(0);

interface Subject {
  readonly label: string;
  readonly rig: Rig;
  readonly client: ClientOptions;
  token: string;
  pid: number;
  reads: number;
  refused: number;
  warm: Sample | null;
  peakAnon: number;
}

interface Sample {
  rss: number;
  anon: number;
  file: number;
  hwm: number;
}

function sample(pid: number): Sample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) =>
    Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
}

async function subject(label: string, script: string): Promise<Subject> {
  const rig = new Rig();
  rig.cli = script;
  const client: ClientOptions = {
    vaultDir: rig.vaultDir,
    daemon: { node: process.execPath, script, env: rig.env },
  };
  await rig.create();
  await rig.set('E', 'memory-bench-value');
  const token = (
    await rig.owner([
      'agent',
      'add',
      'reader',
      '--scope',
      'E',
      '--per-minute',
      '100000000',
      '--per-hour',
      '100000000',
    ])
  ).stdout.trim();
  await rig.liftValuesLimit('reader');
  await call(client, 'read', { token, entry: 'E', field: 'password', mode: 'get' });
  const pid = (await call({ ...client, autoStart: false }, 'status', {})).pid;
  return { label, rig, client, token, pid, reads: 0, refused: 0, warm: null, peakAnon: 0 };
}

/** `n` reads of `s`'s host, `conc` at a time. */
async function load(s: Subject, n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (left > 0) {
        left--;
        try {
          await call(s.client, 'read', {
            token: s.token,
            entry: 'E',
            field: 'password',
            mode: 'get',
          });
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
for (const s of subjects) console.log(`${s.label}: host ${s.pid}`);
console.log(
  `${total} reads per host, ${conc} at a time; MiB: rss = anonymous + file-backed (the mapped store)`,
);
console.log(
  `${'reads'.padEnd(9)} ${subjects.map((s) => `| ${s.label.slice(0, 28).padEnd(28)} rss  anon  file  peak  store`).join(' ')}`,
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
      s.warm = sample(s.pid);
    }
  }
  for (const s of subjects) await load(s, done === 0 ? chunk - warmAt : chunk);
  done += chunk;
  const cells = subjects.map((s) => {
    const p = sample(s.pid);
    s.peakAnon = Math.max(s.peakAnon, p.anon);
    const store = statSync(join(s.rig.vaultDir, 'vault.mdb')).size;
    return `| ${''.padEnd(28)} ${mib(p.rss).padStart(4)} ${mib(p.anon).padStart(5)} ${mib(p.file).padStart(5)} ${mib(p.hwm).padStart(5)} ${mib(store).padStart(6)}`;
  });
  console.log(`${String(done).padEnd(9)} ${cells.join(' ')}`);
}
const secs = (Date.now() - t0) / 1000;
for (const s of subjects) {
  const w = s.warm as Sample;
  const end = sample(s.pid);
  console.log(
    `${s.label}: ${s.reads} reads (${s.refused} refused) in ${secs.toFixed(0)} s; anonymous ${mib(w.anon)} MiB warm -> peak ${mib(s.peakAnon)} -> ${mib(end.anon)} at the end; file-backed ${mib(w.file)} -> ${mib(end.file)}; store ${mib(statSync(join(s.rig.vaultDir, 'vault.mdb')).size)} MiB`,
  );
  await s.rig.dispose();
}
