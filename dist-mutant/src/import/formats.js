/**
 * What `vault-cli import` reads, as pure parsers: a `.env` file, 1Password's
 * exports (the 1PUX archive's export.data, and its CSV), and one decrypted
 * `pass` file. Each returns entries (a name and named fields) or throws
 * VaultError VLT-1011 naming the line or item, never its text: the file may
 * be a private key an agent linked or pasted there, and the message goes to
 * a terminal and maybe a log.
 *
 * The file may also be written by an agent for the owner to import, so the
 * names it yields are checked here, stricter than `entry set`: no control
 * character (C0, C1, DEL) and no invisible formatting character (bidi
 * overrides, zero-width), which would later reach the owner's terminal from
 * `entry ls` or hide one name behind another.
 *
 * Values are JavaScript strings: JSON and text parsing leave no other choice,
 * and so are not wiped (the client drops them after the import).
 */
import { VaultError } from '../core/errors.js';
import { MAX_NAME_BYTES, isFieldName, showable, unshowableIn } from '../core/names.js';
function refused(where, why) {
    return new VaultError('VLT-1011', `${where}: ${why}.`);
}
/**
 * `name` if an imported entry may have it.
 * @throws VaultError VLT-1011 naming `where` and the offending code point, never the name.
 */
export function checkImportName(name, where) {
    if (name.length === 0)
        throw refused(where, 'the name is empty');
    const bad = unshowableIn(name);
    if (bad !== null)
        throw refused(where, `the name holds a control or invisible character (${bad})`);
    if (name.trim() !== name)
        throw refused(where, 'the name starts or ends with a space');
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
        throw refused(where, `the name is longer than ${MAX_NAME_BYTES} bytes`);
    }
    return name;
}
/** Text as lines, with CRLF, CR and LF all ending one; a leading byte-order mark dropped. */
function lines(text) {
    return text.replace(/^\ufeff/, '').split(/\r\n|\r|\n/);
}
// ---------------------------------------------------------------- dotenv
/** A dotenv variable: the first character a letter or `_`, then letters, digits, `_`, `.`, `-`. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const ENV_LINE = /^[ \t]*(?:export[ \t]+)?([^=\s]+)[ \t]*=[ \t]*(.*)$/s;
const DOUBLE_ESCAPES = {
    n: '\n',
    r: '\r',
    t: '\t',
    '\\': '\\',
    '"': '"',
    $: '$',
    '`': '`',
};
/**
 * A `.env` file, as dotenv and docker compose read it: `NAME=value` lines,
 * `export ` before a name allowed, spaces around `=` allowed, blank lines and
 * `#` lines skipped. Values: unquoted (trimmed, ended by ` #` comment);
 * single- or backtick-quoted (literal, may span lines); double-quoted (may
 * span lines, with `\n \r \t \\ \" \$` and a backslash before a newline
 * joining lines; other escapes kept as written). Nothing is expanded: `${X}`
 * stays as written. A name set twice is refused, not silently resolved.
 * @throws VaultError VLT-1011 `line N: ...`
 */
