/** `vault-cli agent add|ls|show|scope|limits|group|lock|unlock|revoke`: the owner's agents. */
import { formatTime } from '../../core/audit.js';
import { VaultError, isErrorCode } from '../../core/errors.js';
import { valuesLimit } from '../../core/policy.js';
import { arg, flag, flagCount, flagList, flagString, subcommand, } from '../context.js';
import { ownerPassphrase, table } from '../owner.js';
function print(ctx, a) {
    ctx.stdout.write(flag(ctx, 'json') ? JSON.stringify(a) + '\n' : showText(a));
    return 0;
}
/** Every `agent` subcommand (a table). */
const SUBCOMMANDS = {
    add,
    ls: (ctx, _name, passphrase) => ls(ctx, passphrase),
    show: async (ctx, name, passphrase) => print(ctx, await ctx.call('agent.show', { passphrase, name })),
    scope,
    limits,
    caveats,
    lock: async (ctx, name, passphrase) => print(ctx, await ctx.call('agent.lock', { passphrase, name })),
    group,
    // The passphrase, then the hardware key: an unlock is the owner's, never the agent's own.
    unlock,
    revoke,
};
export const run = async (ctx) => {
    const name = arg(ctx, 'name');
    const passphrase = await ownerPassphrase(ctx);
    return subcommand(ctx, SUBCOMMANDS)(ctx, name, passphrase);
};
/** --per-minute, --per-hour and --values-per-minute, those given. */
function limitFlags(ctx) {
    return {
        perMinute: flagCount(ctx, 'per-minute'),
        perHour: flagCount(ctx, 'per-hour'),
        valuesPerMinute: flagCount(ctx, 'values-per-minute'),
    };
}
async function add(ctx, name, passphrase) {
    const kind = flagString(ctx, 'kind') ?? 'ai';
    if (kind !== 'ai' && kind !== 'script')
        throw new VaultError('VLT-1002', 'Agent kinds are ai and script.');
    const { perMinute, perHour, valuesPerMinute } = limitFlags(ctx);
    const { token } = await ctx.call('agent.add', {
        passphrase,
        name,
        kind,
        scope: flagList(ctx, 'scope'),
        limits: {
            ...(perMinute === undefined ? {} : { perMinute }),
            ...(perHour === undefined ? {} : { perHour }),
            ...(valuesPerMinute === undefined ? {} : { valuesPerMinute }),
        },
    });
    // The token alone on stdout, so `TOKEN=$(vault-cli agent add ...)` works; shown once.
    ctx.stdout.write(token + '\n');
    // On a terminal the owner reads it: say what it is for (on stderr, and never the token).
    if (ctx.stdout.isTTY) {
        ctx.stderr.write(`vault-cli: the token above is shown once: give it to ${name}, which stores it with \`vault-cli init\` (typed at its prompt or piped in); \`vault-cli agent revoke ${name}\` if it leaks.\n`);
    }
    return 0;
}
async function ls(ctx, passphrase) {
    const { agents } = await ctx.call('agent.ls', { passphrase });
    if (flag(ctx, 'json')) {
        ctx.stdout.write(JSON.stringify(agents) + '\n');
        return 0;
    }
    ctx.stdout.write(table([
        ['NAME', 'KIND', 'STATE', 'MINUTE', 'HOUR', 'SCOPE'],
        ...agents.map((a) => [
            a.name,
            a.kind,
            a.state,
            `${a.usage.minute}/${a.limits.perMinute}`,
            `${a.usage.hour}/${a.limits.perHour}`,
            String(a.scope.length),
        ]),
    ]));
    return 0;
}
async function scope(ctx, name, passphrase) {
    const add = flagList(ctx, 'add');
    const rm = flagList(ctx, 'rm');
    if (add.length + rm.length === 0)
        throw new VaultError('VLT-1001', 'Give --add <entry> or --rm <entry>.');
    return print(ctx, await ctx.call('agent.scope', { passphrase, name, add, rm }));
}
async function limits(ctx, name, passphrase) {
    const { perMinute, perHour, valuesPerMinute } = limitFlags(ctx);
    if (perMinute === undefined && perHour === undefined && valuesPerMinute === undefined) {
        throw new VaultError('VLT-1001', 'Give --per-minute <n>, --per-hour <n> or --values-per-minute <n>.');
    }
    return print(ctx, await ctx.call('agent.limits', { passphrase, name, perMinute, perHour, valuesPerMinute }));
}
async function caveats(ctx, name, passphrase) {
    const given = ctx.inv.args.rule;
    const rules = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
    const clear = flag(ctx, 'clear');
    if (clear === rules.length > 0)
        throw new VaultError('VLT-1001', 'Give one or more rules, or --clear (not both).');
    const entry = arg(ctx, 'entry');
    return print(ctx, await ctx.call('agent.caveats', { passphrase, name, entry, rules, clear }));
}
async function group(ctx, name, passphrase) {
    const group = arg(ctx, 'group');
    const rest = ctx.inv.args['entries'];
    const entries = Array.isArray(rest) ? rest : [];
    return print(ctx, await ctx.call('agent.group', { passphrase, name, group, entries }));
}
/**
 * Revokes by name or --id. The agent is revoked even when a rotation after it
 * fails: that is said first, then the entries left unrotated, with a non-zero
 * exit (the code of the first failure).
 */
