/**
 * `vault backup` and `vault restore`.
 *
 * A backup is LMDB's own consistent, compacted copy of the store (one read
 * snapshot, taken while the host serves), written to a private temp directory
 * beside the target, flushed, and renamed into place: a reader of the target
 * sees the old file or the whole new one. It is the store itself, so it is
 * exactly as encrypted as the store, audit log included.
 *
 * A restore copies the backup into a staging directory in the vault directory,
 * checks it whole (the passphrase must open it), shows what it would roll back
 * against the current vault, and only when confirmed swaps it in: the current
 * store is renamed aside, the staged one renamed into place and checked
 * again; if that fails, the current store is put back.
 */
import { closeSync, copyFileSync, fsyncSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, statSync, chmodSync, existsSync, } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { STORE_FILE } from '../../core/protocol.js';
import { wipe } from '../../crypto/aead.js';
import { Secret } from '../../crypto/secret.js';
import { appendAudit } from '../audit/log.js';
import { diskFault, openStoreFile, scanStoreFile } from '../../store/open.js';
import { checkStore } from './check.js';
import { HostContext } from '../context.js';
import { openName } from '../keys/grants.js';
import { ownerEvent, unlockOwner } from '../owner/keys.js';
import { endOrphanedSessions } from '../agent/sessions.js';
import { sealRestored } from '../keys/state.js';
/** Flushes a file or directory to disk. */
function fsyncPath(path) {
    const fd = openSync(path, 'r');
    try {
        fsyncSync(fd);
    }
    finally {
        closeSync(fd);
    }
}
/** What a store holds, for the summary a backup prints. */
function summarize(tx, path, bytes) {
    const head = tx.auditHead();
    return {
        path,
        bytes,
        entries: tx.entries().length,
        agents: tx.agents().filter((a) => a.revoked === null).length,
        // From the chain's ends, not by decoding every record: a backup every few
        // seconds of a store with 100,000 records churned the host's heap by the
        // size of its audit log each time (bench/soak.ts mixed).
        auditRecords: head === null ? 0 : head.seq - (tx.auditBase()?.seq ?? 0),
        head: head === null ? null : { seq: head.seq, hash: head.hash.toString('hex') },
    };
}
/** Reads a store file that no host serves, and removes the lock file opening it leaves. */
async function withStoreFile(path, fn) {
    const store = openStoreFile(path);
    try {
        return await fn(store);
    }
    finally {
        await store.close();
        rmSync(`${path}-lock`, { force: true });
    }
}
function absolute(path) {
    if (!isAbsolute(path))
        throw new VaultError('VLT-1002', 'The backup path must be absolute.');
    return path;
}
/** What the owner is told of a file-system error when writing `path`. */
const OUTPUT_ERRORS = {
    EISDIR: 'it is a directory; name a file in it',
    ENOENT: 'its directory does not exist',
    ENOTDIR: 'a part of it is not a directory',
    EACCES: 'its directory may not be written',
    EPERM: 'its directory may not be written',
    EROFS: 'its file system is read-only',
    ENOSPC: 'its file system is full',
    EDQUOT: 'the disk quota is used up',
    EXDEV: 'it crosses file systems',
    EIO: 'its disk reported an I/O error',
};
/**
 * Checks that a backup or archive can be written at `path` (an absolute file
 * path in an existing directory; nothing is created on the way), and names
 * the path and the reason when not.
 * @throws VaultError VLT-1002 naming the path and why.
 */
export function checkOutputPath(path, what) {
    let target;
    try {
        target = statSync(path);
    }
    catch {
        target = null;
    }
    const dir = dirname(path);
    let parent;
    try {
        parent = statSync(dir);
    }
    catch {
        parent = null;
    }
    const refuse = (why) => {
        throw new VaultError('VLT-1002', `Cannot write the ${what} to ${path}: ${why}.`);
    };
    if (target?.isDirectory() === true)
        refuse(OUTPUT_ERRORS.EISDIR);
    if (parent === null)
        refuse(`its directory ${dir} does not exist`);
    if (parent?.isDirectory() !== true)
        refuse(`${dir} is not a directory`);
}
/**
 * A file-system error met writing `path`, as the refusal that names the path
 * and why; anything else as it is.
 */
