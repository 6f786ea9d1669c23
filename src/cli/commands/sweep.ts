/**
 * `vault-cli sweep`: looks through the coding agents' transcripts and the
 * shells' histories for the values the vault released (or, with --stored,
 * any stored value), in each form a transcript keeps them (core/leak-forms),
 * and reports where, by entry and field: never the value. Each field found is
 * marked exposed until it is set anew; with --redact each file is rewritten
 * with the reference in place of the value. The values live only in this
 * process, for as long as the sweep runs (the owner's own, with the owner's
 * passphrase or session): nothing here writes one anywhere.
 */
import { formatReference } from '../../core/reference.js';
import { VaultError, oneLine, quote } from '../../core/errors.js';
import { parseSince } from '../../core/audit.js';
import { MIN_SWEEP_BYTES, leakForms, type LeakForm } from '../../sweep/leak-forms.js';
import { MultiMatcher } from '../../sweep/multi-match.js';
import { showableJson } from '../../core/names.js';
import { MAX_SWEEP_MARKS } from '../../core/requests.js';
import type { AuditView } from '../../core/audit.js';
import type { SweepValue } from '../../core/protocol.js';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { transcriptStores } from '../paths.js';
import {
  flag,
  flagCount,
  flagList,
  flagString,
  type CliContext,
  type Command,
} from '../context.js';
import { OwnerProof, ownerPassphrase } from '../owner.js';
import type { writeBackup as WriteBackup } from '../../sweep/backup.js';
import {
  ChunkBuffers,
  disjoint,
  openRegular,
  rewrite,
  scanFd,
  walk,
  type FileTarget,
  type Hit,
  type Root,
} from '../../sweep/files.js';

/** Files larger than this are skipped unless --max-file-size says otherwise (MiB). */
const DEFAULT_MAX_FILE_MIB = 1024;
/**
 * Watch mode, on a release: what was written since the previous fetch is swept
 * for the new values, from this many bytes before where it began (a rewrite
 * may have moved it a little).
 */
const RESCAN_SLACK = 64 * 1024;
/** The least time between two requests that mark findings exposed while the sweep goes on. */
const MARK_EVERY_MS = 200;
/** Bytes still to sweep below which no mark goes out before the last (a few tens of ms of scanning). */
const MARK_UNLESS_LEFT = 32 * 1024 * 1024;
/** A rewrite refused because an agent was still writing is tried this many times. */
const REWRITE_TRIES = 3;

/** What a pattern stands for: which value, in which form. */
interface Source {
  readonly entry: string;
  readonly field: string;
  readonly form: LeakForm;
}

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly entry: string;
  readonly field: string;
  readonly form: LeakForm;
  readonly agent: string;
  redacted: boolean;
}

