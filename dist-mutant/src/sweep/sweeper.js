/**
 * One sweep of transcripts and histories for released values, in each form a
 * transcript keeps them (leak-forms.ts): the files read, each finding reported
 * by entry and field (never the value), the fields found marked exposed in
 * batches, and with --redact each file rewritten with the reference in place of
 * the value (backups sealed first). What it needs of the vault and of the
 * terminal comes in through a SweepPort: `vault-cli sweep`
 * (src/cli/commands/sweep.ts) gives it the owner's connection and its streams.
 */
import { createHash } from 'node:crypto';
import { closeSync } from 'node:fs';
import { VaultError, oneLine, quote } from '../core/errors.js';
import { showableJson } from '../core/names.js';
import { formatReference } from '../core/reference.js';
import { MAX_SWEEP_MARKS } from '../core/requests.js';
import { ChunkBuffers, disjoint, openRegular, rewrite, scanFd, } from './files.js';
import { MIN_SWEEP_BYTES, leakForms } from './leak-forms.js';
import { MultiMatcher } from './multi-match.js';
/**
 * Watch mode, on a release: what was written since the previous fetch is swept
 * for the new values, from this many bytes before where it began (a rewrite
 * may have moved it a little).
 */
const RESCAN_SLACK = 64 * 1024;
/** The least time between two requests that mark findings exposed while the sweep goes on. */
const MARK_EVERY_MS = 200;
/** A rewrite refused because an agent was still writing is tried this many times. */
const REWRITE_TRIES = 3;
/**
 * The patterns of the values not in `known` (digests of values already
 * swept for, kept in this process only), which it then holds too; null when
 * none is new and long enough. The decoded values are wiped.
 */
export function patternsOf(values, known) {
    const sources = [];
    const bytes = [];
    const tooShort = [];
    for (const v of values) {
        const value = Buffer.from(v.value, 'base64');
        const digest = createHash('sha256').update(value).digest('base64');
        if (value.length < MIN_SWEEP_BYTES)
            tooShort.push(`${quote(v.entry)}/${v.field}`);
        else if (!known.has(digest)) {
            known.add(digest);
            for (const f of leakForms(value)) {
                bytes.push(f.bytes);
                sources.push({ entry: v.entry, field: v.field, form: f.form });
            }
        }
        value.fill(0);
    }
    if (bytes.length === 0)
        return { patterns: null, tooShort };
    const matcher = new MultiMatcher(bytes);
    // The matcher keeps its own copy; JavaScript may keep others (the reply's strings): best effort.
    for (const b of bytes)
        b.fill(0);
    return { patterns: { matcher, sources }, tooShort };
}
/**
 * A path as printed: file names in an agent's store are the agent's choice, so
 * control characters (C0 and C1: escape sequences for the owner's terminal)
 * are shown escaped. `--json` escapes them as JSON does.
 */