export function outputFailure(err, path, what) {
    const errno = err?.code;
    // lmdb-js's copy reports the errno as a number (and its text): named as Node names it.
    const code = typeof errno === 'string' ? errno : diskFault(err);
    if (err instanceof VaultError || typeof code !== 'string')
        return err;
    const why = OUTPUT_ERRORS[code];
    if (why === undefined)
        return err;
    return new VaultError('VLT-1002', `Cannot write the ${what} to ${path}: ${why} (${code}).`, {
        cause: err,
    });
}
/**
 * Writes a consistent backup of the vault to `target`, atomically, and says
 * what it holds. The owner's session has been checked by the caller.
 */
export async function backupVault(ctx, target, source) {
    absolute(target);
    checkOutputPath(target, 'backup');
    const dir = dirname(target);
    // A private directory: the copy is never readable by others, even for a moment.
    let staging;
    try {
        staging = mkdtempSync(join(dir, `.${basename(target)}.tmp-`));
    }
    catch (err) {
        throw outputFailure(err, target, 'backup');
    }
    const tmp = join(staging, STORE_FILE);
    try {
        try {
            await ctx.store().backup(tmp);
            chmodSync(tmp, 0o600);
            fsyncPath(tmp);
        }
        catch (err) {
            throw outputFailure(err, target, 'backup');
        }
        let summary;
        try {
            const damage = await scanStoreFile(tmp);
            if (damage !== null)
                throw new VaultError('VLT-3034', `The copy cannot be read whole: ${damage}.`);
            const bytes = statSync(tmp).size;
            summary = await withStoreFile(tmp, (s) => s.read((tx) => summarize(tx, target, bytes)));
        }
        catch (err) {
            // The disk failed to read the copy back (EIO): no backup, and not the vault's fault.
            if (!(err instanceof VaultError && err.code === 'VLT-3004'))
                throw err;
            const fault = /\((E[A-Z]+)\)/.exec(err.message)?.[1] ?? 'EIO';
            throw new VaultError('VLT-1002', `Cannot write the backup to ${target}: the copy did not read back, ${OUTPUT_ERRORS[fault] ?? 'its disk failed'} (${fault}).`, { cause: err });
        }
        try {
            renameSync(tmp, target);
            fsyncPath(dir);
        }
        catch (err) {
            throw outputFailure(err, target, 'backup');
        }
        ctx.commit((tx) => appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'vault_backup', source, {
            subject: `${summary.auditRecords} records to seq ${summary.head?.seq ?? 0}`,
        })));
        return summary;
    }
    finally {
        rmSync(staging, { recursive: true, force: true });
    }
}
/** The entry name the owner's session opens, or its id. */
function entryLabel(s, tx, id) {
    if (s === null)
        return id;
    const e = tx.entry(id);
    if (e === null)
        return id;
    try {
        const dk = s.dataKey(tx.header() ?? s.header, e);
        try {
            return openName(tx.header() ?? s.header, dk, e) ?? id;
        }
        finally {
            wipe(dk);
        }
    }
    catch {
        return id;
    }
}
/** What replacing `current` by `backup` would roll back. */
function compare(current, currentSession, backup, summary) {
    const b = backup.read((tx) => ({
        agents: new Map(tx.agents().map((a) => [a.id, a])),
        entries: new Map(tx.entries().map((e) => [e.id, e])),
        audit: new Map(tx.audit().map((r) => [r.seq, r.hash.toString('hex')])),
    }));
    const revivedAgents = [];
    const liftedLocks = [];
    const undoneRotations = [];
    const lostEntries = [];
    let lostAuditRecords = 0;
    let currentAuditRecords = 0;
    let currentReadable = current !== null;
    if (current !== null) {
        try {
            current.read((tx) => {
                const now = new Map(tx.agents().map((a) => [a.id, a]));
                for (const [id, a] of b.agents) {
                    const c = now.get(id);
                    if (a.revoked === null && (c === undefined || c.revoked !== null)) {
                        revivedAgents.push(a.name);
                    }
                    if (c !== undefined &&
                        c.revoked === null &&
                        c.rate.lock !== null &&
                        a.rate.lock === null) {
                        liftedLocks.push(a.name);
                    }
                }
                for (const e of tx.entries()) {
                    const old = b.entries.get(e.id);
                    if (old === undefined)
                        lostEntries.push(entryLabel(currentSession, tx, e.id));
                    else if (old.gen < e.gen)
                        undoneRotations.push(entryLabel(currentSession, tx, e.id));
                }
                // A record is lost unless the backup holds the same record (same seq, same hash).
                let diverged = false;
                for (const r of tx.audit()) {
                    currentAuditRecords++;
                    if (diverged || b.audit.get(r.seq) !== r.hash.toString('hex')) {
                        diverged = true;
                        lostAuditRecords++;
                    }
                }
            });
        }
        catch {
            // A current vault too damaged to read: nothing of it can be compared.
            currentReadable = false;
        }
    }
    return {
        backup: summary,
        revivedAgents,
        liftedLocks,
        undoneRotations,
        lostEntries,
        lostAuditRecords,
        currentAuditRecords,
        currentReadable,
    };
}
function problemsText(report) {
    return report.problems
        .slice(0, 5)
        .map((p) => `${p.code} ${p.where}`)
        .join('; ');
}
/** Opens the owner's keys of `ctx` with `passphrase` (a copy: the caller wipes its own). */
function ownerUnlocker(ctx, passphrase, source) {
    return () => unlockOwner(ctx, new Secret(Buffer.from(passphrase.expose())), source);
}
/**
 * The current vault's owner session, when it opens: the passphrase must be the
 * owner's. Null when there is no vault or it does not open (a vault too damaged
 * to open can be restored with the backup's passphrase).
 * @throws VaultError VLT-3002 when the passphrase is not the current vault's.
 */