export const run: Command = async (ctx) => {
  // Before the passphrase or any value is in memory: no same-user process
  // may ptrace the sweep or read its memory (src/kernel/dumpable.ts).
  (await import('../../kernel/dumpable.js')).markNotDumpable();
  const sealed = flagString(ctx, 'open-backup');
  if (sealed !== undefined) return openBackupFile(ctx, sealed);
  const since = sinceOf(ctx);
  const maxMib = flagCount(ctx, 'max-file-size') ?? DEFAULT_MAX_FILE_MIB;
  const maxFileBytes = maxMib * 1024 * 1024;
  const redact = flag(ctx, 'redact');
  const backupDir = flagString(ctx, 'backup');
  if (backupDir !== undefined && !redact) {
    throw new VaultError('VLT-1001', '--backup goes with --redact.');
  }
  const roots: Root[] = [
    ...(flag(ctx, 'paths-only')
      ? []
      : transcriptStores(ctx.env, process.cwd()).map((s) => ({ ...s, explicit: false }))),
    ...flagList(ctx, 'path').map((p) => ({ path: p, agent: 'path', explicit: true })),
  ];
  if (roots.length === 0) throw new VaultError('VLT-1001', '--paths-only needs --path.');

  const proof = new OwnerProof(ctx, await ownerPassphrase(ctx));
  const fetchedAt = Date.now();
  const { values, backupKey } = await proof.call('sweep.values', {
    ...(since === undefined ? {} : { since }),
    stored: flag(ctx, 'stored'),
  });
  const known = new Set<string>();
  const { patterns, tooShort } = patternsOf(values, known);
  const say = (line: string) => ctx.stderr.write(`vault-cli: ${line}\n`);
  for (const t of tooShort) say(`not swept: ${t} is shorter than ${MIN_SWEEP_BYTES} bytes`);
  const watching = flag(ctx, 'watch');
  if (patterns === null && !watching) {
    say(`no values to sweep for (${values.length === 0 ? 'none released' : 'all too short'})`);
    return 0;
  }

  let backup: Backup | null = null;
  if (backupDir !== undefined) {
    mkdirSync(resolve(backupDir), { recursive: true, mode: 0o700 });
    // Loaded only here: it brings sodium-native, 20-40 ms of every sweep's start.
    const { writeBackup } = await import('../../sweep/backup.js');
    backup = { dir: resolve(backupDir), key: Buffer.from(backupKey, 'base64'), writeBackup };
  }
  const sweep = new Sweeper(ctx, patterns, { redact, maxFileBytes, backup });
  // Ctrl-C or SIGTERM mid-sweep ends it after the file being read, once what
  // was found is marked exposed: a leak found is never left unmarked (up to
  // 200 ms of findings, or the last 32 MiB's, wait to be sent). A second
  // signal ends it at once.
  let interrupted: NodeJS.Signals | null = null;
  const interrupt = (signal: NodeJS.Signals) => (interrupted = signal);
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    const walked = walk(roots, maxFileBytes);
    for (const s of walked.skipped) say(`skipped ${shown(s.path)}: ${s.reason}`);
    let unswept = walked.files.reduce((n, f) => n + (f.size ?? 0), 0);
    let read = 0;
    for (const file of walked.files) {
      if (interrupted !== null) break;
      await sweep.file(file, 0);
      read++;
      unswept -= file.size ?? 0;
      // The host marks on its own core while this one sweeps on; near the end
      // the last mark waits instead (a mark still in flight when the scan
      // ends is one more round trip before the final one).
      if (unswept > MARK_UNLESS_LEFT) sweep.markSoon(proof);
    }
    await sweep.settle(proof);
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    if (interrupted !== null) {
      say(
        `interrupted after ${read} of ${walked.files.length} files: ${sweep.findings.length} findings, ` +
          `${sweep.marked} fields marked exposed (rotate them: vault-cli entry exposed)`,
      );
      // Ended by the signal, as it would have been without this handler.
      sweep.wipe();
      process.kill(process.pid, interrupted);
      return 130;
    }
    const found = sweep.findings.length;
    const left = sweep.findings.filter((f) => !f.redacted).length;
    say(
      `swept ${walked.files.length} file${walked.files.length === 1 ? '' : 's'} ` +
        `(${sweep.bytes} bytes) for ${values.length - tooShort.length} value${values.length - tooShort.length === 1 ? '' : 's'}: ` +
        (found === 0
          ? 'nothing found'
          : `${found} finding${found === 1 ? '' : 's'}, ${sweep.marked} field${sweep.marked === 1 ? '' : 's'} marked exposed` +
            (redact ? `, ${found - left} redacted` : '') +
            ' (rotate them: vault-cli entry exposed)'),
    );
    if (watching) {
      // Values released from now on are fetched as the audit shows their release.
      const refetch = async () => {
        const { values: now } = await proof.call('sweep.values', {
          ...(since === undefined ? {} : { since }),
          stored: flag(ctx, 'stored'),
        });
        return {
          fresh: patternsOf(now, known).patterns,
          all: patternsOf(now, new Set()).patterns,
        };
      };
      await sweep.watch(
        roots.filter((r) => !walked.skipped.some((s) => s.path === r.path)),
        proof,
        { from: fetchedAt, refetch },
      );
      return 0;
    }
    return left > 0 ? 1 : 0;
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
    sweep.wipe();
  }
};

/** Where --backup keeps the originals, under which key, and the writer (loaded on demand). */
interface Backup {
  readonly dir: string;
  readonly key: Buffer;
  readonly writeBackup: typeof WriteBackup;
}

/** A matcher over every form of some values, and what each of its patterns stands for. */
interface Patterns {
  readonly matcher: MultiMatcher;
  readonly sources: readonly Source[];
}

