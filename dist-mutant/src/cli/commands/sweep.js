/**
 * `vault-cli sweep`: looks through the coding agents' transcripts and the
 * shells' histories for the values the vault released (or, with --stored,
 * any stored value) and reports where, by entry and field: never the value.
 * Each field found is marked exposed until it is set anew; with --redact each
 * file is rewritten with the reference in place of the value. The sweep itself
 * is src/sweep/sweeper.ts; this file is its edge: flags, the owner's proof,
 * signals and the summary. The values live only in this process, for as long
 * as the sweep runs (the owner's own, with the owner's passphrase or session):
 * nothing here writes one anywhere.
 */
import { VaultError } from '../../core/errors.js';
import { parseSince } from '../../core/audit.js';
import { MIN_SWEEP_BYTES } from '../../sweep/leak-forms.js';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { transcriptStores } from '../paths.js';
import { flag, flagCount, flagList, flagString, } from '../context.js';
import { OwnerProof, ownerPassphrase } from '../owner.js';
import { walk } from '../../sweep/files.js';
import { Sweeper, patternsOf, shown } from '../../sweep/sweeper.js';
/** Files larger than this are skipped unless --max-file-size says otherwise (MiB). */
const DEFAULT_MAX_FILE_MIB = 1024;
/** Bytes still to sweep below which no mark goes out before the last (a few tens of ms of scanning). */
const MARK_UNLESS_LEFT = 32 * 1024 * 1024;
/** The sweep's port on this process: its streams, and the owner's requests through `proof`. */
function portOf(ctx, proof) {
    return {
        out: (line) => ctx.stdout.write(line + '\n'),
        say: (line) => ctx.stderr.write(`vault-cli: ${line}\n`),
        json: flag(ctx, 'json'),
        mark: async (found) => (await proof.call('sweep.mark', { found: [...found] })).marked,
        followAudit: async (since, onRecord, signal) => {
            const { follow } = await import('../../client/follow.js');
            await follow(ctx.client, 'audit.follow', { ...proof.current, since }, (line) => onRecord(JSON.parse(line)), signal);
        },
    };
}
/** Resolves at the first SIGINT or SIGTERM. */
function signalled() {
    return new Promise((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
    });
}
export const run = async (ctx) => {
    // Before the passphrase or any value is in memory: no same-user process
    // may ptrace the sweep or read its memory (src/kernel/dumpable.ts).
    (await import('../../kernel/dumpable.js')).markNotDumpable();
    const sealed = flagString(ctx, 'open-backup');
    if (sealed !== undefined)
        return openBackupFile(ctx, sealed);
    const plan = planOf(ctx);
    const proof = new OwnerProof(ctx, await ownerPassphrase(ctx));
    const fetchedAt = Date.now();
    const fetchValues = () => proof.call('sweep.values', {
        ...(plan.since === undefined ? {} : { since: plan.since }),
        stored: plan.stored,
    });
    const { values, backupKey } = await fetchValues();
    const known = new Set();
    const { patterns, tooShort } = patternsOf(values, known);
    const say = (line) => ctx.stderr.write(`vault-cli: ${line}\n`);
    for (const t of tooShort)
        say(`not swept: ${t} is shorter than ${MIN_SWEEP_BYTES} bytes`);
    if (patterns === null && !plan.watching) {
        say(`no values to sweep for (${values.length === 0 ? 'none released' : 'all too short'})`);
        return 0;
    }
    const backup = await backupOf(plan.backupDir, backupKey);
    const { redact, maxFileBytes } = plan;
    const sweep = new Sweeper(portOf(ctx, proof), patterns, { redact, maxFileBytes, backup });
    // Ctrl-C or SIGTERM mid-sweep ends it after the file being read, once what
    // was found is marked exposed: a leak found is never left unmarked (up to
    // 200 ms of findings, or the last 32 MiB's, wait to be sent). A second
    // signal ends it at once.
    const signals = catchSignals();
    try {
        const walked = walk(plan.roots, maxFileBytes);
        for (const s of walked.skipped)
            say(`skipped ${shown(s.path)}: ${s.reason}`);
        const read = await sweepFiles(sweep, walked.files, () => signals.caught() !== null);
        await sweep.settle();
        signals.release();
        const interrupted = signals.caught();
        if (interrupted !== null) {
            say(`interrupted after ${read} of ${walked.files.length} files: ${sweep.findings.length} findings, ` +
                `${sweep.marked} fields marked exposed (rotate them: vault-cli entry exposed)`);
            // Ended by the signal, as it would have been without this handler.
            sweep.wipe();
            process.kill(process.pid, interrupted);
            return 130;
        }
        say(summary(sweep, walked.files.length, values.length - tooShort.length, redact));
        if (plan.watching) {
            // Values released from now on are fetched as the audit shows their release.
            const refetch = async () => {
                const { values: now } = await fetchValues();
                return {
                    fresh: patternsOf(now, known).patterns,
                    all: patternsOf(now, new Set()).patterns,
                };
            };
            await sweep.watch(plan.roots.filter((r) => !walked.skipped.some((s) => s.path === r.path)), signalled, { from: fetchedAt, refetch });
            return 0;
        }
        return sweep.findings.some((f) => !f.redacted) ? 1 : 0;
    }
    finally {
        signals.release();
        sweep.wipe();
    }
};
/** @throws VaultError VLT-1001 (--backup without --redact, --paths-only without --path, a bad --since) */
function planOf(ctx) {
    const since = sinceOf(ctx);
    const maxMib = flagCount(ctx, 'max-file-size') ?? DEFAULT_MAX_FILE_MIB;
    const redact = flag(ctx, 'redact');
    const backupDir = flagString(ctx, 'backup');
    if (backupDir !== undefined && !redact) {
        throw new VaultError('VLT-1001', '--backup goes with --redact.');
    }
    const roots = [
        ...(flag(ctx, 'paths-only')
            ? []
            : transcriptStores(ctx.env, process.cwd()).map((s) => ({ ...s, explicit: false }))),
        ...flagList(ctx, 'path').map((p) => ({ path: p, agent: 'path', explicit: true })),
    ];
    if (roots.length === 0)
        throw new VaultError('VLT-1001', '--paths-only needs --path.');
    return {
        since,
        stored: flag(ctx, 'stored'),
        maxFileBytes: maxMib * 1024 * 1024,
        redact,
        backupDir,
        watching: flag(ctx, 'watch'),
        roots,
    };
}
/** Where --backup keeps the originals, under the key the host sent; null without --backup. */
async function backupOf(dir, key) {
    if (dir === undefined)
        return null;
    mkdirSync(resolve(dir), { recursive: true, mode: 0o700 });
    // Loaded only here: it brings sodium-native, 20-40 ms of every sweep's start.
    const { writeBackup } = await import('../../sweep/backup.js');
    return { dir: resolve(dir), key: Buffer.from(key, 'base64'), writeBackup };
}
/** SIGINT and SIGTERM, caught until `release`: `caught` says the first, once one came. */
function catchSignals() {
    let caught = null;
    const interrupt = (signal) => (caught = signal);
    process.once('SIGINT', interrupt);
    process.once('SIGTERM', interrupt);
    return {
        caught: () => caught,
        release: () => {
            process.removeListener('SIGINT', interrupt);
            process.removeListener('SIGTERM', interrupt);
        },
    };
}
/** Sweeps `files` in turn until `stop` says so; how many were read. */
async function sweepFiles(sweep, files, stop) {
    let unswept = files.reduce((n, f) => n + (f.size ?? 0), 0);
    let read = 0;
    for (const file of files) {
        if (stop())
            break;
        await sweep.file(file, 0);
        read++;
        unswept -= file.size ?? 0;
        // The host marks on its own core while this one sweeps on; near the end
        // the last mark waits instead (a mark still in flight when the scan
        // ends is one more round trip before the final one).
        if (unswept > MARK_UNLESS_LEFT)
            sweep.markSoon();
    }
    return read;
}
/** The line that ends a sweep: what was read, found, marked and redacted. */
function summary(sweep, files, values, redact) {
    const found = sweep.findings.length;
    const left = sweep.findings.filter((f) => !f.redacted).length;
    return (`swept ${files} file${files === 1 ? '' : 's'} ` +
        `(${sweep.bytes} bytes) for ${values} value${values === 1 ? '' : 's'}: ` +
        (found === 0
            ? 'nothing found'
            : `${found} finding${found === 1 ? '' : 's'}, ${sweep.marked} field${sweep.marked === 1 ? '' : 's'} marked exposed` +
                (redact ? `, ${found - left} redacted` : '') +
                ' (rotate them: vault-cli entry exposed)'));
}
/** `--open-backup <file>`: the original, to stdout, once the host opens its key (audited). */
async function openBackupFile(ctx, path) {
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
        }
        finally {
            k.fill(0);
        }
        ctx.stderr.write(`vault-cli: the original of ${shown(h.path)}\n`);
        return 0;
    }
    finally {
        closeSync(fd);
    }
}
function sinceOf(ctx) {
    const text = flagString(ctx, 'since');
    if (text === undefined)
        return undefined;
    const at = parseSince(text, Date.now());
    if (at === null) {
        throw new VaultError('VLT-1001', `--since takes a time (2026-11-22 14:00) or a span (2h, 7d).`);
    }
    return at;
}
