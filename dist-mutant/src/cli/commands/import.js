/**
 * `vault-cli import`: entries from a `.env` file, a 1Password export (1PUX
 * or CSV) or a `pass` store, created with one owner unlock.
 *
 * Reading and parsing the source is src/import/ (sources.ts: a symbolic link
 * or anything but a regular file refused, reads capped; the parsers name
 * lines, never their text); this file is the command's edge. Since the file
 * may have been written by an agent, names are checked for control and
 * invisible characters and shown neutralised; an entry that exists is never replaced unless the
 * owner says --overwrite. `--dry-run` reads and parses only: no vault, no
 * passphrase, no value printed.
 *
 * Values travel as JavaScript strings (JSON and text parsing give nothing
 * else), so they are not wiped; they live as long as this process.
 */
import { VaultError } from '../../core/errors.js';
import { showable } from '../../core/names.js';
import { CHUNK_BYTES, MAX_ALSO_BYTES, chunks } from '../../import/batches.js';
import { FORMATS, parseSource } from '../../import/sources.js';
import { arg, flag, flagString } from '../context.js';
import { ownerPassphrase } from '../owner.js';
function formatOf(ctx, source) {
    const named = flagString(ctx, 'from');
    if (named !== undefined) {
        if (!FORMATS.includes(named)) {
            throw new VaultError('VLT-1001', `--from takes ${FORMATS.join(', ')}.`);
        }
        return named;
    }
    if (/\.1pux$/i.test(source))
        return '1pux';
    if (/\.csv$/i.test(source))
        return '1password-csv';
    return 'dotenv';
}
function shownName(name) {
    return `"${showable(name)}"`;
}
/**
 * A prefix with `/` made names a reference cannot spell plainly: a reference
 * splits entry and field at its first `/`, so `vault://myapp/GitHub/password`
 * names entry `myapp` (refused as not in scope, a slot taken), and the entry
 * `myapp/GitHub` is `vault://myapp%2FGitHub/password`. Refused, saying why
 * and what to use, before anything is read (issue 38).
 */
function slashPrefix(prefix) {
    const plain = prefix.replaceAll('/', '-');
    return new VaultError('VLT-1002', `A prefix may not hold "/": a reference splits entry and field at the first "/", so ` +
        `vault://${prefix}GitHub/password would not name the entry ${JSON.stringify(`${prefix}GitHub`)}. ` +
        `Use --prefix ${JSON.stringify(plain)} (or a "." or ":" in place of the "/").`);
}
export const run = async (ctx) => {
    const given = arg(ctx, 'source');
    const format = formatOf(ctx, given);
    const source = format === 'pass' && given === '' ? ctx.paths.passwordStore : given;
    const existing = existingOf(ctx);
    const { entries, skipped } = await parseSource(format, source, sourceOptions(ctx));
    if (flag(ctx, 'dry-run'))
        return dryRun(ctx, format, entries, skipped);
    if (entries.length === 0) {
        ctx.stderr.write(`vault-cli: nothing to import (${skipped} passed over)\n`);
        return 0;
    }
    const done = await send(ctx, entries, existing);
    if (flag(ctx, 'json')) {
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
function existingOf(ctx) {
    const overwrite = flag(ctx, 'overwrite');
    const skip = flag(ctx, 'skip-existing');
    if (overwrite && skip) {
        throw new VaultError('VLT-1001', '--overwrite and --skip-existing exclude each other.');
    }
    return overwrite ? 'overwrite' : skip ? 'skip' : 'refuse';
}
/** --prefix, --entry and --field, those given. */
function sourceOptions(ctx) {
    const prefix = flagString(ctx, 'prefix');
    if (prefix?.includes('/') === true)
        throw slashPrefix(prefix);
    const entry = flagString(ctx, 'entry');
    const field = flagString(ctx, 'field');
    return {
        ...(prefix === undefined ? {} : { prefix }),
        ...(entry === undefined ? {} : { entry }),
        ...(field === undefined ? {} : { field }),
    };
}
/** `--dry-run`: what would be imported, by entry and field names only. */
function dryRun(ctx, format, entries, skipped) {
    if (flag(ctx, 'json')) {
        const plan = entries.map((e) => ({ name: e.name, fields: e.fields.map((f) => f.field) }));
        ctx.stdout.write(JSON.stringify({ entries: plan, passedOver: skipped }) + '\n');
        return 0;
    }
    const rows = entries.map((e) => `  ${shownName(e.name)}  ${e.fields.map((f) => f.field).join(',')}`);
    ctx.stdout.write([
        `would import ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} (${format}); entry and field names only:`,
        ...rows,
        ...(skipped > 0 ? [`passed over: ${skipped} (archived, deleted or without a value)`] : []),
        'Nothing was sent to the vault. Names already in it are refused at import unless --overwrite or --skip-existing.',
    ].join('\n') + '\n');
    return 0;
}
/**
 * The entries to the host, in as many requests as their size needs, under one
 * owner unlock. The first request names every later entry too (`also`): unless
 * the owner said --overwrite or --skip-existing, a name already in the vault
 * refuses the import before anything lands.
 * @throws VaultError VLT-1013 (more names than one import takes); a later
 * request's failure, saying which requests were imported
 */
async function send(ctx, entries, existing) {
    const names = entries.map((e) => e.name);
    const alsoBytes = names.reduce((n, s) => n + 8 + 6 * Buffer.byteLength(s), 0);
    if (alsoBytes > MAX_ALSO_BYTES) {
        throw new VaultError('VLT-1013', 'More entries than one import takes: split the file.');
    }
    const parts = chunks(entries, CHUNK_BYTES - alsoBytes);
    const tier = flagString(ctx, 'tier');
    // One prompt (or the terminal's owner session) for every request of the import.
    const passphrase = await ownerPassphrase(ctx);
    const done = { created: [], updated: [], skipped: [] };
    for (const [i, part] of parts.entries()) {
        const later = i === 0
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
        }
        catch (err) {
            if (i === 0 || !(err instanceof VaultError))
                throw err;
            const landed = done.created.length + done.updated.length;
            throw new VaultError(err.code, `Requests 1-${i} of ${parts.length} were imported (${landed} entries); request ${i + 1} and later were not: ${err.message}`, { cause: err });
        }
    }
    return done;
}
