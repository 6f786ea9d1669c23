/**
 * What an entry, field, tier and agent name may be. Entry names are free text
 * (spaces allowed) but no control or invisible characters, so they can be shown on one line
 * and written in a `vault://` reference (with `/` as %2F).
 */
import { VaultError, quote } from './errors.js';
export const MAX_NAME_BYTES = 256;
export const DEFAULT_FIELD = 'password';
export const DEFAULT_TIER = 'default';
export const TOTP_FIELD = 'totp';
/** An SSH private key (PKCS#8 DER): only the host signs with it, it is never released (docs/ssh.md). */
export const SSH_KEY_FIELD = 'ssh_private_key';
/** Its public key, an authorized_keys line: what `vault-cli ssh-agent` lists. */
export const SSH_PUBLIC_FIELD = 'ssh_public_key';
/** In an entry's bindings (`entry hosts`): forwarded agents (`ssh -A`) may sign with it. */
export const SSH_FORWARD_BINDING = '+forward';
/**
 * Code points no new entry name may hold: C0, DEL, C1 (a terminal takes
 * U+009B as CSI), and the invisible format characters (bidi overrides and
 * isolates, zero-width ones) that make a name read as another on screen.
 */
export const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
/**
 * `name` as a terminal may show it: every unshowable character written as
 * `\u{..}`. Pure and total.
 */
export function showable(name) {
    return name.replace(new RegExp(UNSHOWABLE.source, 'gu'), (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}
/**
 * JSON text with every unshowable character written as a `\uXXXX` escape
 * (each UTF-16 unit of one beyond the BMP): JSON.stringify leaves C1 and
 * bidi controls as they are, and a terminal showing the line would act on
 * them. The text parses to the same value. Pure and total.
 */
export function showableJson(json) {
    return json.replace(new RegExp(UNSHOWABLE.source, 'gu'), (c) => [...Array(c.length).keys()]
        .map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`)
        .join(''));
}
/** The first unshowable code point of `name` as U+XXXX, or null. */
export function unshowableIn(name) {
    const bad = UNSHOWABLE.exec(name);
    if (bad === null)
        return null;
    return `U+${(bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
const FIELD = /^[A-Za-z0-9_-]{1,64}$/;
const SIMPLE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** @throws VaultError VLT-1002 for an empty, over-long, control- or invisible-character name. */
export function checkEntryName(name) {
    const bad = unshowableIn(name);
    if (bad !== null) {
        throw new VaultError('VLT-1002', `Entry names have no control or invisible characters (this one holds ${bad}).`);
    }
    if (name.length === 0 || name.trim() !== name) {
        throw new VaultError('VLT-1002', 'Entry names are non-empty and have no leading or trailing space.');
    }
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
        throw new VaultError('VLT-1002', `Entry names are at most ${MAX_NAME_BYTES} bytes.`);
    }
    return name;
}
export function isFieldName(name) {
    return FIELD.test(name);
}
/** @throws VaultError VLT-1002 unless the field matches [A-Za-z0-9_-]{1,64}. */
export function checkFieldName(name) {
    if (!isFieldName(name)) {
        throw new VaultError('VLT-1002', `Field ${quote(name)} is not a field name ([A-Za-z0-9_-]+).`);
    }
    return name;
}
/** Agent and tier names: lower-case letters, digits, `_` and `-`. */
export function checkSimpleName(kind, name) {
    if (!SIMPLE.test(name)) {
        throw new VaultError('VLT-1002', `${kind === 'agent' ? 'Agent' : 'Tier'} names are 1-64 of a-z 0-9 _ - (got ${quote(name)}).`);
    }
    return name;
}