async function currentOwner(ctx, passphrase, source) {
    if (!ctx.storeExists())
        return null;
    try {
        return await ownerUnlocker(ctx, passphrase, source)();
    }
    catch (err) {
        if (err instanceof VaultError && err.code === 'VLT-3002')
            throw err;
        return null;
    }
}
/**
 * Copies the backup at `from` to `staged` (a store file of `stagedCtx`) and
 * checks it whole: readable in a child, opened by the passphrase, no problem.
 * @throws VaultError VLT-3037 unreadable or not verified, VLT-3002 the
 *   passphrase does not open it.
 */
async function stageBackup(stagedCtx, from, staged, passphrase, source) {
    copyFileSync(from, staged);
    chmodSync(staged, 0o600);
    // Read it whole in a child first: a file that is not a store, or a damaged
    // one, can crash the process that opens it, and that must not be the host.
    const unreadable = await scanStoreFile(staged);
    if (unreadable !== null) {
        throw new VaultError('VLT-3037', `The file is not a readable vault store: ${unreadable}.`);
    }
    let report;
    try {
        const unlock = ownerUnlocker(stagedCtx, passphrase, source);
        report = await checkStore(staged, () => stagedCtx.store(), unlock, stagedCtx.now());
    }
    catch (err) {
        if (err instanceof VaultError && err.code === 'VLT-3002') {
            throw new VaultError('VLT-3002', 'The passphrase does not open the backup.');
        }
        throw new VaultError('VLT-3037', undefined, { cause: err });
    }
    if (report.problems.length > 0) {
        throw new VaultError('VLT-3037', `The backup does not verify: ${problemsText(report)}.`);
    }
}
/**
 * Checks the vault `ctx` serves after the restore put the backup in place
 * (`path` its store file, null for PostgreSQL). Returns why it failed, or
 * null when it holds.
 */
async function restoredFailure(ctx, path, passphrase, source) {
    try {
        const unlock = ownerUnlocker(ctx, passphrase, source);
        const again = await checkStore(path, () => ctx.store(), unlock, ctx.now());
        return again.problems.length > 0 ? new VaultError('VLT-3038') : null;
    }
    catch (err) {
        return err;
    }
}
/** @throws VaultError VLT-3038, the restore undone, with `failure` as its cause. */
function restoreFailed(failure) {
    if (failure instanceof VaultError && failure.code === 'VLT-3038')
        throw failure;
    throw new VaultError('VLT-3038', undefined, { cause: failure });
}
/**
 * Previews, and when `confirm` restores, the backup at `path`. The passphrase
 * must open the backup; it must also open the current vault when that one
 * still opens (a vault too damaged to open can be restored with the backup's).
 */
