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
import { MIN_SWEEP_BYTES, leakForms, type LeakForm } from '../../core/leak-forms.js';
import { MultiMatcher } from '../../core/multi-match.js';
import { MAX_SWEEP_MARKS } from '../../core/requests.js';
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
import { ownerPassphrase } from '../owner.js';
import {
  disjoint,
  lineNumbers,
  openRegular,
  rewrite,
  scanFd,
  walk,
  type FileTarget,
  type Hit,
  type Root,
} from '../sweep-files.js';
import { backupHeader, openBackup, writeBackup } from '../sweep-backup.js';

/** Files larger than this are skipped unless --max-file-size says otherwise (MiB). */
const DEFAULT_MAX_FILE_MIB = 1024;
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

  const passphrase = await ownerPassphrase(ctx);
  const { values, backupKey } = await ctx.call('sweep.values', {
    passphrase,
    ...(since === undefined ? {} : { since }),
    stored: flag(ctx, 'stored'),
  });
  const sources: Source[] = [];
  const patterns: Buffer[] = [];
  const tooShort: string[] = [];
  for (const v of values) {
    const bytes = Buffer.from(v.value, 'base64');
    if (bytes.length < MIN_SWEEP_BYTES) tooShort.push(`${quote(v.entry)}/${v.field}`);
    else {
      for (const f of leakForms(bytes)) {
        patterns.push(f.bytes);
        sources.push({ entry: v.entry, field: v.field, form: f.form });
      }
    }
    bytes.fill(0);
  }
  const say = (line: string) => ctx.stderr.write(`vault-cli: ${line}\n`);
  for (const t of tooShort) say(`not swept: ${t} is shorter than ${MIN_SWEEP_BYTES} bytes`);
  if (patterns.length === 0) {
    say(`no values to sweep for (${values.length === 0 ? 'none released' : 'all too short'})`);
    return 0;
  }
  const matcher = new MultiMatcher(patterns);
  // The matcher keeps its own copy; JavaScript may keep others (the reply's strings): best effort.
  for (const p of patterns) p.fill(0);

  let backup: { dir: string; key: Buffer } | null = null;
  if (backupDir !== undefined) {
    mkdirSync(resolve(backupDir), { recursive: true, mode: 0o700 });
    backup = { dir: resolve(backupDir), key: Buffer.from(backupKey, 'base64') };
  }
  const sweep = new Sweeper(ctx, matcher, sources, { redact, maxFileBytes, backup });
  try {
    const walked = walk(roots, maxFileBytes);
    for (const s of walked.skipped) say(`skipped ${shown(s.path)}: ${s.reason}`);
    for (const file of walked.files) {
      sweep.file(file, 0);
      sweep.markSoon(passphrase);
      // A turn of the event loop: the mark request in flight goes out, and the
      // host marks on its own core while this one sweeps on.
      await new Promise((r) => setImmediate(r));
    }
    await sweep.settle(passphrase);
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
    if (flag(ctx, 'watch')) {
      await sweep.watch(
        roots.filter((r) => !walked.skipped.some((s) => s.path === r.path)),
        passphrase,
      );
      return 0;
    }
    return left > 0 ? 1 : 0;
  } finally {
    matcher.wipe();
  }
};

