/**
 * `vault-cli import`: entries from a `.env` file, a 1Password export (1PUX
 * or CSV) or a `pass` store, created with one owner unlock.
 *
 * The file may have been written by an agent for the owner to import, so:
 * a symbolic link or anything but a regular file is refused (a `.env` that
 * points at ~/.ssh/id_ed25519); reads are capped; the parsers name lines,
 * never their text; names are checked for control and invisible characters
 * and shown neutralised; an entry that exists is never replaced unless the
 * owner says --overwrite. `--dry-run` reads and parses only: no vault, no
 * passphrase, no value printed.
 *
 * Values travel as JavaScript strings (JSON and text parsing give nothing
 * else), so they are not wiped; they live as long as this process.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  readdirSync,
} from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { VaultError } from '../../core/errors.js';
import {
  dotenvEntries,
  parse1PasswordCsv,
  parse1pux,
  parseDotenv,
  parsePassEntry,
  type ImportEntry,
  type Parsed,
} from '../../import/formats.js';
import { DEFAULT_FIELD, checkFieldName, showable } from '../../core/names.js';
import { MAX_IMPORT_ENTRIES } from '../../core/requests.js';
import { zipMember } from '../../import/zip.js';
import { arg, flag, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';

type Format = 'dotenv' | '1pux' | '1password-csv' | 'pass';
const FORMATS: readonly Format[] = ['dotenv', '1pux', '1password-csv', 'pass'];

const MiB = 1024 * 1024;
/** A .env or CSV file larger than this is not a file of secrets. */
const MAX_TEXT = 16 * MiB;
/** A 1PUX archive holds attachments too; only export.data is inflated, and capped. */
const MAX_ARCHIVE = 256 * MiB;
const MAX_EXPORT_DATA = 64 * MiB;
/** One pass entry, decrypted; and how many a store may hold for one import. */
const MAX_PASS_ENTRY = MiB;
const MAX_PASS_FILES = 10_000;
/**
 * What one request carries, leaving room under the host's 4 MiB body limit
 * for JSON's quoting and the names of the chunks after it.
 */
const CHUNK_BYTES = 3 * MiB;
const MAX_ALSO_BYTES = 512 * 1024;

function sourceRefused(why: string): VaultError {
  return new VaultError('VLT-1013', why);
}

/**
 * The bytes of the regular file at `path`, at most `max` of them. Opened
 * without following a symbolic link and without blocking on a FIFO, then
 * checked to be a regular file on the descriptor read from.
 * @throws VaultError VLT-1013
 */
export function readSource(path: string, max: number): Buffer {
  const shown = `"${showable(path)}"`;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') {
      throw sourceRefused(
        `${shown} is a symbolic link: give the file it points to, if you mean it.`,
      );
    }
    if (code === 'ENOENT') throw sourceRefused(`${shown}: no such file.`);
    throw sourceRefused(`${shown} cannot be opened (${code ?? 'error'}).`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw sourceRefused(`${shown} is not a regular file.`);
    if (st.size > max) throw sourceRefused(`${shown} is larger than ${max / MiB} MiB.`);
    // Read to the cap, not to the size: a file that grows while read stops there too.
    const buf = Buffer.alloc(Math.min(max + 1, st.size + 1));
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      // More than fstat said: larger than the cap, or written to while read.
      if (got === buf.length) {
        throw sourceRefused(
          got > max ? `${shown} is larger than ${max / MiB} MiB.` : `${shown} changed while read.`,
        );
      }
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

function formatOf(ctx: CliContext, source: string): Format {
  const named = flagString(ctx, 'from');
  if (named !== undefined) {
    if (!(FORMATS as readonly string[]).includes(named)) {
      throw new VaultError('VLT-1001', `--from takes ${FORMATS.join(', ')}.`);
    }
    return named as Format;
  }
  if (/\.1pux$/i.test(source)) return '1pux';
  if (/\.csv$/i.test(source)) return '1password-csv';
  return 'dotenv';
}

/** The text of `bytes`, refused when it is not UTF-8 (a binary file is not an export). */
function utf8(bytes: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new VaultError('VLT-1011', `${what}: not UTF-8 text.`);
  }
}

