/**
 * `vault-cli render <file|->`: the template on stdout with every reference
 * replaced. All or nothing: pass 1 scans (malformed references are reported
 * without contacting the host), one `resolve` request releases every distinct
 * reference at once, every value is checked against the places it goes, and
 * only then does pass 2 stream the output. Output goes to stdout only, never
 * to a file, and stdout must be a pipe (src/cli/pipe-only.ts). A file is read
 * twice through one descriptor in 64 KiB chunks (constant memory). `-` on
 * stdin redirected from a regular file (`render - < big.yaml`) is read the
 * same way, twice through fd 0 from the offset stdin was at. A pipe, socket or terminal cannot be read twice, and
 * all or nothing forbids output before every reference resolves while a
 * temporary file is out of the question, so there `-` holds all of stdin in
 * memory.
 */
import { VaultError, quote } from '../../core/errors.js';
import { Collector, Renderer, check } from '../../render/render.js';
import { chooseFormat, type Format } from '../../render/format.js';
import { arg, flag, flagString, type CliContext, type Command } from '../context.js';
import { requirePipe } from '../pipe-only.js';
import { malformed, report, resolveAll } from '../references.js';
import { loadToken } from '../token.js';

// On render's path, as on get's: built-ins by getBuiltinModule, not import
// (docs/development.md, "Start-up"); io.ts only for a template on a pipe.
// A file is read by descriptor with node:fs's own calls: node:fs/promises
// cost every get and render about 2.7 ms of CPU to load (it is one bundle).
// A template of one chunk (most are a few lines) is opened and read
// synchronously: fs's callbacks start libuv's thread pool, 1-2 ms of CPU.
const { once } = process.getBuiltinModule('node:events');
const { closeSync, fstatSync, openSync, read, readSync } = process.getBuiltinModule('node:fs');

const CHUNK = 64 * 1024;

/** Feeds the template to `each`, chunk by chunk, from the start. */
type Source = (each: (chunk: Buffer) => Promise<void> | void) => Promise<void>;

/** Reads into `buf` at byte `at` of the file, or at its current offset when `at` is null. */
type ReadAt = (buf: Buffer, at: number | null) => Promise<number>;

/** Feeds `each` the bytes from `start` to the end of the file, in chunks. */
async function chunks(
  readAt: ReadAt,
  start: number | null,
  each: (chunk: Buffer) => Promise<void> | void,
): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let total = 0;
  for (;;) {
    const n = await readAt(buf, start === null ? null : start + total);
    if (n === 0) return total;
    total += n;
    await each(buf.subarray(0, n));
  }
}

/** Reads of descriptor `fd`: at a position, or on from its offset. */
function readerOf(fd: number): ReadAt {
  // Larger ones by callbacks, the event loop turning between chunks: read
  // synchronously, a 50 MB template's peak RSS passed 100 MB (render-stdin.test.ts).
  if (fstatSync(fd).size <= CHUNK) return async (buf, at) => readSync(fd, buf, 0, CHUNK, at);
  return (buf, at) =>
    new Promise((resolve, reject) =>
      read(fd, buf, 0, CHUNK, at, (err, n) => (err ? reject(err) : resolve(n))),
    );
}

function fromFile(fd: number): Source {
  // Positional reads: both passes read the same open file from byte 0.
  const readAt = readerOf(fd);
  return async (each) => {
    await chunks(readAt, 0, each);
  };
}

/** Whether fd 0 is a regular file (`render - < file`), which can be read twice. */
function stdinIsFile(): boolean {
  try {
    return fstatSync(0).isFile();
  } catch {
    return false; // closed or otherwise unusable: the stream path reports it
  }
}

/**
 * Stdin redirected from a regular file, read like a named file but from the
 * offset stdin was at (`{ head -c 10 >/dev/null; vault-cli render -; } < f`).
 * Node has no lseek, so the first pass reads on from the current offset and
 * the start is then the end of the file less the bytes read; later passes
 * read from there by position. fd 0 is left at the end, as any reader leaves it.
 */
function fromStdinFile(): Source {
  const readAt = readerOf(0);
  let start: number | null = null;
  return async (each) => {
    if (start !== null) {
      await chunks(readAt, start, each);
      return;
    }
    const n = await chunks(readAt, null, each);
    start = Math.max(0, fstatSync(0).size - n);
  };
}

