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
export function isFailedCommitEcho(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.message.startsWith('Commit failed') &&
    (err as { commitError?: unknown }).commitError instanceof Promise
  );
}

/** The file-system errors a commit can meet, and what the refusal says of each. */
const WRITE_FAILURES: readonly (readonly [RegExp, string])[] = [
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
export function commitFailure(err: unknown, cause: unknown = err): VaultError | null {
  if (err instanceof VaultError) return null;
  const text = [cause, err]
    .map((e) =>
      e instanceof Error ? `${String((e as { code?: unknown }).code)} ${e.message}` : '',
    )
    .join(' ');
  const found = WRITE_FAILURES.find(([pattern]) => pattern.test(text));
  if (found === undefined && !/Commit failed/.test(text)) return null;
  const why = found?.[1] ?? 'the store could not commit';
  return new VaultError(
    'VLT-3004',
    `Audit record could not be written: ${why}; access refused until it can be.`,
    { cause: err },
  );
}

/**
 * lmdb-js rejects a failed batched commit twice: the transaction's promise
 * with "Commit failed", and later `commitError`, a second promise carrying the
 * file system's error, that nobody awaits: left alone, its rejection is
 * unhandled and ends the host. It is awaited here (briefly: it settles in the
 * same write-thread callback) for the cause it names.
 */
export async function commitCause(err: unknown): Promise<unknown> {
  const second = (err as { commitError?: unknown } | null)?.commitError;
  if (!(second instanceof Promise)) return err;
  const settled = second.then(
    () => err,
    (cause: unknown) => cause,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<unknown>((r) => (timer = setTimeout(() => r(err), 2000)));
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
