/**
 * Reading an import's source: a `.env` file, a 1Password export (1PUX or CSV)
 * or a `pass` store, parsed by formats.ts. The file may have been written by an
 * agent for the owner to import, so a symbolic link or anything but a regular
 * file is refused (a `.env` that points at ~/.ssh/id_ed25519) and every read
 * is capped; a pass store's entries are decrypted by gpg, as pass does.
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { VaultError } from '../core/errors.js';
import { DEFAULT_FIELD, checkFieldName, showable } from '../core/names.js';
import { dotenvEntries, parse1PasswordCsv, parse1pux, parseDotenv, parsePassEntry, } from './formats.js';
import { zipMember } from './zip.js';
export const FORMATS = ['dotenv', '1pux', '1password-csv', 'pass'];
const MiB = 1024 * 1024;
/** A .env or CSV file larger than this is not a file of secrets. */
const MAX_TEXT = 16 * MiB;
/** A 1PUX archive holds attachments too; only export.data is inflated, and capped. */
const MAX_ARCHIVE = 256 * MiB;
const MAX_EXPORT_DATA = 64 * MiB;
/** One pass entry, decrypted; and how many a store may hold for one import. */
const MAX_PASS_ENTRY = MiB;
const MAX_PASS_FILES = 10_000;
function sourceRefused(why) {
    return new VaultError('VLT-1013', why);
}
/**
 * The bytes of the regular file at `path`, at most `max` of them. Opened
 * without following a symbolic link and without blocking on a FIFO, then
 * checked to be a regular file on the descriptor read from.
 * @throws VaultError VLT-1013
 */
export function readSource(path, max) {
    const shown = `"${showable(path)}"`;
    let fd;
    try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    }
    catch (err) {
        const code = err.code;
        if (code === 'ELOOP') {
            throw sourceRefused(`${shown} is a symbolic link: give the file it points to, if you mean it.`);
        }
        if (code === 'ENOENT')
            throw sourceRefused(`${shown}: no such file.`);
        throw sourceRefused(`${shown} cannot be opened (${code ?? 'error'}).`);
    }
    try {
        const st = fstatSync(fd);
        if (!st.isFile())
            throw sourceRefused(`${shown} is not a regular file.`);
        if (st.size > max)
            throw sourceRefused(`${shown} is larger than ${max / MiB} MiB.`);
        // Read to the cap, not to the size: a file that grows while read stops there too.
        const buf = Buffer.alloc(Math.min(max + 1, st.size + 1));
        let got = 0;
        for (;;) {
            const n = readSync(fd, buf, got, buf.length - got, null);
            if (n === 0)
                break;
            got += n;
            // More than fstat said: larger than the cap, or written to while read.
            if (got === buf.length) {
                throw sourceRefused(got > max ? `${shown} is larger than ${max / MiB} MiB.` : `${shown} changed while read.`);
            }
        }
        return buf.subarray(0, got);
    }
    finally {
        closeSync(fd);
    }
}
/** The text of `bytes`, refused when it is not UTF-8 (a binary file is not an export). */
function utf8(bytes, what) {
    try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    }
    catch {
        throw new VaultError('VLT-1011', `${what}: not UTF-8 text.`);
    }
}
/**
 * The entries of the import source `source` in `format`, read as the file's
 * header says (a regular file or a pass store, capped).
 * @throws VaultError VLT-1001 (a .env-only option with another format), VLT-1011, VLT-1013
 */
