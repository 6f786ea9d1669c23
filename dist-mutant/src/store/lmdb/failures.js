/**
 * How a failed LMDB commit is told to the caller: the file system's error it
 * met, as the refusal that names it (VLT-3004), and lmdb-js's second report
 * of the same failure, which must not end the host.
 */
import { VaultError } from '../../core/errors.js';
/**
 * Whether `err` is lmdb-js's second report of a failed batched commit (the
 * error carrying `commitError`), thrown or rejected where nobody can catch
 * it. The transaction that failed has already been refused to its caller
 * (writeDurable), so the process that meets this may go on.
 */
export function isFailedCommitEcho(err) {
    return (err instanceof Error &&
        err.message.startsWith('Commit failed') &&
        err.commitError instanceof Promise);
}
/** The file-system errors a commit can meet, and what the refusal says of each. */
const WRITE_FAILURES = [
    [/EROFS|read-only file system/i, 'the vault’s file system is read-only (EROFS)'],
    [/ENOSPC|no space left|MDB_MAP_FULL/i, 'the vault’s file system is full (ENOSPC)'],
    [/EIO\b|input\/output error/i, 'the vault’s disk reported an I/O error (EIO)'],
    [/EACCES|EPERM|permission denied/i, 'the store file may not be written (EACCES)'],
];
/**
 * A failed commit as the refusal that names its cause (VLT-3004: every write
 * carries an audit record, so nothing is released), or null when the error is
 * not a file-system failure (damage, a handler's own error).
 */
export function commitFailure(err, cause = err) {
    if (err instanceof VaultError)
        return null;
    const text = [cause, err]
        .map((e) => e instanceof Error ? `${String(e.code)} ${e.message}` : '')
        .join(' ');
    const found = WRITE_FAILURES.find(([pattern]) => pattern.test(text));
    if (found === undefined && !/Commit failed/.test(text))
        return null;
    const why = found?.[1] ?? 'the store could not commit';
    return new VaultError('VLT-3004', `Audit record could not be written: ${why}; access refused until it can be.`, { cause: err });
}
/**
 * lmdb-js rejects a failed batched commit twice: the transaction's promise
 * with "Commit failed", and later `commitError`, a second promise carrying the
 * file system's error, that nobody awaits: left alone, its rejection is
 * unhandled and ends the host. It is awaited here (briefly: it settles in the
 * same write-thread callback) for the cause it names.
 */
export async function commitCause(err) {
    const second = err?.commitError;
    if (!(second instanceof Promise))
        return err;
    const settled = second.then(() => err, (cause) => cause);
    let timer;
    const late = new Promise((r) => (timer = setTimeout(() => r(err), 2000)));
    try {
        return await Promise.race([settled, late]);
    }
    finally {
        clearTimeout(timer);
    }
}
/** A failing disk's errors, by name: Node's `code`, and lmdb-js's (the errno number, its strerror text). */
const DISK_FAULTS = [
    ['EIO', 5, /input\/output error/i],
    ['ENOSPC', 28, /no space left on device/i],
    ['EROFS', 30, /read-only file system/i],
    ['EDQUOT', 122, /disk quota exceeded/i],
];
/**
 * The name of the disk fault `err` is (EIO, ENOSPC, EROFS, EDQUOT), from
 * Node's file calls or lmdb-js's (which carries the errno as a number, or,
 * from its copy, only strerror's text), or null when it is not one (LMDB's
 * own MDB_ codes: damage, a full map).
 */
export function diskFault(err) {
    if (!(err instanceof Error))
        return null;
    const code = err.code;
    const found = DISK_FAULTS.find(([name, errno, text]) => code === name || ((code === errno || code === undefined) && text.test(err.message)));
    return found?.[0] ?? null;
}
/**
 * A store file the disk failed to read (`fault`: EIO, as diskFault names it):
 * VLT-3004, as every refusal for a disk that fails (nothing can be released
 * without its audit record), naming the cause; not damage (VLT-3034), which
 * the file may well not have once the disk reads again.
 */
export function readFailure(fault) {
    const why = WRITE_FAILURES.find(([pattern]) => pattern.test(fault))?.[1] ??
        `the vault’s disk failed (${fault})`;
    return new VaultError('VLT-3004', `The store file could not be read: ${why}; access refused until it can be.`);
}