/**
 * What `path` names when it is not a regular file (a FIFO, `<(cmd)`,
 * /dev/stdin on a pipe): read once, in order, and held, as a piped stdin is;
 * positional reads of a pipe fail (ESPIPE) and it cannot be read twice.
 */
function fromStream(fd: number): Source {
  const chunks: Buffer[] = [];
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK);
    const n = readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
  }
  const all = Buffer.concat(chunks);
  for (const c of chunks) c.fill(0);
  return fromMemory(all);
}

function fromMemory(all: Buffer): Source {
  return async (each) => {
    for (let at = 0; at < all.length; at += CHUNK) await each(all.subarray(at, at + CHUNK));
  };
}

/** One render's outcome: its exit status, and the entry names its template uses (null when it could not say). */
interface Rendered {
  readonly code: number;
  readonly entries: readonly string[] | null;
}

/** One whole render (bad references are reported, not thrown). */
async function renderOnce(ctx: CliContext, format: Format, source: Source): Promise<Rendered> {
  const collector = new Collector(format);
  await source((c) => collector.write(c));
  const collected = collector.end();
  if (collected.malformed.length > 0) {
    return { code: report(ctx, malformed(collected.malformed)), entries: null };
  }
  const entries = [...new Set([...collected.refs.values()].map((w) => w.entry))];
  const values = await resolveAll(ctx, collected.refs);
  if (Array.isArray(values)) return { code: report(ctx, values), entries };
  try {
    const unwritable = check(collected, values);
    if (unwritable.length > 0) {
      const code = report(
        ctx,
        unwritable.map((u) => ({ code: 'VLT-1002', written: u.written, reason: u.reason })),
      );
      return { code, entries };
    }
    const renderer = new Renderer(format, values);
    const put = async (out: Buffer) => {
      if (out.length > 0 && !ctx.stdout.write(out)) await once(ctx.stdout, 'drain');
    };
    await source((c) => put(renderer.write(c)));
    await put(renderer.end());
    return { code: 0, entries };
  } finally {
    // Best-effort: the escaped copies and the strings of the reply are out of reach.
    for (const v of values.values()) v.fill(0);
  }
}

export const run: Command = async (ctx) => {
  // Before the template is read: a terminal or a file never gets a byte.
  requirePipe('vault-cli render <file>');
  const path = arg(ctx, 'file');
  const watching = flag(ctx, 'watch');
  const format = chooseFormat(
    path === '-' ? '' : path,
    flagString(ctx, 'format'),
    flag(ctx, 'raw'),
  );
  if (path === '-') {
    if (watching) throw new VaultError('VLT-1001', '--watch needs a file, not stdin.');
    // A regular file streams; a pipe, socket or terminal is held in memory (see the top).
    if (stdinIsFile()) return (await renderOnce(ctx, format, fromStdinFile())).code;
    const { readAll } = await import('../io.js');
    return (await renderOnce(ctx, format, fromMemory(await readAll(ctx.stdin)))).code;
  }
  const render = (fd: number) =>
    renderOnce(ctx, format, fstatSync(fd).isFile() ? fromFile(fd) : fromStream(fd));
  const first = await withFile(path, render);
  if (!watching) return first.code;
  return watch(ctx, path, render, first);
};