export function parseDotenv(text) {
    const all = lines(text);
    const out = [];
    const seen = new Map();
    for (let i = 0; i < all.length; i++) {
        const line = all[i] ?? '';
        const at = `line ${i + 1}`;
        if (/^[ \t]*(?:#.*)?$/s.test(line))
            continue;
        const m = ENV_LINE.exec(line);
        if (m === null)
            throw refused(at, 'not a NAME=value line');
        const name = m[1] ?? '';
        if (!ENV_NAME.test(name)) {
            throw refused(at, 'the name is not a variable name (A-Z a-z 0-9 _ . -, not first a digit)');
        }
        const first = seen.get(name);
        if (first !== undefined)
            throw refused(at, `${name} is also set on line ${first}`);
        const start = i + 1;
        let rest = m[2] ?? '';
        let value;
        const quote = rest[0];
        if (quote === '"' || quote === "'" || quote === '`') {
            // The closing quote may be lines further on: the value spans them.
            let body = '';
            let pos = 1;
            for (;;) {
                const r = closeQuote(rest, pos, quote);
                if (r !== null) {
                    body += r.body;
                    rest = rest.slice(r.end + 1);
                    break;
                }
                // The line ends inside the quotes: the newline is part of the value.
                body += rest.slice(pos) + '\n';
                i++;
                if (i >= all.length)
                    throw refused(`line ${start}`, 'the quote is never closed');
                rest = all[i] ?? '';
                pos = 0;
            }
            if (!/^[ \t]*(?:#.*)?$/s.test(rest)) {
                throw refused(`line ${i + 1}`, 'text after the closing quote');
            }
            value = quote === '"' ? unescapeDouble(body) : body;
        }
        else {
            const comment = /(^|[ \t])#/.exec(rest);
            value = (comment === null ? rest : rest.slice(0, comment.index)).trim();
        }
        seen.set(name, start);
        out.push({ name, value, line: start });
    }
    return out;
}
/** Where `quote` closes in `s` from `pos` (a backslash escapes it inside double quotes). */
function closeQuote(s, pos, quote) {
    for (let j = pos; j < s.length; j++) {
        const c = s[j];
        if (c === '\\' && quote === '"') {
            j++;
            continue;
        }
        if (c === quote)
            return { body: s.slice(pos, j), end: j };
    }
    return null;
}
function unescapeDouble(body) {
    return body.replace(/\\([\s\S])/g, (all, c) => {
        if (c === '\n')
            return '';
        return DOUBLE_ESCAPES[c] ?? all;
    });
}
/**
 * Variables as a `.env` file that parseDotenv reads back to the same names
 * and values (every value double-quoted): the round-trip the tests check.
 */
export function formatDotenv(vars) {
    return vars
        .map((v) => {
        const q = v.value
            .replace(/[\\"$`]/g, (c) => `\\${c}`)
            .replace(/\n/g, '\\n')
            .replace(/\r/g, '\\r');
        return `${v.name}="${q}"\n`;
    })
        .join('');
}
/**
 * Variables as entries: one entry per variable (`prefix` + name) holding
 * `field`, or, with `entry`, one entry whose fields are the variables.
 * Variables with an empty value are passed over (an empty value is not stored).
 * @throws VaultError VLT-1011 for a name that cannot be an entry or a field.
 */
export function dotenvEntries(vars, opts) {
    const kept = vars.filter((v) => v.value !== '');
    const skipped = vars.length - kept.length;
    if (opts.entry !== undefined) {
        const name = checkImportName(opts.entry, '--entry');
        for (const v of kept) {
            if (!isFieldName(v.name)) {
                throw refused(`line ${v.line}`, 'with --entry, a name is a field: A-Z a-z 0-9 _ - only');
            }
        }
        const fields = kept.map((v) => ({ field: v.name, value: v.value }));
        return { entries: fields.length === 0 ? [] : [{ name, fields }], skipped };
    }
    const entries = kept.map((v) => ({
        name: checkImportName((opts.prefix ?? '') + v.name, `line ${v.line}`),
        fields: [{ field: opts.field, value: v.value }],
    }));
    return { entries, skipped };
}
// ---------------------------------------------------------------- field keys
/**
 * A field name from a label: lower case, runs of anything but a-z 0-9 _ -
 * as one `_`, at most 64 characters; `fallback` when nothing is left.
 */
export function fieldKey(label, fallback) {
    const k = label
        .toLowerCase()
        .replace(/[^a-z0-9_-]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 64)
        .replace(/_+$/, '');
    return k === '' ? fallback : k;
}
/** Collects an entry's fields: a key taken twice gets `_2`, `_3`; empty values are left out. */
class FieldSet {
    fields = [];
    taken = new Set();
    add(key, value) {
        if (value === '')
            return;
        let k = key;
        for (let n = 2; this.taken.has(k); n++)
            k = `${key.slice(0, 60)}_${n}`;
        this.taken.add(k);
        this.fields.push({ field: k, value });
    }
}
/** Entries with the names they asked for; a name taken twice gets ` (2)`, ` (3)`. */
class EntrySet {
    entries = [];
    taken = new Set();
    add(name, fields, where) {
        checkImportName(name, where);
        let n = name;
        for (let i = 2; this.taken.has(n); i++)
            n = `${name} (${i})`;
        checkImportName(n, where);
        this.taken.add(n);
        this.entries.push({ name: n, fields });
    }
}
function obj(v) {
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
}
function arr(v) {
    return Array.isArray(v) ? v : [];
}
function text(v) {
    return typeof v === 'string' ? v : '';
}
/**
 * A section field's value: the 1PUX `value` object holds one key naming its
 * type (`concealed`, `string`, `totp`, `url`, `email`, `sshKey`, ...). Text
 * values are taken; dates, menus, files and references are not secrets.
 */
function sectionValue(value) {
    const o = obj(value);
    if (o === null)
        return { value: '', kind: '' };
    for (const [kind, v] of Object.entries(o)) {
        if (typeof v === 'string')
            return { value: v, kind };
        const inner = obj(v);
        if (kind === 'sshKey' && inner !== null)
            return { value: text(inner.privateKey), kind };
        if (kind === 'email' && inner !== null)
            return { value: text(inner.email_address), kind };
    }
    return { value: '', kind: '' };
}
/**
 * The `export.data` JSON of a 1PUX archive (1Password 8): accounts, their
 * vaults, their items. An item becomes an entry named by its title (the
 * vault's name before it with `vaultNames`), with fields `username` and
 * `password` (login fields by designation), `url`, `notes`, `totp`,
 * `private_key` (an SSH key item), and each section field under a key from
 * its title. Archived and trashed (deleted) items are passed over; password
 * history is not imported.
 * @throws VaultError VLT-1011 `export.data: ...` or `item N: ...` (N counts from 1 in file order).
 */
export function parse1pux(exportData, opts = {}) {
    let root;
    try {
        root = JSON.parse(exportData);
    }
    catch {
        throw refused('export.data', 'not JSON');
    }
    const accounts = obj(root)?.accounts;
    if (!Array.isArray(accounts))
        throw refused('export.data', 'no accounts list');
    const out = new EntrySet();
    let n = 0;
    let skipped = 0;
    for (const account of accounts) {
        for (const vault of arr(obj(account)?.vaults)) {
            for (const raw of arr(obj(vault)?.items)) {
                n++;
                const where = `item ${n}`;
                const item = obj(raw);
                if (item === null)
                    throw refused(where, 'not an object');
                const state = text(item.state);
                // 1Password marks a deleted item `trashed`; older exports say so in `state`.
                if (state === 'archived' || state === 'deleted' || item.trashed === true) {
                    skipped++;
                    continue;
                }
                const overview = obj(item.overview) ?? {};
                const details = obj(item.details) ?? {};
                const f = new FieldSet();
                for (const lf of arr(details.loginFields)) {
                    const l = obj(lf);
                    if (l === null)
                        continue;
                    const d = text(l.designation);
                    const key = d === 'username' || d === 'password' ? d : fieldKey(text(l.name), 'login');
                    f.add(key, text(l.value));
                }
                f.add('password', text(details.password));
                f.add('url', text(overview.url));
                for (const s of arr(details.sections)) {
                    for (const sf of arr(obj(s)?.fields)) {
                        const field = obj(sf);
                        if (field === null)
                            continue;
                        const { value, kind } = sectionValue(field.value);
                        const key = kind === 'totp'
                            ? 'totp'
                            : kind === 'sshKey'
                                ? 'private_key'
                                : fieldKey(text(field.title), fieldKey(text(field.id), 'field'));
                        f.add(key, value);
                    }
                }
                f.add('notes', text(details.notesPlain));
                if (f.fields.length === 0) {
                    skipped++;
                    continue;
                }
                const title = text(overview.title).trim();
                out.add((opts.prefix ?? '') + (title === '' ? 'Untitled' : title), f.fields, where);
            }
        }
    }
    return { entries: out.entries, skipped };
}
// ---------------------------------------------------------------- CSV
/**
 * RFC 4180 CSV: fields separated by commas, rows by CRLF or LF; a field in
 * double quotes may hold commas, newlines and `""` for a quote. Each row
 * with the 1-based line it starts on.
 * @throws VaultError VLT-1011 `line N: ...` for a stray or unclosed quote.
 */
export function parseCsv(text) {
    const s = text.replace(/^\ufeff/, '');
    const rows = [];
    let line = 1;
    let i = 0;
    while (i < s.length) {
        const start = line;
        const cells = [];
        for (;;) {
            let cell = '';
            if (s[i] === '"') {
                const open = line;
                i++;
                for (;;) {
                    if (i >= s.length)
                        throw refused(`line ${open}`, 'the quote is never closed');
                    const c = s[i] ?? '';
                    if (c === '"') {
                        if (s[i + 1] === '"') {
                            cell += '"';
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    if (c === '\n' || (c === '\r' && s[i + 1] !== '\n'))
                        line++;
                    cell += c;
                    i++;
                }
                const next = s[i];
                if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
                    throw refused(`line ${line}`, 'text after a closing quote');
                }
            }
            else {
                while (i < s.length && s[i] !== ',' && s[i] !== '\n' && s[i] !== '\r') {
                    if (s[i] === '"')
                        throw refused(`line ${line}`, 'a quote inside an unquoted field');
                    cell += s[i];
                    i++;
                }
            }
            cells.push(cell);
            if (s[i] === ',') {
                i++;
                continue;
            }
            break;
        }
        if (s[i] === '\r')
            i++;
        if (s[i] === '\n')
            i++;
        line++;
        rows.push({ cells, line: start });
    }
    return rows;
}
/** Rows as CSV that parseCsv reads back the same (every cell quoted). */
export function formatCsv(rows) {
    return rows.map((r) => r.map((c) => `"${c.replace(/"/g, '""')}"`).join(',') + '\r\n').join('');
}
/** 1Password's CSV column names (7 and 8), lower case, and the field each fills (null: none). */
const CSV_COLUMNS = {
    title: 'name',
    name: 'name',
    url: 'url',
    website: 'url',
    urls: 'url',
    username: 'username',
    password: 'password',
    otpauth: 'totp',
    'one-time password': 'totp',
    notes: 'notes',
    notesplain: 'notes',
    // Not secrets, not fields (1Password 7's bookkeeping columns among them).
    favorite: null,
    tags: null,
    type: null,
    uuid: null,
    ainfo: null,
    ps: null,
    scope: null,
    autosubmit: null,
    'created date': null,
    'modified date': null,
    archived: 'archived',
};
/**
 * 1Password's CSV export: a header row naming the columns (Title, Url,
 * Username, Password, OTPAuth, Favorite, Archived, Tags, Notes in 1Password
 * 8), then one item per row. Known columns become `username`, `password`,
 * `url`, `totp`, `notes`; other columns fields under a key from their header.
 * Archived rows are passed over; a row wider than the header is refused.
 * @throws VaultError VLT-1011 `line N: ...`
 */
export function parse1PasswordCsv(csv, opts = {}) {
    const rows = parseCsv(csv);
    const header = rows.shift();
    if (header === undefined)
        throw refused('line 1', 'no header row');
    const cols = header.cells.map((h) => {
        const known = CSV_COLUMNS[h.trim().toLowerCase()];
        return known === undefined ? fieldKey(h, 'field') : known;
    });
    if (!cols.includes('name'))
        throw refused('line 1', 'no Title column');
    const out = new EntrySet();
    let skipped = 0;
    for (const row of rows) {
        const where = `line ${row.line}`;
        if (row.cells.length === 1 && row.cells[0] === '')
            continue;
        if (row.cells.length > cols.length)
            throw refused(where, 'more cells than the header has');
        let name = '';
        let archived = false;
        const f = new FieldSet();
        row.cells.forEach((cell, i) => {
            const col = cols[i] ?? null;
            if (col === 'name')
                name = cell.trim();
            else if (col === 'archived')
                archived = /^(true|1|yes)$/i.test(cell.trim());
            else if (col !== null)
                f.add(col, cell);
        });
        if (archived || f.fields.length === 0) {
            skipped++;
            continue;
        }
        out.add((opts.prefix ?? '') + (name === '' ? 'Untitled' : name), f.fields, where);
    }
    return { entries: out.entries, skipped };
}
// ---------------------------------------------------------------- pass
/**
 * One `pass` entry: `path` is the file's path under the store without
 * `.gpg` (`web/github.com`), `plain` what gpg decrypted. pass's convention:
 * the first line is the password; later `key: value` lines are fields
 * (`user:`, `login:`, `url:`...), an `otpauth://` line is the one-time
 * password seed (pass-otp), the rest are notes.
 * @throws VaultError VLT-1011 naming the file, for a name it cannot be.
 */
export function parsePassEntry(path, plain, opts = {}) {
    const where = `pass entry ${showable(path)}`;
    const name = checkImportName((opts.prefix ?? '') + path, where);
    const all = plain.split(/\r?\n/);
    if (all[all.length - 1] === '')
        all.pop();
    const f = new FieldSet();
    f.add('password', all[0] ?? '');
    const notes = [];
    for (const l of all.slice(1)) {
        const kv = /^([A-Za-z0-9][A-Za-z0-9 _-]{0,63}):[ \t]+(.*)$/s.exec(l);
        if (/^otpauth:\/\//.test(l.trim()))
            f.add('totp', l.trim());
        else if (kv !== null && kv[1] !== undefined && kv[2] !== undefined && kv[2] !== '') {
            f.add(fieldKey(kv[1], 'field'), kv[2]);
        }
        else
            notes.push(l);
    }
    while (notes.length > 0 && notes[notes.length - 1]?.trim() === '')
        notes.pop();
    f.add('notes', notes.join('\n'));
    return f.fields.length === 0
        ? { entries: [], skipped: 1 }
        : { entries: [{ name, fields: f.fields }], skipped: 0 };
}
