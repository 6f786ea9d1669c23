/** `vault-cli entry set|rm|show|ls|hosts`: the owner's entries. Values never appear in output. */
import { VaultError } from '../../core/errors.js';
import { DEFAULT_FIELD } from '../../core/names.js';
import { formatTime } from '../../core/audit.js';
import { arg, flag, flagString, subcommand } from '../context.js';
import { secretInput } from '../io.js';
import { ownerPassphrase, table } from '../owner.js';
/** Every `entry` subcommand (a table), each given the entry named on the line. */
const SUBCOMMANDS = {
    set,
    rm,
    show: (ctx, entry) => (flag(ctx, 'reveal') ? reveal(ctx, entry) : show(ctx, entry)),
    ls,
    exposed,
    hosts,
};
export const run = async (ctx) => subcommand(ctx, SUBCOMMANDS)(ctx, arg(ctx, 'entry'));
async function set(ctx, entry) {
    const field = flagString(ctx, 'field') ?? DEFAULT_FIELD;
    // Passphrase first: a prompt for it must not swallow the value piped on stdin.
    const pass = await ownerPassphrase(ctx);
    const value = await secretInput(ctx.stdin, `Value for ${entry}/${field}`, true);
    const tier = flagString(ctx, 'tier');
    const res = await ctx.call('entry.set', {
        passphrase: pass,
        entry,
        field,
        value: value.expose().toString('base64'),
        ...(tier === undefined ? {} : { tier }),
    });
    value.wipe();
    ctx.stderr.write(`vault-cli: ${res.created ? 'created' : 'updated'} ${JSON.stringify(entry)} field ${field} (version ${res.version})\n`);
    return 0;
}
async function rm(ctx, entry) {
    await ctx.call('entry.rm', { passphrase: await ownerPassphrase(ctx), entry });
    ctx.stderr.write(`vault-cli: removed ${JSON.stringify(entry)}\n`);
    return 0;
}
/** `entry show --reveal`: the value alone. */
async function reveal(ctx, entry) {
    if (flag(ctx, 'json'))
        throw new VaultError('VLT-1001', '--reveal prints the value alone.');
    // The owner's choice, to any stdout: the pipe-only rule is for agents (docs/pipes.md).
    const res = await ctx.call('entry.reveal', {
        passphrase: await ownerPassphrase(ctx),
        entry,
        field: flagString(ctx, 'field') ?? DEFAULT_FIELD,
    });
    const value = Buffer.from(res.value, 'base64');
    ctx.stdout.write(Buffer.concat([value, Buffer.from('\n')]));
    value.fill(0);
    return 0;
}
async function show(ctx, entry) {
    if (flagString(ctx, 'field') !== undefined) {
        throw new VaultError('VLT-1001', '--field goes with --reveal.');
    }
    const e = await ctx.call('entry.show', { passphrase: await ownerPassphrase(ctx), entry });
    ctx.stdout.write(flag(ctx, 'json') ? JSON.stringify(e) + '\n' : showText(e));
    return 0;
}
async function ls(ctx) {
    const { entries } = await ctx.call('entry.ls', { passphrase: await ownerPassphrase(ctx) });
    if (flag(ctx, 'json')) {
        ctx.stdout.write(JSON.stringify(entries) + '\n');
    }
    else {
        ctx.stdout.write(table([
            ['NAME', 'TIER', 'FIELDS'],
            // An exposed field (found by a sweep, not yet set anew) is marked `!`.
            ...entries.map((e) => [
                e.name,
                e.tier,
                e.fields.map((f) => f.name + (f.exposed === undefined ? '' : '!')).join(','),
            ]),
        ]));
    }
    return 0;
}
/** The fields a sweep found exposed and not set anew since. */
async function exposed(ctx) {
    const { entries } = await ctx.call('entry.ls', { passphrase: await ownerPassphrase(ctx) });
    const exposed = entries.flatMap((e) => e.fields.flatMap((f) => f.exposed === undefined ? [] : [{ entry: e.name, field: f.name, exposed: f.exposed }]));
    if (flag(ctx, 'json'))
        ctx.stdout.write(JSON.stringify(exposed) + '\n');
    else if (exposed.length > 0) {
        ctx.stdout.write(table([
            ['ENTRY', 'FIELD', 'FOUND'],
            ...exposed.map((x) => [x.entry, x.field, formatTime(x.exposed)]),
        ]));
        ctx.stderr.write('vault-cli: rotate each with `vault-cli entry set <entry> --field <field>`\n');
    }
    return 0;
}
async function hosts(ctx, entry) {
    const hosts = ctx.inv.args.host;
    const list = Array.isArray(hosts) ? hosts : typeof hosts === 'string' ? [hosts] : [];
    const clear = flag(ctx, 'clear');
    if (clear === list.length > 0) {
        throw new VaultError('VLT-1001', 'Name one or more hosts, or --clear (not both).');
    }
    const e = await ctx.call('entry.hosts', {
        passphrase: await ownerPassphrase(ctx),
        entry,
        hosts: list,
    });
    ctx.stderr.write(`vault-cli: ${JSON.stringify(entry)} may go to ${e.hosts.length === 0 ? 'any host' : e.hosts.join(' ')}\n`);
    return 0;
}
function showText(e) {
    const lines = [
        `name:    ${e.name}`,
        `tier:    ${e.tier}`,
        `created: ${formatTime(e.created)}`,
        `hosts:   ${e.hosts.length === 0 ? '(any)' : e.hosts.join(' ')}`,
        'fields:',
        ...e.fields.map((f) => `  ${f.name}  version ${f.version}  updated ${formatTime(f.updated)}` +
            (f.exposed === undefined ? '' : `  EXPOSED ${formatTime(f.exposed)} (rotate it)`)),
    ];
    return lines.join('\n') + '\n';
}