export async function restoreVault(ctx, req, source) {
    const from = absolute(req.path);
    if (!existsSync(from) || !statSync(from).isFile()) {
        throw new VaultError('VLT-3037', 'No backup file at that path.');
    }
    const current = await currentOwner(ctx, req.passphrase, source);
    mkdirSync(ctx.dir, { recursive: true, mode: 0o700 });
    const staging = mkdtempSync(join(ctx.dir, 'restore-'));
    const staged = join(staging, STORE_FILE);
    const stagedCtx = new HostContext(staging, ctx.now);
    try {
        await stageBackup(stagedCtx, from, staged, req.passphrase, source);
        const backupStore = stagedCtx.store();
        const bytes = statSync(staged).size;
        const summary = backupStore.read((tx) => summarize(tx, from, bytes));
        // The backup's names need no key of its own: what it rolls back is named
        // from the current vault (stageBackup already proved the passphrase
        // opens the backup).
        const currentStore = ctx.storeExists() ? safeStore(ctx) : null;
        const preview = compare(currentStore, current, backupStore, summary);
        if (!req.confirm)
            return { preview, restored: false, keptAside: null };
        let keptAside = null;
        if (ctx.pgUrl() !== null) {
            const records = backupStore.read((tx) => tx.allRecords());
            await stagedCtx.close();
            await restoreRecords(ctx, records, req.passphrase, source);
        }
        else {
            // The swap: no request reaches the store meanwhile.
            await stagedCtx.close();
            keptAside = await swapStoreFile(ctx, staged, req.passphrase, source);
        }
        await sealRestored(ctx, req.passphrase, source);
        const subject = `from seq ${summary.head?.seq ?? 0}; ${preview.lostAuditRecords} records rolled back`;
        ctx.commit((tx) => appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'vault_restore', source, { subject })));
        endOrphanedSessions(ctx);
        return { preview, restored: true, keptAside };
    }
    finally {
        current?.wipe();
        await stagedCtx.close();
        rmSync(staging, { recursive: true, force: true });
    }
}
/**
 * Swaps the verified `staged` store file in for the live one, which is kept
 * aside, and checks it again where it now serves; on any problem the vault is
 * put back as it was.
 * @returns where the old store was kept aside, or null when there was none.
 * @throws VaultError VLT-3038
 */
async function swapStoreFile(ctx, staged, passphrase, source) {
    const live = join(ctx.dir, STORE_FILE);
    const aside = join(ctx.dir, `${STORE_FILE}.before-restore-${new Date(ctx.now()).toISOString().replace(/[:.]/g, '-')}`);
    const had = existsSync(live);
    await ctx.swapStore(() => {
        if (had)
            renameSync(live, aside);
        rmSync(`${live}-lock`, { force: true });
        renameSync(staged, live);
        fsyncPath(ctx.dir);
        // Read whole in a child already (staged): a damage found at start is gone with the old file.
        ctx.damaged = null;
    });
    const failure = await restoredFailure(ctx, live, passphrase, source);
    if (failure !== null) {
        // Put the vault back as it was.
        await ctx.swapStore(() => {
            rmSync(live, { force: true });
            rmSync(`${live}-lock`, { force: true });
            if (had)
                renameSync(aside, live);
            fsyncPath(ctx.dir);
        });
        restoreFailed(failure);
    }
    return existsSync(aside) ? aside : null;
}
/**
 * A team vault's restore: the backup's records replace the database's in one
 * transaction (every host sees them at its next request), checked as a
 * restored file is; on any problem the records as they were are put back.
 * @throws VaultError VLT-3038
 */
async function restoreRecords(ctx, records, passphrase, source) {
    const before = ctx.commit((tx) => {
        const was = tx.allRecords();
        tx.replaceAll(records);
        return was;
    });
    const failure = await restoredFailure(ctx, null, passphrase, source);
    if (failure === null)
        return;
    ctx.commit((tx) => tx.replaceAll(before));
    restoreFailed(failure);
}
/** The current store, or null when it does not open. */
function safeStore(ctx) {
    try {
        return ctx.store();
    }
    catch {
        return null;
    }
}