/** `--open-backup <file>`: the original, to stdout, once the host opens its key (audited). */
async function openBackupFile(ctx: CliContext, path: string): Promise<number> {
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
function shown(path: string): string {
  return oneLine(path).replace(
    /[\u0080-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
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

  constructor(
    private readonly ctx: CliContext,
    private readonly matcher: MultiMatcher,
    private readonly sources: readonly Source[],
    private readonly opts: {
      redact: boolean;
      maxFileBytes: number;
      backup: { dir: string; key: Buffer } | null;
    },
  ) {}

  /**
   * Sweeps one file from `from` (0: the whole file; in watch mode, where the
   * last read ended), reports what it finds, and rewrites it with --redact.
   */
  file(target: FileTarget, from: number, tries = REWRITE_TRIES): void {
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
      const overlap = Math.max(0, start - (this.matcher.maxLength - 1));
      const scanned = scanFd(fd, this.matcher, overlap, st.size - overlap);
      this.bytes += scanned.bytes - (start - overlap);
      const hits = scanned.hits.filter((h) => h.end > start);
      this.seen.set(target.path, { ino: st.ino, end: scanned.end });
      if (hits.length === 0) return;
      const lines = lineNumbers(
        fd,
        hits.map((h) => h.start),
      );
      const fresh = disjoint(hits);
      const found = fresh.map((h) => this.finding(target, h, lines.get(h.start) ?? 0));
      if (this.opts.redact) {
        const spans = fresh.map((h) => ({
          start: h.start,
          end: h.end,
          text: replacement(this.sources[h.pattern] as Source, target.path),
        }));
        const kept = this.opts.backup;
        const saved =
          kept === null ? null : writeBackup(kept.dir, target.path, fd, st.size, kept.key);
        if (rewrite(target.path, fd, st, spans)) {
          if (saved !== null) this.ctx.stderr.write(`vault-cli: sealed backup ${shown(saved)}\n`);
          for (const f of found) f.redacted = true;
          const after = openRegular(target.path, Infinity);
          if ('fd' in after) {
            this.seen.set(target.path, { ino: after.st.ino, end: after.st.size });
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
      this.seen.delete(target.path);
      this.file(target, 0, tries - 1);
    }
  }

  private finding(target: FileTarget, h: Hit, line: number): Finding {
    const s = this.sources[h.pattern] as Source;
    return {
      file: target.path,
      line,
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
      ? JSON.stringify(f)
      : `${shown(f.file)}:${f.line}: ${formatReference(f.entry, f.field)} (${f.form})${f.redacted ? ' redacted' : ''}`;
    this.ctx.stdout.write(out + '\n');
  }

  private inFlight: Promise<void> | null = null;
  private failed: unknown = null;

  /**
   * Sends what was found so far to be marked, unless a request is already in
   * flight: one at a time, since each unlocks (with a passphrase, a KDF run).
   */
  markSoon(passphrase: string | undefined): void {
    if (this.inFlight !== null || this.unmarked.size === 0) return;
    this.inFlight = this.mark(passphrase)
      .catch((err: unknown) => {
        this.failed ??= err;
      })
      .finally(() => {
        this.inFlight = null;
      });
  }

  /** Waits for the request in flight, then marks the rest; throws what a mark failed with. */
  async settle(passphrase: string | undefined): Promise<void> {
    while (this.inFlight !== null) await this.inFlight;
    if (this.failed !== null) throw this.failed;
    await this.mark(passphrase);
  }

  /** Sends the fields found since the last call to be marked exposed. */
  async mark(passphrase: string | undefined): Promise<void> {
    const all = [...this.unmarked.values()];
    this.unmarked = new Map();
    for (let i = 0; i < all.length; i += MAX_SWEEP_MARKS) {
      const res = await this.ctx.call('sweep.mark', {
        passphrase,
        found: all.slice(i, i + MAX_SWEEP_MARKS),
      });
      this.marked += res.marked;
    }
  }

  /**
   * Watch mode: sweeps what is appended to (or added in) the stores as it is
   * written, until interrupted. chokidar is loaded only here.
   */
  async watch(roots: readonly Root[], passphrase: string | undefined): Promise<void> {
    const { watch } = await import('chokidar');
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
    const changed = (path: string) => {
      queue = queue
        .then(async () => {
          const before = this.findings.length;
          this.file({ path, agent: agentOf(path) }, this.seen.get(path)?.end ?? 0);
          if (this.findings.length > before) await this.mark(passphrase);
        })
        .catch((err: unknown) => {
          const message = err instanceof VaultError ? `${err.code}: ${err.message}` : 'failed';
          this.ctx.stderr.write(`vault-cli: sweep of ${shown(path)}: ${message}\n`);
        });
    };
    watcher.on('add', changed);
    watcher.on('change', changed);
    await new Promise<void>((resolve) => watcher.on('ready', () => resolve()));
    this.ctx.stderr.write(`vault-cli: watching ${paths.length} places; ^C to stop\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await watcher.close();
    await queue;
  }
}