/** A transcript's path (the agent named its files) with every control and invisible character escaped. */
export function shown(path) {
    return oneLine(path);
}
/** The reference that takes a value's place, written as the form it replaces was. */
function replacement(s, file) {
    const ref = formatReference(s.entry, s.field);
    const json = JSON.stringify(ref).slice(1, -1);
    if (s.form === 'json2')
        return Buffer.from(JSON.stringify(json).slice(1, -1));
    if (s.form === 'json' || /\.jsonl?$/i.test(file))
        return Buffer.from(json);
    return Buffer.from(ref);
}
/** One sweep's state: its findings, and in watch mode how far each file has been read. */
export class Sweeper {
    port;
    p;
    opts;
    findings = [];
    bytes = 0;
    marked = 0;
    /** Fields found but not yet sent to the host to be marked. */
    unmarked = new Map();
    /** Per file: its inode and the offset read up to. */
    seen = new Map();
    buffers = new ChunkBuffers();
    constructor(port, 
    /** What is swept for (null: nothing yet; watch mode waits for a release). */
    p, opts) {
        this.port = port;
        this.p = p;
        this.opts = opts;
    }
    /**
     * Sweeps one file from `from` (0: the whole file; in watch mode, where the
     * last read ended), reports what it finds, and rewrites it with --redact.
     */
    async file(target, from, tries = REWRITE_TRIES, only) {
        const p = only?.p ?? this.p;
        if (p === null)
            return;
        const opened = openRegular(target.path, this.opts.maxFileBytes);
        if ('skipped' in opened) {
            this.port.say(`skipped ${shown(target.path)}: ${opened.skipped}`);
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
            if (only === undefined)
                this.seen.set(target.path, { ino: st.ino, end: scanned.end });
            const readTo = this.seen.get(target.path)?.end ?? scanned.end;
            if (hits.length === 0)
                return;
            const fresh = disjoint(hits);
            const found = fresh.map((h) => this.finding(p, target, h));
            if (this.opts.redact) {
                const spans = fresh.map((h) => ({
                    start: h.start,
                    end: h.end,
                    text: replacement(p.sources[h.pattern], target.path),
                }));
                const kept = this.opts.backup;
                const saved = kept === null ? null : kept.writeBackup(kept.dir, target.path, fd, st.size, kept.key);
                if (rewrite(target.path, fd, st, spans)) {
                    if (saved !== null)
                        this.port.say(`sealed backup ${shown(saved)}`);
                    for (const f of found)
                        f.redacted = true;
                    const after = openRegular(target.path, Infinity);
                    if ('fd' in after) {
                        // The bytes after where the sweep had read to moved with the replacements before them.
                        const end = readTo + after.st.size - st.size;
                        this.seen.set(target.path, { ino: after.st.ino, end });
                        closeSync(after.fd);
                    }
                }
                else if (tries > 1) {
                    // Written to while we read it: sweep it again, whole.
                    retry = true;
                }
            }
            if (!retry)
                for (const f of found)
                    this.report(f);
        }
        finally {
            closeSync(fd);
        }
        if (retry) {
            if (only === undefined)
                this.seen.delete(target.path);
            await this.file(target, only === undefined ? 0 : from, tries - 1, only);
        }
    }
    finding(p, target, h) {
        const s = p.sources[h.pattern];
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
    report(f) {
        this.findings.push(f);
        this.unmarked.set(JSON.stringify([f.entry, f.field]), { entry: f.entry, field: f.field });
        const out = this.port.json
            ? showableJson(JSON.stringify(f))
            : `${shown(f.file)}:${f.line}: ${formatReference(f.entry, f.field)} (${f.form})${f.redacted ? ' redacted' : ''}`;
        this.port.out(out);
    }
    inFlight = null;
    failed = null;
    lastMark = 0;
    /**
     * Sends what was found so far to be marked, unless a request is already in
     * flight or one went out less than MARK_EVERY_MS ago: each is an owner
     * request, so it costs a check of the host's process here (and, with a
     * passphrase the host does not hold, a KDF run there), which sent per file
     * was a third of the sweep.
     */
    markSoon() {
        if (this.inFlight !== null || this.unmarked.size === 0)
            return;
        if (Date.now() - this.lastMark < MARK_EVERY_MS)
            return;
        this.lastMark = Date.now();
        this.inFlight = this.mark()
            .catch((err) => {
            this.failed ??= err;
        })
            .finally(() => {
            this.inFlight = null;
        });
    }
    /** Waits for the request in flight, then marks the rest; throws what a mark failed with. */
    async settle() {
        while (this.inFlight !== null)
            await this.inFlight;
        if (this.failed !== null)
            throw this.failed;
        await this.mark();
    }
    /** Sends the fields found since the last call to be marked exposed. */
    async mark() {
        const all = [...this.unmarked.values()];
        this.unmarked = new Map();
        for (let i = 0; i < all.length; i += MAX_SWEEP_MARKS) {
            this.marked += await this.port.mark(all.slice(i, i + MAX_SWEEP_MARKS));
        }
    }
    /**
     * Watch mode: sweeps what is appended to (or added in) the stores as it is
     * written, until what `stopped()` returns resolves (it is called once the
     * watch is ready). chokidar is loaded only here.
     */
    async watch(roots, stopped, release) {
        const { watch } = await import('chokidar');
        const paths = roots.map((r) => r.path);
        const target = (path) => ({ path, agent: agentOf(roots, path) });
        const watcher = watch(paths, {
            ignoreInitial: true,
            followSymlinks: false,
            depth: 12,
            // Atomic writers (write, rename) and appenders alike: a change is a change.
            atomic: false,
        });
        const queue = new JobQueue((line) => this.port.say(line));
        const changed = (path) => queue.add(`sweep of ${shown(path)}`, () => this.sweepAppended(target(path)));
        const released = this.onRelease(queue, release.refetch, target);
        const abort = new AbortController();
        const following = this.port
            .followAudit(release.from, (r) => {
            if (r.outcome === 'ok' && ['read', 'ai_read', 'fill'].includes(r.action))
                released();
        }, abort.signal)
            .catch((err) => this.port.say(`following the audit for new releases: ${failure(err)}`));
        watcher.on('add', changed);
        watcher.on('change', changed);
        await new Promise((resolve) => watcher.on('ready', () => resolve()));
        this.port.say(`watching ${paths.length} places; ^C to stop`);
        await stopped();
        abort.abort();
        await following;
        await watcher.close();
        await queue.drained();
    }
    /** Watch mode: sweeps what was appended to `target` since it was last read. */
    async sweepAppended(target) {
        const before = this.findings.length;
        await this.file(target, this.seen.get(target.path)?.end ?? 0);
        if (this.findings.length > before)
            await this.mark();
    }
    /**
     * Watch mode: what a release seen in the audit does. Once per burst of
     * releases (one fetch queued at a time), the values are fetched anew and
     * what was written since the last fetch is swept for the fresh ones.
     */
    onRelease(queue, refetch, target) {
        // Where each file had been read to when the values were last fetched.
        let fetchedAt = this.readTo();
        let refreshing = false;
        return () => {
            if (refreshing)
                return;
            refreshing = true;
            queue.add('fetching newly released values', async () => {
                refreshing = false;
                const { fresh, all } = await refetch();
                if (fresh !== null)
                    await this.sweepForFresh(fresh, all, fetchedAt, target);
                else
                    all?.matcher.wipe();
                fetchedAt = this.readTo();
            });
        };
    }
    /**
     * Sweeps for `fresh` (values released since the last fetch) what each file
     * gained since `fetchedAt`, then sweeps on for `all`.
     */
    async sweepForFresh(fresh, all, fetchedAt, target) {
        // What was written since the last fetch may hold a value released meanwhile.
        const before = this.findings.length;
        for (const [path, f] of [...this.seen]) {
            const from = Math.max(0, (fetchedAt.get(path) ?? 0) - RESCAN_SLACK);
            if (f.end > from) {
                await this.file(target(path), from, REWRITE_TRIES, { p: fresh, until: f.end });
            }
        }
        fresh.matcher.wipe();
        this.p?.matcher.wipe();
        this.p = all;
        if (this.findings.length > before)
            await this.mark();
    }
    /** Where each file seen has been read to. */
    readTo() {
        return new Map([...this.seen].map(([path, f]) => [path, f.end]));
    }
    /** Overwrites the matcher's copy of the values (best effort). */
    wipe() {
        this.p?.matcher.wipe();
    }
}
/** The agent whose store holds `path` ('path' for one named by --path). */
function agentOf(roots, path) {
    return roots.find((r) => path === r.path || path.startsWith(r.path + '/'))?.agent ?? 'path';
}
/** What a watch-mode job's failure is said as: its code and message, or just that it failed. */
function failure(err) {
    return err instanceof VaultError ? `${err.code}: ${err.message}` : 'failed';
}
/** Watch mode's jobs, run one at a time in order; a job that fails is said, and the next runs. */
class JobQueue {
    say;
    tail = Promise.resolve();
    constructor(say) {
        this.say = say;
    }
    add(what, job) {
        this.tail = this.tail.then(job).catch((err) => this.say(`${what}: ${failure(err)}`));
    }
    /** Resolves once every job added so far has run. */
    drained() {
        return this.tail;
    }
}