async function parse(ctx: CliContext, format: Format, source: string): Promise<Parsed> {
  const prefixFlag = flagString(ctx, 'prefix');
  const prefix = prefixFlag === undefined ? {} : { prefix: prefixFlag };
  if (format !== 'dotenv') {
    for (const f of ['entry', 'field']) {
      if (flagString(ctx, f) !== undefined) {
        throw new VaultError('VLT-1001', `--${f} goes with dotenv imports.`);
      }
    }
  }
  if (format === 'pass') return parsePass(source, prefix);
  if (source === '') throw new VaultError('VLT-1001', 'Name the file to import.');
  if (format === '1pux') {
    const data = zipMember(readSource(source, MAX_ARCHIVE), 'export.data', MAX_EXPORT_DATA);
    if (data === null) throw new VaultError('VLT-1011', 'the 1PUX archive: no export.data.');
    return parse1pux(utf8(data, 'export.data'), prefix);
  }
  const text = utf8(readSource(source, MAX_TEXT), basename(source));
  if (format === '1password-csv') return parse1PasswordCsv(text, prefix);
  const field = checkFieldName(flagString(ctx, 'field') ?? DEFAULT_FIELD);
  const entry = flagString(ctx, 'entry');
  return dotenvEntries(parseDotenv(text), {
    field,
    ...prefix,
    ...(entry === undefined ? {} : { entry }),
  });
}

/** The `.gpg` files under a pass store, by path; dot-directories (.git, .extensions) left out. */
function passFiles(store: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      const st = lstatSync(path);
      if (st.isSymbolicLink()) {
        throw sourceRefused(
          `"${showable(relative(store, path))}" in the pass store is a symbolic link; nothing was imported.`,
        );
      }
      if (st.isDirectory()) walk(path);
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
function decrypt(file: string, shown: string): Promise<Buffer> {
  const args = ['-d', '--quiet', '--yes', '--compress-algo=none', '--no-encrypt-to'];
  args.push('--batch', '--use-agent', '--', file);
  return new Promise((done, fail) => {
    const gpg = spawn('gpg', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    let size = 0;
    gpg.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_PASS_ENTRY) gpg.kill();
      else out.push(c);
    });
    gpg.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        err.code === 'ENOENT'
          ? new VaultError('VLT-1013', 'gpg is not installed: pass stores are gpg-encrypted.')
          : err,
      ),
    );
    gpg.on('close', (code) => {
      const plain = Buffer.concat(out);
      for (const c of out) c.fill(0);
      if (size > MAX_PASS_ENTRY) {
        plain.fill(0);
        fail(sourceRefused(`pass entry "${shown}" is larger than ${MAX_PASS_ENTRY / MiB} MiB.`));
      } else if (code !== 0) {
        plain.fill(0);
        fail(sourceRefused(`gpg could not decrypt pass entry "${shown}" (exit ${code}).`));
      } else done(plain);
    });
  });
}

