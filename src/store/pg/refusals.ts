/**
 * What a team host's database refusing or not answering means for the
 * caller, in words that name the cause (issue 37: every SQLSTATE but two was
 * "unreachable", so a refusal under load could not be told from a database
 * that was down).
 */
import { VaultError } from '../../core/errors.js';

const NOTHING = 'nothing was released';

/**
 * SQLSTATEs of contention between writers, not of a database that refuses:
 * a serialization failure, a deadlock (one of two writers is cancelled), a
 * lock not had within lock_timeout. The write is run again (pg.ts), never
 * refused for them while tries are left.
 */
const CONTENTION = new Set(['40001', '40P01', '55P03']);

/** Whether `code` is a SQLSTATE: five letters or digits, not a system error's E-name (EPIPE). */
function isSqlstate(code: string): boolean {
  return /^[0-9A-Z]{5}$/.test(code) && !/^E[A-Z]+$/.test(code);
}

/**
 * Whether `err` (pg-worker.ts) lost the connection, as against the database
 * refusing one statement on it. A SQLSTATE decides when there is one: a
 * lock timeout's "canceling statement due to lock timeout" matched the
 * message's /timeout/ below, so contention between hosts opened the
 * host's breaker and refused every request for half a second (issue 37).
 */
export function lostConnection(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  if (isSqlstate(code)) return code.startsWith('08') || code.startsWith('57P');
  const message = err instanceof Error ? err.message : '';
  return (
    /^E[A-Z]+$/.test(code) ||
    /Connection terminated|timeout|Client has encountered a connection error|not queryable/i.test(
      message,
    )
  );
}

/** The SQLSTATE a refusal from pg.ts carries (its cause's code), or ''. */
export function sqlstate(err: unknown): string {
  const cause = err instanceof VaultError ? err.cause : err;
  return String((cause as { code?: unknown } | undefined)?.code ?? '');
}

/** Whether `err` is contention between writers (CONTENTION), to be tried again. */
export function contended(err: unknown): boolean {
  return err instanceof VaultError && err.code === 'VLT-3040' && CONTENTION.has(sqlstate(err));
}

/** What the database said, bounded, for the message (a server's primary message quotes no value). */
function said(cause: unknown): string {
  const text = cause instanceof Error ? cause.message : String(cause);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** VLT-3040 with `why` and what the owner can do. */
function refused(why: string, cause: unknown): VaultError {
  return new VaultError('VLT-3040', `${why} (${NOTHING}).`, { cause });
}

/**
 * What the database's refusal means for the owner, by its SQLSTATE: a full
 * disk and a read-only database are named as such (both VLT-3004, as LMDB's
 * full or read-only disk is: nothing can be audited, so nothing is
 * released); the rest VLT-3040, each naming its cause.
 */
export function refusal(code: string, cause: unknown): VaultError {
  if (code === '53100') {
    return new VaultError(
      'VLT-3004',
      `The vault’s database has no room left (PostgreSQL: disk full); access refused until it has (${NOTHING}).`,
      { cause },
    );
  }
  if (code === '25006') {
    return new VaultError(
      'VLT-3004',
      `The vault’s database takes no writes (PostgreSQL: read-only: a standby, or default_transaction_read_only); access refused (${NOTHING}).`,
      { cause },
    );
  }
  if (code === '53300' || code === '53400') {
    return refused(
      `The vault’s database refuses new connections (PostgreSQL ${code}: too many connections): each team host holds three; raise max_connections or end idle sessions. Access refused until one is free`,
      cause,
    );
  }
  if (code.startsWith('28')) {
    return refused(
      `The vault’s database refuses this host’s login (PostgreSQL ${code}: ${said(cause)}): check the URL’s user and its password (PGPASSFILE)`,
      cause,
    );
  }
  if (CONTENTION.has(code)) {
    return refused(
      `The vault’s database kept the write from committing, through every try, for contention with another session (PostgreSQL ${code}: ${said(cause)}): a long transaction on the vault’s tables, or a host stopped mid-commit, may hold its version row. Access refused until it is let go`,
      cause,
    );
  }
  if (code === '57014') {
    return refused(
      `The vault’s database cancelled the statement (PostgreSQL 57014: ${said(cause)})`,
      cause,
    );
  }
  // Any other SQLSTATE but a lost connection's.
  if (isSqlstate(code) && !/^(08|57P)/.test(code)) {
    return refused(
      `The vault’s database refused the transaction (PostgreSQL ${code}: ${said(cause)})`,
      cause,
    );
  }
  return unreachable(cause);
}

/** The database cannot be reached, or did not answer: `cause` says which. */
export function unreachable(cause: unknown): VaultError {
  return refused(
    `The vault’s database is unreachable (${said(cause)}); access refused until it answers`,
    cause,
  );
}
