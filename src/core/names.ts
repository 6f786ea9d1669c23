/**
 * What an entry, field, tier and agent name may be. Entry names are free text
 * (spaces allowed) but no control characters, so they can be shown on one line
 * and written in a `vault://` reference (with `/` as %2F).
 */
import { VaultError, quote } from './errors.js';

export const MAX_NAME_BYTES = 256;
export const DEFAULT_FIELD = 'password';
export const DEFAULT_TIER = 'default';
export const TOTP_FIELD = 'totp';

const CONTROL = /[\u0000-\u001f\u007f]/;
const FIELD = /^[A-Za-z0-9_-]{1,64}$/;
const SIMPLE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** @throws VaultError VLT-1002 for an empty, over-long or control-character name. */
export function checkEntryName(name: string): string {
  if (name.length === 0 || name.trim() !== name) {
    throw new VaultError(
      'VLT-1002',
      'Entry names are non-empty and have no leading or trailing space.',
    );
  }
  if (CONTROL.test(name))
    throw new VaultError('VLT-1002', 'Entry names have no control characters.');
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    throw new VaultError('VLT-1002', `Entry names are at most ${MAX_NAME_BYTES} bytes.`);
  }
  return name;
}

export function isFieldName(name: string): boolean {
  return FIELD.test(name);
}

/** @throws VaultError VLT-1002 unless the field matches [A-Za-z0-9_-]{1,64}. */
export function checkFieldName(name: string): string {
  if (!isFieldName(name)) {
    throw new VaultError('VLT-1002', `Field ${quote(name)} is not a field name ([A-Za-z0-9_-]+).`);
  }
  return name;
}

/** Agent and tier names: lower-case letters, digits, `_` and `-`. */
export function checkSimpleName(kind: 'agent' | 'tier', name: string): string {
  if (!SIMPLE.test(name)) {
    throw new VaultError(
      'VLT-1002',
      `${kind === 'agent' ? 'Agent' : 'Tier'} names are 1-64 of a-z 0-9 _ - (got ${quote(name)}).`,
    );
  }
  return name;
}