async function parsePass(source: string, opts: { prefix?: string }): Promise<Parsed> {
  const store = resolve(source);
  try {
    if (!lstatSync(store).isDirectory()) throw new Error('not a directory');
  } catch {
    throw sourceRefused(`"${showable(source)}" is not a pass store (a directory).`);
  }
  const entries: ImportEntry[] = [];
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

/** JSON's size of an entry in a request, closely enough to keep a chunk under the limit. */
function wireBytes(e: ImportEntry): number {
  let n = 64 + 6 * Buffer.byteLength(e.name);
  for (const f of e.fields)
    n += 32 + f.field.length + 4 * Math.ceil(Buffer.byteLength(f.value) / 3);
  return n;
}

/** Entries in requests under CHUNK_BYTES and MAX_IMPORT_ENTRIES each. */
function chunks(entries: readonly ImportEntry[], budget: number): ImportEntry[][] {
  const out: ImportEntry[][] = [];
  let cur: ImportEntry[] = [];
  let size = 0;
  for (const e of entries) {
    const n = wireBytes(e);
    if (cur.length > 0 && (size + n > budget || cur.length >= MAX_IMPORT_ENTRIES)) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(e);
    size += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

function shownName(name: string): string {
  return `"${showable(name)}"`;
}

export const run: Command = async (ctx) => {
  const given = arg(ctx, 'source');
  const format = formatOf(ctx, given);
  const source = format === 'pass' && given === '' ? ctx.paths.passwordStore : given;
  const overwrite = flag(ctx, 'overwrite');
  const skip = flag(ctx, 'skip-existing');
  if (overwrite && skip) {
    throw new VaultError('VLT-1001', '--overwrite and --skip-existing exclude each other.');
  }
  const { entries, skipped } = await parse(ctx, format, source);
  const json = flag(ctx, 'json');

  if (flag(ctx, 'dry-run')) {
    if (json) {
      const plan = entries.map((e) => ({ name: e.name, fields: e.fields.map((f) => f.field) }));
      ctx.stdout.write(JSON.stringify({ entries: plan, passedOver: skipped }) + '\n');
      return 0;
    }
    const rows = entries.map(
      (e) => `  ${shownName(e.name)}  ${e.fields.map((f) => f.field).join(',')}`,
    );
    ctx.stdout.write(
      [
        `would import ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} (${format}); entry and field names only:`,
        ...rows,
        ...(skipped > 0 ? [`passed over: ${skipped} (archived, deleted or without a value)`] : []),
        'Nothing was sent to the vault. Names already in it are refused at import unless --overwrite or --skip-existing.',
      ].join('\n') + '\n',
    );
    return 0;
  }

  if (entries.length === 0) {
    ctx.stderr.write(`vault-cli: nothing to import (${skipped} passed over)\n`);
    return 0;
  }
  const existing = overwrite ? 'overwrite' : skip ? 'skip' : 'refuse';
  const names = entries.map((e) => e.name);
  const alsoBytes = names.reduce((n, s) => n + 8 + 6 * Buffer.byteLength(s), 0);
  if (alsoBytes > MAX_ALSO_BYTES) {
    throw sourceRefused('More entries than one import takes: split the file.');
  }
  const parts = chunks(entries, CHUNK_BYTES - alsoBytes);
  const tier = flagString(ctx, 'tier');
  // One prompt (or the terminal's owner session) for every request of the import.
  const passphrase = await ownerPassphrase(ctx);
  const done = { created: [] as string[], updated: [] as string[], skipped: [] as string[] };
  for (const [i, part] of parts.entries()) {
    const later =
      i === 0
        ? parts
            .slice(1)
            .flat()
            .map((e) => e.name)
        : [];
    try {
      const res = await ctx.call('entry.import', {
        passphrase,
        entries: part.map((e) => ({
          name: e.name,
          fields: e.fields.map((f) => ({
            field: f.field,
            value: Buffer.from(f.value, 'utf8').toString('base64'),
          })),
        })),
        existing,
        also: later,
        ...(tier === undefined ? {} : { tier }),
      });
      done.created.push(...res.created);
      done.updated.push(...res.updated);
      done.skipped.push(...res.skipped);
    } catch (err) {
      if (i === 0 || !(err instanceof VaultError)) throw err;
      const landed = done.created.length + done.updated.length;
      throw new VaultError(
        err.code,
        `Requests 1-${i} of ${parts.length} were imported (${landed} entries); request ${i + 1} and later were not: ${err.message}`,
        { cause: err },
      );
    }
  }
  if (json) {
    ctx.stdout.write(JSON.stringify({ ...done, passedOver: skipped }) + '\n');
    return 0;
  }
  const lines = [
    `vault-cli: imported ${done.created.length + done.updated.length} of ${entries.length} entries: ${done.created.length} created, ${done.updated.length} overwritten, ${done.skipped.length} left as they were`,
    ...done.updated.map((n) => `  overwritten: ${shownName(n)}`),
    ...done.skipped.map((n) => `  already there, left as it was: ${shownName(n)}`),
  ];
  ctx.stderr.write(lines.join('\n') + '\n');
  return 0;
};
