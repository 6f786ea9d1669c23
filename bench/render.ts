/**
 * `vault-cli render` beside `envsubst` on equivalent files (`${VAR}` where the
 * template has a reference), 1 MB and 100 MB, 1,000 and 100,000 references,
 * in one run. Prints MB/s and the child's peak RSS (`/usr/bin/time -f %M`);
 * asserts nothing. Target: at least half of envsubst's throughput, under
 * 100 MB RSS for the 100 MB file.
 *
 * Each `${VAR}` is padded to the length of its reference, so both tools read
 * files of the same size and layout, and MB/s is of each tool's own input.
 * 100,000 references do not fit in 1 MB (a reference line is ~37 bytes): that
 * file is as large as its references make it, and the size column says so.
 * The CLI is the build the tests use (VAULT_TEST_DIST, else dist/).
 *
 *   npm run bench            (or: node --import tsx bench/render.ts)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, Rig } from '../test/support/rig.js';

const ENTRIES = ['Bench A', 'Bench B', 'Bench C', 'Bench D'];

/** A file of `mb` MB with `refs` placeholders spread evenly; `ref(i)` writes the i-th one. */
function makeFile(path: string, mb: number, refs: number, ref: (i: number) => string): void {
  const total = mb * 1024 * 1024;
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n';
  const fd = openSync(path, 'w');
  let written = 0;
  let block: string[] = [];
  let blockBytes = 0;
  const gap = Math.floor(total / refs);
  for (let i = 0; i < refs; i++) {
    const r = `key_${i % 100} = ${ref(i)}\n`;
    let filler = gap - Buffer.byteLength(r);
    block.push(r);
    blockBytes += Buffer.byteLength(r);
    while (filler > 0) {
      const piece = filler >= line.length ? line : line.slice(0, filler - 1) + '\n';
      block.push(piece);
      blockBytes += piece.length;
      filler -= piece.length;
    }
    if (blockBytes > 1 << 20) {
      written += writeSync(fd, block.join(''));
      block = [];
      blockBytes = 0;
    }
  }
  written += writeSync(fd, block.join(''));
  if (written < total)
    writeSync(
      fd,
      line.repeat(Math.ceil((total - written) / line.length)).slice(0, total - written),
    );
  closeSync(fd);
}

interface Run {
  seconds: number;
  rssKb: number;
  outBytes: number;
}

function measure(cmd: string, args: string[], input: string, env: NodeJS.ProcessEnv): Run {
  const rssFile = join(rig.root, 'rss');
  const t0 = process.hrtime.bigint();
  // The tool's output goes through a pipe (as render's would) into wc.
  const r = spawnSync(
    '/bin/sh',
    [
      '-c',
      'in=$1 rss=$2; shift 2; /usr/bin/time -f %M -o "$rss" "$@" < "$in" | wc -c',
      'sh',
      input,
      rssFile,
      cmd,
      ...args,
    ],
    { env, encoding: 'utf8' },
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const outBytes = Number(r.stdout.trim());
  if (r.status !== 0 || outBytes === 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const rssKb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
  return { seconds, rssKb, outBytes };
}

const best = (runs: Run[]) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));

const rig = new Rig();
try {
  await rig.create();
  for (const e of ENTRIES) await rig.set(e, `value-of-${e.replace(' ', '-')}`);
  const token = await rig.addAgent('bench', ENTRIES, [
    '--per-minute',
    '1000',
    '--per-hour',
    '1000',
  ]);
  await rig.liftValuesLimit('bench');
  const env: NodeJS.ProcessEnv = { ...rig.env, VAULT_TOKEN: token };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.VAULT_PASSPHRASE_FILE;
  for (const [i, e] of ENTRIES.entries()) env[`BENCH_${i}`] = `value-of-${e.replace(' ', '-')}`;
  const cli = CLI;
  const vaultRef = (i: number) => `vault://${ENTRIES[i % ENTRIES.length]}/password`;

  console.log(`node ${process.version}; best of 3; MB/s of template input; peak RSS of the child`);
  console.log(
    `${'file'.padEnd(8)}${'refs'.padStart(8)}  ${'tool'.padEnd(16)}${'in MB'.padStart(7)}${'MB/s'.padStart(8)}${'RSS MB'.padStart(9)}${'out MB'.padStart(9)}${'vs envsubst'.padStart(13)}`,
  );
  for (const mb of [1, 100]) {
    for (const refs of [1_000, 100_000]) {
      const tpl = join(rig.root, `t-${mb}-${refs}.txt`);
      const sub = join(rig.root, `e-${mb}-${refs}.txt`);
      makeFile(tpl, mb, refs, vaultRef);
      makeFile(sub, mb, refs, (i) => `\${BENCH_${i % ENTRIES.length}}`.padEnd(vaultRef(i).length));
      const inMb = (file: string) => statSync(file).size / (1024 * 1024);
      measure(process.execPath, [cli, 'render', '-'], tpl, env); // warm host and page cache
      const rows: [string, string, Run][] = [
        [
          'vault-cli render',
          tpl,
          best(
            [0, 1, 2].map(() => measure(process.execPath, [cli, 'render', tpl], '/dev/null', env)),
          ),
        ],
        [
          'render - (stdin)',
          tpl,
          best([0, 1, 2].map(() => measure(process.execPath, [cli, 'render', '-'], tpl, env))),
        ],
        ['envsubst', sub, best([0, 1, 2].map(() => measure('/usr/bin/envsubst', [], sub, env)))],
      ];
      const rate = ([, file, r]: [string, string, Run]) => inMb(file) / r.seconds;
      const baseline = rate(rows[2]!);
      for (const row of rows) {
        const [name, file, r] = row;
        const vs = name === 'envsubst' ? '' : `${(rate(row) / baseline).toFixed(2)}x`;
        console.log(
          `${`${mb} MB`.padEnd(8)}${String(refs).padStart(8)}  ${name.padEnd(16)}${inMb(file).toFixed(1).padStart(7)}${rate(row).toFixed(1).padStart(8)}${(r.rssKb / 1024).toFixed(1).padStart(9)}${(r.outBytes / (1024 * 1024)).toFixed(1).padStart(9)}${vs.padStart(13)}`,
        );
      }
    }
  }
} finally {
  await rig.dispose();
}