async function revoke(ctx, name, passphrase) {
    const id = flagString(ctx, 'id');
    if ((name === '') === (id === undefined))
        throw new VaultError('VLT-1001', 'Give the agent’s name, or --id <id> (not both).');
    const { unrotated } = await ctx.call('agent.revoke', {
        passphrase,
        ...(id === undefined ? { name } : { id }),
    });
    const who = id === undefined ? name : `with id ${id}`;
    const [first] = unrotated;
    if (first === undefined) {
        ctx.stderr.write(`vault-cli: revoked agent ${who}\n`);
        return 0;
    }
    throw new VaultError(isErrorCode(first.code) ? first.code : 'VLT-3003', `Agent ${who} is revoked, but ${unrotated.length === 1 ? 'an entry it held was' : 'entries it held were'} not rotated: ${unrotated.map((u) => `${JSON.stringify(u.entry)} (${u.code})`).join(', ')}; \`vault-cli vault check\` says why, and \`vault-cli entry set\` gives an entry a new key.`);
}
async function unlock(ctx, name, passphrase) {
    const [{ unlockWithKey }, { ceremonyHooks }] = await Promise.all([
        import('../../webauthn/ceremony.js'),
        import('../ceremony.js'),
    ]);
    const out = await unlockWithKey(name, passphrase, ceremonyHooks(ctx, `unlock agent ${name}`));
    ctx.stderr.write(out.status === 'unlocked'
        ? `vault-cli: unlocked agent ${name}\n`
        : `vault-cli: agent ${name} is not locked\n`);
    return 0;
}
function showText(a) {
    return ([
        `name:        ${a.name}`,
        `kind:        ${a.kind}`,
        `state:       ${a.state}${a.lockedAt === null ? '' : ` since ${formatTime(a.lockedAt)}`}`,
        `this minute: ${a.usage.minute} of ${a.limits.perMinute} distinct credentials`,
        `this hour:   ${a.usage.hour} of ${a.limits.perHour} distinct credentials`,
        `values:      ${a.valuesLeft} of ${valuesLimit(a.limits)} a minute left (re-reads included)`,
        `violations:  ${a.violations.length === 0 ? 'none in the last 2 hours' : a.violations.map(formatTime).join(', ')}`,
        `created:     ${formatTime(a.created)}`,
        'scope:',
        ...a.scope.map((e) => `  ${e}`),
        ...caveatLines(a),
        ...Object.entries(a.limits.groups ?? {}).map(([g, names]) => `group ${g} (one credential a minute): ${names.join(', ')}`),
    ].join('\n') + '\n');
}
/** The request caveats, per entry: the requests the proxy may fill it into. */
function caveatLines(a) {
    const all = a.caveats ?? [];
    if (all.length === 0)
        return [];
    return [
        'caveats (the only requests the proxy fills these into):',
        ...all.flatMap((c) => [`  ${c.entry}:`, ...c.rules.map((r) => `    ${r}`)]),
    ];
}
