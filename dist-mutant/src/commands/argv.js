/**
 * The argv parser, driven by the command table. Pure: it takes the words after
 * `vault-cli` and returns what to run, or throws VLT-1001 with a message that
 * names the offending word. Here the command is found (and help asked for);
 * parse.ts reads the words after it.
 */
import { COMMANDS, HELP_FLAG, SIDES, VERSION_FLAG, } from './table.js';
import { quote } from '../core/errors.js';
import { closest, didYouMean } from '../core/suggest.js';
import { parseCommand, usage, versionAsked, wantsHelp } from './parse.js';
/** Longest command path that the leading non-flag words name. */
function matchCommand(words, commands) {
    let best = null;
    for (const c of commands) {
        if (c.path.length > words.length)
            continue;
        if (!c.path.every((w, i) => words[i] === w))
            continue;
        if (best === null || c.path.length > best.path.length)
            best = c;
    }
    return best;
}
/**
 * Parses `argv` (without node and the script path).
 * @throws VaultError VLT-1001 for an unknown command or flag, a missing or extra argument.
 */
export function parseArgv(argv, commands = COMMANDS) {
    const version = versionAsked(argv);
    if (version !== null)
        return version;
    if (argv[0] === 'help')
        return helpFor(argv.slice(1), commands);
    const leading = [];
    for (const w of argv) {
        if (w.startsWith('-'))
            break;
        leading.push(w);
    }
    const command = matchCommand(leading, commands);
    if (command === null)
        return noCommand(argv, leading, commands);
    if (wantsHelp(argv))
        return { command, args: {}, flags: {}, help: true, group: command.path };
    return parseCommand(command, argv);
}
/** `help <command>` is `<command> --help`; `help` alone is the top-level help. */
function helpFor(words, commands) {
    const named = words.filter((w) => w !== '--help' && w !== '-h');
    if (named.length === 0)
        return { command: null, args: {}, flags: {}, help: true, group: [] };
    const inv = parseArgv([...named, '--help'], commands);
    if (inv.command !== null && inv.command.path.length < named.length) {
        throw usage(`unknown command ${quote(named.join(' '))}`);
    }
    return inv;
}
/**
 * Leading words that name no command: the top-level help (no words, or only
 * `--help`), a group's help (`vault-cli entry`), or VLT-1001 with the nearest
 * command when one is near.
 */
function noCommand(argv, leading, commands) {
    if (argv.length === 0 || (leading.length === 0 && wantsHelp(argv))) {
        return { command: null, args: {}, flags: {}, help: true, group: [] };
    }
    const group = leading.slice(0, 1);
    const first = leading[0];
    if (first !== undefined && commands.some((c) => c.path[0] === first)) {
        if (leading.length === 1)
            return { command: null, args: {}, flags: {}, help: true, group };
        const subs = commands.filter((c) => c.path[0] === first).map((c) => c.path[1] ?? '');
        const near = closest(leading[1] ?? '', subs);
        const hint = near === null ? '' : ` (did you mean ${quote(`${first} ${near}`)}?)`;
        throw usage(`unknown command ${quote(leading.slice(0, 2).join(' '))}${hint}`);
    }
    const tops = [...new Set(commands.map((c) => c.path[0] ?? ''))];
    throw usage(`unknown command ${quote(first ?? argv[0] ?? '')}${didYouMean(first ?? '', tops)}`);
}
function metavar(f) {
    if (f.value === undefined)
        return '';
    return ` ${f.metavar ?? (f.value === 'count' ? '<n>' : '<value>')}`;
}
/** Two columns, the first padded to the widest cell (at most `cap`), two spaces at least. */
function columns(rows, width = Math.min(34, Math.max(0, ...rows.map(([a]) => a.length)))) {
    return rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`.trimEnd());
}
function flagRows(flags) {
    return flags.map((f) => [
        `--${f.name}${metavar(f)}`,
        f.summary + (f.repeat === true ? ' (repeatable)' : ''),
    ]);
}
function argWord(a) {
    const word = (a.optional === true ? `[${a.name}]` : `<${a.name}>`) + (a.rest === true ? '...' : '');
    return a.afterDashes === true ? `-- ${word}` : word;
}
function synopsis(c) {
    const options = c.flags.length > 0 ? ['[options]'] : [];
    return [...c.path, ...options, ...c.args.map(argWord)].join(' ');
}
function commandRows(commands) {
    return commands.map((c) => [
        [...c.path, ...c.args.filter((a) => a.afterDashes !== true).map(argWord)].join(' '),
        c.summary,
    ]);
}
const SIDE_NOTE = {
    owner: 'An owner command: it asks for the vault passphrase (or reads VAULT_PASSPHRASE_FILE); refused inside `vault-cli run`.',
    agent: 'An agent command: it acts with the token `vault-cli init` stored (or VAULT_TOKEN).',
    local: '',
};
/** Help text for the whole tool, a group (`entry`) or one command. */
export function helpText(group, commands = COMMANDS) {
    const exact = commands.find((c) => c.path.length === group.length && c.path.every((w, i) => group[i] === w));
    if (exact !== undefined) {
        const lines = [`usage: vault-cli ${synopsis(exact)}`, '', exact.summary];
        if (exact.notes !== undefined && exact.notes.length > 0)
            lines.push('', ...exact.notes);
        if (exact.args.length > 0) {
            lines.push('', 'arguments:', ...columns(exact.args.map((a) => [argWord(a), a.summary])));
        }
        lines.push('', 'options:', ...columns(flagRows([...exact.flags, HELP_FLAG])));
        const sub = commands.filter((c) => c !== exact && c.path[0] === exact.path[0]);
        if (group.length === 1 && sub.length > 0) {
            lines.push('', 'commands:', ...columns(commandRows(sub)));
        }
        lines.push('', 'examples:', ...exact.examples.map((e) => `  ${e}`));
        const side = SIDE_NOTE[exact.side];
        if (side !== '')
            lines.push('', side);
        return lines.join('\n') + '\n';
    }
    if (group.length > 0) {
        const listed = commands.filter((c) => c.path[0] === group[0]);
        return ([
            `usage: vault-cli ${group[0]} <command> [options]`,
            '',
            'commands:',
            ...columns(commandRows(listed)),
            '',
            `Run vault-cli help ${group[0]} <command> for its options and examples.`,
        ].join('\n') + '\n');
    }
    const lines = [
        'vault-cli: a credential vault for AI agents and developers',
        '',
        'usage: vault-cli <command> [options]',
        '       vault-cli help <command>',
    ];
    // One width for every group, so the summaries line up down the page.
    const width = Math.min(34, Math.max(...commandRows(commands).map(([a]) => a.length)));
    for (const { side, title } of SIDES) {
        const listed = commands.filter((c) => c.side === side);
        if (listed.length > 0)
            lines.push('', `${title}:`, ...columns(commandRows(listed), width));
    }
    lines.push('', 'options:', ...columns(flagRows([HELP_FLAG, VERSION_FLAG])), '', 'Run vault-cli help <command> (or vault-cli <command> --help) for its options and examples.');
    return lines.join('\n') + '\n';
}