async function withFile<T>(path: string, use: (fd: number) => Promise<T>): Promise<T> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'a directory' : e.code;
    throw new VaultError('VLT-1002', `Cannot read the template ${quote(path)} (${why}).`, {
      cause: err,
    });
  }
  try {
    return await use(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Changes to the values close together make one render: it starts once none
 * has come for SETTLE_MS, or SETTLE_MAX_MS after the first, so a burst of
 * rotations (a storm, even) renders a handful of times and ends on the last
 * value. Re-reading an entry already read in a window costs nothing of the
 * agent's limits (core/policy.ts decideRead), so a storm does not lock it.
 */
const SETTLE_MS = 100;
const SETTLE_MAX_MS = 1000;

/**
 * The host's word that a value the template uses changed (ops/watch.ts), on
 * a connection of its own; `follow(names)` moves it to another set of names.
 * It carries no value: each change only starts an ordinary, audited render.
 *
 * A feed that was in place and ends (the host restarted: an upgrade, a
 * `daemon stop` and the next client's start, a host that ended itself) is
 * followed again once: `changed()` renders anew, which starts a host if none
 * runs and shows a value changed meanwhile, and that render's `follow` opens
 * the renewal. Only when the renewal is refused (the token reads nothing
 * more: revoked, or its `run` session ended), ends before it reported any
 * change, or its render fails, does the watcher say it is no longer told. A
 * renewal that has reported a change has shown it works, and may be renewed
 * in turn; a host that ends every feed at once gets no loop of renewals.
 */
function valueFeed(ctx: CliContext, changed: () => void) {
  let feed: {
    readonly key: string;
    readonly stop: AbortController;
    renewal: boolean;
    inPlace: boolean;
  } | null = null;
  // Once stopped, for good: a render that settles after SIGTERM must not open
  // a new feed, whose connection would keep the process alive.
  let stopped = false;
  // A feed ended; the next follow() opens its one renewal.
  let lost = false;
  const noLonger = () =>
    ctx.stderr.write(
      'vault-cli: no longer told when a value changes (the vault host stopped, or the token reads nothing more); the next render asks again\n',
    );
  return {
    follow(entries: readonly string[]): void {
      if (stopped) return;
      const key = JSON.stringify([...entries].sort());
      if (feed !== null && feed.key === key) return;
      feed?.stop.abort();
      feed = null;
      const renewal = lost;
      lost = false;
      if (entries.length === 0) return;
      const mine = { key, stop: new AbortController(), renewal, inPlace: false };
      feed = mine;
      const lines = (line: string) => {
        let said: unknown;
        try {
          said = JSON.parse(line);
        } catch {
          return;
        }
        if ((said as { watching?: unknown } | null)?.watching === true) mine.inPlace = true;
        if ((said as { changed?: unknown } | null)?.changed === true) {
          mine.renewal = false;
          changed();
        }
      };
      void import('../../client/follow.js')
        .then(({ follow }) =>
          follow(
            ctx.client,
            'watch',
            { token: loadToken(ctx), entries: [...entries] },
            lines,
            mine.stop.signal,
          ),
        )
        .catch(() => undefined)
        .then(() => {
          if (feed !== mine || mine.stop.signal.aborted) return;
          feed = null;
          if (mine.inPlace && !mine.renewal) {
            lost = true;
            changed();
          } else noLonger();
        });
    },
    /** A render that was to renew a lost feed failed before it could follow: nothing renews it. */
    notFollowed(): void {
      if (!lost) return;
      lost = false;
      noLonger();
    },
    stop(): void {
      stopped = true;
      feed?.stop.abort();
      feed = null;
    },
  };
}

/**
 * `--watch`: renders again each time the file changes, and each time a value
 * it uses changes (an `entry set`, a rotation), until SIGINT or SIGTERM. A
 * render that fails says why on stderr and writes nothing; the next change
 * tries again. chokidar is loaded only here, so `get` never pays for it.
 */
async function watch(
  ctx: CliContext,
  path: string,
  render: (fd: number) => Promise<Rendered>,
  first: Rendered,
): Promise<number> {
  const { watch: chokidar } = await import('chokidar');
  const watcher = chokidar(path, {
    ignoreInitial: true,
    awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 10 },
  });
  let busy = false;
  let again = false;
  let stopped = false;
  const rerender = async (): Promise<void> => {
    if (stopped) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        try {
          const r = await withFile(path, render);
          if (r.entries !== null) feed.follow(r.entries);
          else feed.notFollowed();
        } catch (err) {
          const e =
            err instanceof VaultError ? err : new VaultError('VLT-3007', undefined, { cause: err });
          ctx.stderr.write(e.line() + '\n');
          feed.notFollowed();
        }
      } while (again && !stopped);
    } finally {
      busy = false;
    }
  };
  let settle: NodeJS.Timeout | undefined;
  let pendingSince: number | null = null;
  const valueChanged = () => {
    if (stopped) return;
    clearTimeout(settle);
    const now = Date.now();
    pendingSince ??= now;
    const fire = () => {
      pendingSince = null;
      void rerender();
    };
    if (now - pendingSince >= SETTLE_MAX_MS) fire();
    else settle = setTimeout(fire, SETTLE_MS);
  };
  const feed = valueFeed(ctx, valueChanged);
  watcher.on('add', () => void rerender());
  watcher.on('change', () => void rerender());
  if (first.entries !== null) feed.follow(first.entries);
  return new Promise((resolve) => {
    const stop = () => {
      stopped = true;
      clearTimeout(settle);
      feed.stop();
      void watcher.close().then(() => resolve(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
