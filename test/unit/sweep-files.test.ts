// The sweep's one-pass file scan against the obvious search over a real file:
// every occurrence with the line it starts on, where the occurrences straddle
// chunk boundaries, lie in the first chunk or only in later ones, nest (a
// short value inside a long one, reported after it across a boundary), and
// when the scan starts part-way through the file (watch mode).
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MultiMatcher } from '../../src/sweep/multi-match.js';
import { CHUNK_BYTES, ChunkBuffers, scanFd, type Hit } from '../../src/sweep/files.js';

const dir = mkdtempSync(join(tmpdir(), 'vault-sweep-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every occurrence of each pattern, with its 1-based line, by indexOf and counting. */
function naive(patterns: readonly Buffer[], text: Buffer, from = 0): Hit[] {
  const out: Hit[] = [];
  patterns.forEach((p, pattern) => {
    for (let at = text.indexOf(p, from); at !== -1; at = text.indexOf(p, at + 1)) {
      let line = 1;
      for (let k = text.indexOf(10); k !== -1 && k < at; k = text.indexOf(10, k + 1)) line++;
      out.push({ pattern, start: at, end: at + p.length, line });
    }
  });
  return sorted(out);
}

const sorted = (hits: readonly Hit[]): Hit[] =>
  [...hits].sort((a, b) => a.start - b.start || a.pattern - b.pattern);

/** Lines of filler (short and long, so a boundary falls anywhere in a line), with patterns put in at `at`. */
function text(size: number, puts: readonly { at: number; bytes: Buffer }[]): Buffer {
  const b = Buffer.alloc(size);
  let seed = 7;
  for (let i = 0; i < size; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    b[i] = seed % 97 === 0 ? 10 : 97 + ((seed >>> 16) % 26);
  }
  for (const p of puts) p.bytes.copy(b, p.at);
  return b;
}

async function scanned(file: string, m: MultiMatcher, from = 0): Promise<Hit[]> {
  const fd = openSync(file, 'r');
  try {
    const r = await scanFd(fd, m, new ChunkBuffers(), from);
    return sorted(r.hits.filter((h) => h.end > from));
  } finally {
    closeSync(fd);
  }
}

const LONG = Buffer.from('sk_live_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ');
const SHORT = Buffer.from('56789ABCDEFGHIJKLMNO');
const OTHER = Buffer.from('ghp_ZYXWVUTSRQPONMLK98765');
const PEM = Buffer.from('-----BEGIN KEY-----\nMIIEvQIBADAN\nBgkqhkiG9w0B\n-----END KEY-----');

test('hits and their lines as the naive search, across chunk boundaries', async () => {
  const C = CHUNK_BYTES;
  const size = 4 * C + 12_345;
  const puts = [
    // The first hit ends in the second chunk: the lines before it are counted from the file's start.
    { at: C - 10, bytes: LONG },
    { at: C + 5000, bytes: Buffer.from('\n\n\n') },
    { at: 2 * C - 3, bytes: OTHER },
    // The long value ends in the next chunk; the short one inside it ends in this one.
    { at: 3 * C - 25, bytes: LONG },
    { at: 3 * C + 77, bytes: SHORT },
    // A value with newlines (a PEM key) across a boundary: its lines are counted back.
    { at: 4 * C - 30, bytes: PEM },
    { at: size - OTHER.length, bytes: OTHER },
  ];
  const body = text(size, puts);
  const file = join(dir, 'boundaries.jsonl');
  writeFileSync(file, body);
  const patterns = [LONG, SHORT, OTHER, PEM];
  const want = naive(patterns, body);
  assert.ok(want.length >= 8, `planted hits found by the naive search (${want.length})`);
  assert.deepEqual(await scanned(file, new MultiMatcher(patterns)), want);
});

test('a scan that starts part-way through numbers lines from the start of the file', async () => {
  const C = CHUNK_BYTES;
  const size = 2 * C + 999;
  const body = text(size, [
    { at: 50, bytes: OTHER },
    { at: C + 17, bytes: OTHER },
    { at: 2 * C + 300, bytes: LONG },
  ]);
  const file = join(dir, 'from.log');
  writeFileSync(file, body);
  const from = C;
  const patterns = [LONG, OTHER];
  assert.deepEqual(
    await scanned(file, new MultiMatcher(patterns), from),
    naive(patterns, body, from),
  );
});

test('a file with no hit, and an empty one, give none', async () => {
  const file = join(dir, 'none.txt');
  writeFileSync(file, text(CHUNK_BYTES + 10, []));
  assert.deepEqual(await scanned(file, new MultiMatcher([LONG])), []);
  writeFileSync(file, '');
  assert.deepEqual(await scanned(file, new MultiMatcher([LONG])), []);
});