export async function parseSource(format, source, opts) {
    const prefix = opts.prefix === undefined ? {} : { prefix: opts.prefix };
    if (format !== 'dotenv') {
        for (const f of ['entry', 'field']) {
            if (opts[f] !== undefined) {
                throw new VaultError('VLT-1001', `--${f} goes with dotenv imports.`);
            }
        }
    }
    if (format === 'pass')
        return parsePass(source, prefix);
    if (source === '')
        throw new VaultError('VLT-1001', 'Name the file to import.');
    if (format === '1pux') {
        const data = zipMember(readSource(source, MAX_ARCHIVE), 'export.data', MAX_EXPORT_DATA);
        if (data === null)
            throw new VaultError('VLT-1011', 'the 1PUX archive: no export.data.');
        return parse1pux(utf8(data, 'export.data'), prefix);
    }
    const text = utf8(readSource(source, MAX_TEXT), basename(source));
    if (format === '1password-csv')
        return parse1PasswordCsv(text, prefix);
    const field = checkFieldName(opts.field ?? DEFAULT_FIELD);
    const entry = opts.entry;
    return dotenvEntries(parseDotenv(text), {
        field,
        ...prefix,
        ...(entry === undefined ? {} : { entry }),
    });
}
/** The `.gpg` files under a pass store, by path; dot-directories (.git, .extensions) left out. */
function passFiles(store) {
    const found = [];
    const walk = (dir) => {
        for (const name of readdirSync(dir).sort()) {
            if (name.startsWith('.'))
                continue;
            const path = join(dir, name);
            const st = lstatSync(path);
            if (st.isSymbolicLink()) {
                throw sourceRefused(`"${showable(relative(store, path))}" in the pass store is a symbolic link; nothing was imported.`);
            }
            if (st.isDirectory())
                walk(path);
            else if (st.isFile() && name.endsWith('.gpg')) {
                found.push(path);
                if (found.length > MAX_PASS_FILES) {
                    throw sourceRefused(`The pass store holds more than ${MAX_PASS_FILES} entries.`);
                }
            }
        }
    };
    walk(store);
    return found;
}
/**
 * What `pass show` prints for one file: gpg run as pass runs it
 * (`gpg -d --quiet --yes --compress-algo=none --no-encrypt-to --batch
 * --use-agent`), the path its only argument, the plaintext from its stdout;
 * gpg-agent asks for the key's passphrase, once for the whole store.
 */
function decrypt(file, shown) {
    const args = ['-d', '--quiet', '--yes', '--compress-algo=none', '--no-encrypt-to'];
    args.push('--batch', '--use-agent', '--', file);
    return new Promise((done, fail) => {
        const gpg = spawn('gpg', args, { stdio: ['ignore', 'pipe', 'inherit'] });
        const out = [];
        let size = 0;
        gpg.stdout.on('data', (c) => {
            size += c.length;
            if (size > MAX_PASS_ENTRY)
                gpg.kill();
            else
                out.push(c);
        });
        gpg.on('error', (err) => fail(err.code === 'ENOENT'
            ? new VaultError('VLT-1013', 'gpg is not installed: pass stores are gpg-encrypted.')
            : err));
        gpg.on('close', (code) => {
            const plain = Buffer.concat(out);
            for (const c of out)
                c.fill(0);
            if (size > MAX_PASS_ENTRY) {
                plain.fill(0);
                fail(sourceRefused(`pass entry "${shown}" is larger than ${MAX_PASS_ENTRY / MiB} MiB.`));
            }
            else if (code !== 0) {
                plain.fill(0);
                fail(sourceRefused(`gpg could not decrypt pass entry "${shown}" (exit ${code}).`));
            }
            else
                done(plain);
        });
    });
}
async function parsePass(source, opts) {
    const store = resolve(source);
    try {
        if (!lstatSync(store).isDirectory())
            throw new Error('not a directory');
    }
    catch {
        throw sourceRefused(`"${showable(source)}" is not a pass store (a directory).`);
    }
    const entries = [];
    let skipped = 0;
    for (const file of passFiles(store)) {
        const path = relative(store, file).replace(/\.gpg$/, '');
        const plain = await decrypt(file, showable(path));
        const parsed = parsePassEntry(path, utf8(plain, `pass entry "${showable(path)}"`), opts);
        plain.fill(0);
        entries.push(...parsed.entries);
        skipped += parsed.skipped;
    }
    return { entries, skipped };
}
