/** Telling damage in the store from a bug: used by every host path that reads it. */
import { VaultError, type ErrorCode } from '../core/errors.js';

/**
 * The code for an error a store read threw: a record that does not decode or
 * a page LMDB refuses is damage (VLT-3034), not an internal error; anything
 * else is null.
 */
export function damageCode(err: unknown): ErrorCode | null {
  if (err instanceof VaultError) return null;
  if (!(err instanceof Error)) return null;
  if (/^MDB_/.test(err.message)) return 'VLT-3034';
  const stack = err.stack ?? '';
  if (/node_modules\/(lmdb|msgpackr)\//.test(stack)) return 'VLT-3034';
  return null;
}
