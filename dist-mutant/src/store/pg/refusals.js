/** What a team host's database refusing or not answering means for the caller. */
import { VaultError } from '../../core/errors.js';
/**
 * What the database's refusal means for the owner, by its SQLSTATE: a full
 * disk and a read-only database are named as such (both VLT-3004, as LMDB's
 * full or read-only disk is: nothing can be audited, so nothing is
 * released); anything else is VLT-3040.
 */
export function refusal(code, cause) {
    if (code === '53100') {
        return new VaultError('VLT-3004', 'The vault’s database has no room left (PostgreSQL: disk full); access refused until it has (nothing was released).', { cause });
    }
    if (code === '25006') {
        return new VaultError('VLT-3004', 'The vault’s database takes no writes (PostgreSQL: read-only: a standby, or default_transaction_read_only); access refused (nothing was released).', { cause });
    }
    return unreachable(cause);
}
export function unreachable(cause) {
    return new VaultError('VLT-3040', 'The vault’s database is unreachable; access refused until it answers (nothing was released).', { cause });
}