/**
 * The patterns of the values not in `known` (digests of values already
 * swept for, kept in this process only), which it then holds too; null when
 * none is new and long enough. The decoded values are wiped.
 */
function patternsOf(
  values: readonly SweepValue[],
  known: Set<string>,
): { patterns: Patterns | null; tooShort: string[] } {
  const sources: Source[] = [];
  const bytes: Buffer[] = [];
  const tooShort: string[] = [];
  for (const v of values) {
    const value = Buffer.from(v.value, 'base64');
    const digest = createHash('sha256').update(value).digest('base64');
    if (value.length < MIN_SWEEP_BYTES) tooShort.push(`${quote(v.entry)}/${v.field}`);
    else if (!known.has(digest)) {
      known.add(digest);
      for (const f of leakForms(value)) {
        bytes.push(f.bytes);
        sources.push({ entry: v.entry, field: v.field, form: f.form });
      }
    }
    value.fill(0);
  }
  if (bytes.length === 0) return { patterns: null, tooShort };
  const matcher = new MultiMatcher(bytes);
  // The matcher keeps its own copy; JavaScript may keep others (the reply's strings): best effort.
  for (const b of bytes) b.fill(0);
  return { patterns: { matcher, sources }, tooShort };
}

/** `--open-backup <file>`: the original, to stdout, once the host opens its key (audited). */
async function openBackupFile(ctx: CliContext, path: string): Promise<number> {
  const { backupHeader, openBackup } = await import('../../sweep/backup.js');
  const fd = openSync(path, 'r');
  try {
    const h = backupHeader(fd);
    const { key } = await ctx.call('sweep.unseal', {
      passphrase: await ownerPassphrase(ctx),
      sealedKey: h.sealedKey,
    });
    const k = Buffer.from(key, 'base64');
    try {
      await openBackup(fd, h.line, k, ctx.stdout);
    } finally {
      k.fill(0);
    }
    ctx.stderr.write(`vault-cli: the original of ${shown(h.path)}\n`);
    return 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * A path as printed: file names in an agent's store are the agent's choice, so
 * control characters (C0 and C1: escape sequences for the owner's terminal)
 * are shown escaped. `--json` escapes them as JSON does.
 */
/** A transcript's path (the agent named its files) with every control and invisible character escaped. */
function shown(path: string): string {
  return oneLine(path);
}

function sinceOf(ctx: CliContext): number | undefined {
  const text = flagString(ctx, 'since');
  if (text === undefined) return undefined;
  const at = parseSince(text, Date.now());
  if (at === null) {
    throw new VaultError('VLT-1001', `--since takes a time (2026-11-22 14:00) or a span (2h, 7d).`);
  }
  return at;
}

/** The reference that takes a value's place, written as the form it replaces was. */
function replacement(s: Source, file: string): Buffer {
  const ref = formatReference(s.entry, s.field);
  const json = JSON.stringify(ref).slice(1, -1);
  if (s.form === 'json2') return Buffer.from(JSON.stringify(json).slice(1, -1));
  if (s.form === 'json' || /\.jsonl?$/i.test(file)) return Buffer.from(json);
  return Buffer.from(ref);
}

/** One sweep's state: its findings, and in watch mode how far each file has been read. */
class Sweeper {
  readonly findings: Finding[] = [];
  bytes = 0;
  marked = 0;
  /** Fields found but not yet sent to the host to be marked. */
  private unmarked = new Map<string, { entry: string; field: string }>();
  /** Per file: its inode and the offset read up to. */
  private readonly seen = new Map<string, { ino: number; end: number }>();
  private readonly buffers = new ChunkBuffers();

  constructor(
    private readonly ctx: CliContext,
    /** What is swept for (null: nothing yet; watch mode waits for a release). */
    private p: Patterns | null,
    private readonly opts: {
      redact: boolean;
      maxFileBytes: number;
      backup: Backup | null;
    },
  ) {}

  /**
   * Sweeps one file from `from` (0: the whole file; in watch mode, where the
   * last read ended), reports what it finds, and rewrites it with --redact.
   */
  async file(
    target: FileTarget,
    from: number,
    tries = REWRITE_TRIES,
    only?: { readonly p: Patterns; readonly until: number },
  ): Promise<void> {
    const p = only?.p ?? this.p;
    if (p === null) return;
    const opened = openRegular(target.path, this.opts.maxFileBytes);
    if ('skipped' in opened) {
      this.ctx.stderr.write(`vault-cli: skipped ${shown(target.path)}: ${opened.skipped}\n`);
      return;
    }
    const { fd, st } = opened;
    let retry = false;
    try {
      const prev = this.seen.get(target.path);
      // A file replaced or cut since (rotated, or our own rewrite) is read anew.
      const start = prev !== undefined && prev.ino === st.ino && st.size >= from ? from : 0;
      const overlap = Math.max(0, start - (p.matcher.maxLength - 1));
      const until = only === undefined ? st.size : Math.min(only.until, st.size);
      const scanned = await scanFd(fd, p.matcher, this.buffers, overlap, until - overlap);
      this.bytes += scanned.bytes - (start - overlap);
      const hits = scanned.hits.filter((h) => h.end > start);
      // A rescan for new values (`only`) leaves where the sweep proper has read to.
      if (only === undefined) this.seen.set(target.path, { ino: st.ino, end: scanned.end });
      const readTo = this.seen.get(target.path)?.end ?? scanned.end;
      if (hits.length === 0) return;
      const fresh = disjoint(hits);
      const found = fresh.map((h) => this.finding(p, target, h));
      if (this.opts.redact) {
        const spans = fresh.map((h) => ({
          start: h.start,
          end: h.end,
          text: replacement(p.sources[h.pattern] as Source, target.path),
        }));
        const kept = this.opts.backup;
        const saved =
          kept === null ? null : kept.writeBackup(kept.dir, target.path, fd, st.size, kept.key);
        if (rewrite(target.path, fd, st, spans)) {
          if (saved !== null) this.ctx.stderr.write(`vault-cli: sealed backup ${shown(saved)}\n`);
          for (const f of found) f.redacted = true;
          const after = openRegular(target.path, Infinity);
          if ('fd' in after) {
            // The bytes after where the sweep had read to moved with the replacements before them.
            const end = readTo + after.st.size - st.size;
            this.seen.set(target.path, { ino: after.st.ino, end });
            closeSync(after.fd);
          }
        } else if (tries > 1) {
          // Written to while we read it: sweep it again, whole.
          retry = true;
        }
      }
      if (!retry) for (const f of found) this.report(f);
    } finally {
      closeSync(fd);
    }
    if (retry) {
      if (only === undefined) this.seen.delete(target.path);
      await this.file(target, only === undefined ? 0 : from, tries - 1, only);
    }
  }

  private finding(p: Patterns, target: FileTarget, h: Hit): Finding {
    const s = p.sources[h.pattern] as Source;
    return {
      file: target.path,
      line: h.line,
      entry: s.entry,
      field: s.field,
      form: s.form,
      agent: target.agent,
      redacted: false,
    };
  }

  private report(f: Finding): void {
    this.findings.push(f);
    this.unmarked.set(JSON.stringify([f.entry, f.field]), { entry: f.entry, field: f.field });
    const out = flag(this.ctx, 'json')
      ? showableJson(JSON.stringify(f))
      : `${shown(f.file)}:${f.line}: ${formatReference(f.entry, f.field)} (${f.form})${f.redacted ? ' redacted' : ''}`;
    this.ctx.stdout.write(out + '\n');
  }

  private inFlight: Promise<void> | null = null;
  private failed: unknown = null;

  private lastMark = 0;

  /**
   * Sends what was found so far to be marked, unless a request is already in
   * flight or one went out less than MARK_EVERY_MS ago: each is an owner
   * request, so it costs a check of the host's process here (and, with a
   * passphrase the host does not hold, a KDF run there), which sent per file
   * was a third of the sweep.
   */
  markSoon(proof: OwnerProof): void {
    if (this.inFlight !== null || this.unmarked.size === 0) return;
    if (Date.now() - this.lastMark < MARK_EVERY_MS) return;
    this.lastMark = Date.now();
    this.inFlight = this.mark(proof)
      .catch((err: unknown) => {
        this.failed ??= err;
      })
      .finally(() => {
        this.inFlight = null;
      });
  }

  /** Waits for the request in flight, then marks the rest; throws what a mark failed with. */
  async settle(proof: OwnerProof): Promise<void> {
    while (this.inFlight !== null) await this.inFlight;
    if (this.failed !== null) throw this.failed;
    await this.mark(proof);
  }

  /** Sends the fields found since the last call to be marked exposed. */
  async mark(proof: OwnerProof): Promise<void> {
    const all = [...this.unmarked.values()];
    this.unmarked = new Map();
    for (let i = 0; i < all.length; i += MAX_SWEEP_MARKS) {
      const res = await proof.call('sweep.mark', {
        found: all.slice(i, i + MAX_SWEEP_MARKS),
      });
      this.marked += res.marked;
    }
  }

  /**
   * Watch mode: sweeps what is appended to (or added in) the stores as it is
   * written, until interrupted. chokidar is loaded only here.
   */
  async watch(
    roots: readonly Root[],
    proof: OwnerProof,
    release: {
      /** When the values swept for were fetched: releases from then on bring new ones. */
      readonly from: number;
      readonly refetch: () => Promise<{ fresh: Patterns | null; all: Patterns | null }>;
    },
  ): Promise<void> {
    const { watch } = await import('chokidar');
    const { follow } = await import('../../client/client.js');
    const paths = roots.map((r) => r.path);
    const agentOf = (p: string) =>
      roots.find((r) => p === r.path || p.startsWith(r.path + '/'))?.agent ?? 'path';
    const watcher = watch(paths, {
      ignoreInitial: true,
      followSymlinks: false,
      depth: 12,
      // Atomic writers (write, rename) and appenders alike: a change is a change.
      atomic: false,
    });
    let queue: Promise<void> = Promise.resolve();
    const enqueue = (what: string, job: () => Promise<void>) => {
      queue = queue.then(job).catch((err: unknown) => {
        const message = err instanceof VaultError ? `${err.code}: ${err.message}` : 'failed';
        this.ctx.stderr.write(`vault-cli: ${what}: ${message}\n`);
      });
    };
    const changed = (path: string) =>
      enqueue(`sweep of ${shown(path)}`, async () => {
        const before = this.findings.length;
        await this.file({ path, agent: agentOf(path) }, this.seen.get(path)?.end ?? 0);
        if (this.findings.length > before) await this.mark(proof);
      });
    // Where each file had been read to when the values were last fetched.
    let fetchedAt = new Map([...this.seen].map(([path, f]) => [path, f.end]));
    let refreshing = false;
    const released = () => {
      if (refreshing) return;
      refreshing = true;
      enqueue('fetching newly released values', async () => {
        refreshing = false;
        const { fresh, all } = await release.refetch();
        if (fresh !== null) {
          // What was written since the last fetch may hold a value released meanwhile.
          const before = this.findings.length;
          for (const [path, f] of [...this.seen]) {
            const from = Math.max(0, (fetchedAt.get(path) ?? 0) - RESCAN_SLACK);
            if (f.end > from) {
              await this.file({ path, agent: agentOf(path) }, from, REWRITE_TRIES, {
                p: fresh,
                until: f.end,
              });
            }
          }
          fresh.matcher.wipe();
          this.p?.matcher.wipe();
          this.p = all;
          if (this.findings.length > before) await this.mark(proof);
        } else all?.matcher.wipe();
        fetchedAt = new Map([...this.seen].map(([path, f]) => [path, f.end]));
      });
    };
    const abort = new AbortController();
    const following = follow(
      this.ctx.client,
      'audit.follow',
      { ...proof.current, since: release.from },
      (line) => {
        const r = JSON.parse(line) as AuditView;
        if (r.outcome === 'ok' && ['read', 'ai_read', 'fill'].includes(r.action)) released();
      },
      abort.signal,
    ).catch((err: unknown) => {
      const message = err instanceof VaultError ? `${err.code}: ${err.message}` : 'failed';
      this.ctx.stderr.write(`vault-cli: following the audit for new releases: ${message}\n`);
    });
    watcher.on('add', changed);
    watcher.on('change', changed);
    await new Promise<void>((resolve) => watcher.on('ready', () => resolve()));
    this.ctx.stderr.write(`vault-cli: watching ${paths.length} places; ^C to stop\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    abort.abort();
    await following;
    await watcher.close();
    await queue;
  }

  /** Overwrites the matcher's copy of the values (best effort). */
  wipe(): void {
    this.p?.matcher.wipe();
  }
}
