/**
 * Shell completion scripts, generated from the command table the parser uses
 * (src/commands/table.ts), so they cannot drift; completions/ holds their
 * output and a test regenerates it. Pure: the table in, the script's text out.
 *
 * Entry and agent names are the one thing a script asks vault-cli for, and
 * only as the owner: on a terminal with an owner session (`vault-cli unlock`),
 * with VAULT_NO_PROMPT=1 so a terminal without one is not asked for the
 * passphrase in the middle of a completion. An agent's token never lists entries.
 */
import { COMMANDS, COMMON_FIELDS, HELP_FLAG, topLevelWords, } from './table.js';
const HEADER = '# Generated from src/commands/table.ts by `vault-cli completion`; do not edit.';
/** Single-quoted for POSIX shells and fish (no expansion inside). */
function sq(s) {
    return `'${s.replace(/'/g, `'\\''`)}'`;
}
function fishQuote(s) {
    return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
function kindOf(def) {
    if (def.choices !== undefined)
        return { kind: 'words', words: def.choices };
    switch (def.complete) {
        case 'field':
            return { kind: 'words', words: COMMON_FIELDS };
        case 'file':
            return { kind: 'file' };
        case 'entry':
            return { kind: 'entry' };
        case 'agent':
            return { kind: 'agent' };
        default:
            return { kind: 'none' };
    }
}
/** The words after `group`: its subcommands, and the choices of the group command's own first argument. */
function subcommands(group, commands) {
    const subs = commands
        .filter((c) => c.path.length > 1 && c.path[0] === group)
        .map((c) => c.path[1]);
    if (subs.length === 0)
        return subs;
    const own = commands.find((c) => c.path.length === 1 && c.path[0] === group);
    return [...subs, ...(own?.args[0]?.choices ?? [])];
}
function bashKind(k) {
    switch (k.kind) {
        case 'words':
            return `__vault_cli_words ${sq(k.words.join(' '))}`;
        case 'file':
            return '__vault_cli_files';
        case 'entry':
            return '__vault_cli_names entry';
        case 'agent':
            return '__vault_cli_names agent';
        case 'none':
            return ':';
    }
}
/** The bash helpers every completion calls: word lists, files, and the owner's names. */
const BASH_HELPERS = [
    '__vault_cli_words() {',
    '  local w',
    '  while IFS= read -r w; do COMPREPLY+=("$w"); done < <(compgen -W "$1" -- "$cur")',
    '}',
    '__vault_cli_files() {',
    '  compopt -o filenames 2>/dev/null',
    "  local IFS=$'\\n'",
    '  COMPREPLY+=($(compgen -f -- "$cur"))',
    '}',
    '# Names only for the owner on an unlocked terminal (vault-cli unlock): never a prompt.',
    '__vault_cli_names() {',
    '  local names n want="$cur" quoted=',
    '  names=$(VAULT_NO_PROMPT=1 command vault-cli "$1" ls --json 2>/dev/null </dev/null | node -e \'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{for(const e of JSON.parse(s))console.log(e.name)}catch{}})\' 2>/dev/null)',
    '  # Names hold spaces ("Stripe Prod"): match what the word means so far, and insert',
    '  # a name quoted for the shell, unless the word opened a quote (readline closes it).',
    '  case "$want" in',
    "    \\'*) quoted=1; want=${want#\\'} ;;",
    '    \\"*) quoted=1; want=${want#\\"} ;;',
    '    *) want=${want//\\\\/} ;;',
    '  esac',
    '  while IFS= read -r n; do',
    '    [[ -n "$n" && "$n" == "$want"* ]] || continue',
    '    if [[ -n "$quoted" ]]; then COMPREPLY+=("$n"); else COMPREPLY+=("$(printf %q "$n")"); fi',
    '  done <<<"$names"',
    '}',
];
/** `__vault_cli_command`: the command a line names, the longest path of the table its leading words match. */
function bashCommand(commands) {
    const L = [
        '# The command a line names: the longest path of the table its leading words match.',
        '__vault_cli_command() {',
        '  case "$1 $2" in',
    ];
    for (const c of commands.filter((c) => c.path.length === 2)) {
        L.push(`    ${sq(c.path.join(' '))}) echo ${sq(c.path.join(' '))}; return ;;`);
    }
    L.push('  esac', '  case "$1" in');
    for (const c of commands.filter((c) => c.path.length === 1)) {
        L.push(`    ${sq(c.path[0])}) echo ${sq(c.path[0])} ;;`);
    }
    L.push('  esac', '}');
    return L;
}
/** `_vault_cli` up to the command: the words that name it, completed from the table's groups. */
function bashLead(commands) {
    const groups = topLevelWords(commands);
    const L = [
        '_vault_cli() {',
        '  # Under zsh (bashcompinit), arrays count from 0 as in bash.',
        '  [[ -n "${ZSH_VERSION:-}" ]] && setopt localoptions ksharrays',
        '  COMPREPLY=()',
        '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '  local -a lead=()',
        '  local i w',
        '  for ((i = 1; i < COMP_CWORD; i++)); do',
        '    w="${COMP_WORDS[i]}"',
        '    [[ "$w" == -* ]] && break',
        '    lead+=("$w")',
        '  done',
        '  if [[ ${#lead[@]} -eq $((COMP_CWORD - 1)) && "$cur" != -* ]]; then',
        '    case ${#lead[@]} in',
        `      0) __vault_cli_words ${sq(groups.join(' '))}; return 0 ;;`,
        '      1)',
        '        case "${lead[0]}" in',
    ];
    for (const g of groups) {
        const subs = subcommands(g, commands);
        if (subs.length > 0) {
            L.push(`          ${sq(g)}) __vault_cli_words ${sq(subs.join(' '))}; return 0 ;;`);
        }
    }
    L.push('        esac ;;', '    esac', '  fi');
    return L;
}
/** `_vault_cli` on a flag: the value a flag waits for, or the flags of the command. */
function bashFlags(commands) {
    const L = [
        '  local cmd',
        '  cmd=$(__vault_cli_command "${lead[@]:0:2}")',
        '  [[ -n "$cmd" ]] || return 0',
        '  local -a words=(${cmd})',
        '  local n=${#words[@]}',
        '  # A flag waiting for its value.',
        '  if [[ "$prev" == --* && $COMP_CWORD -gt $n ]]; then',
        '    case "$cmd $prev" in',
    ];
    for (const c of commands) {
        for (const f of c.flags.filter((f) => f.value !== undefined)) {
            L.push(`      ${sq(`${c.path.join(' ')} --${f.name}`)}) ${bashKind(kindOf(f))}; return 0 ;;`);
        }
    }
    L.push('    esac', '  fi', '  if [[ "$cur" == -* ]]; then', '    case "$cmd" in');
    for (const c of commands) {
        const flags = [...c.flags, HELP_FLAG].map((f) => `--${f.name}`).join(' ');
        L.push(`      ${sq(c.path.join(' '))}) __vault_cli_words ${sq(flags)} ;;`);
    }
    L.push('    esac', '    return 0', '  fi');
    return L;
}
/** `_vault_cli` on an argument: its position (flags and their values left out), then its kind. */
function bashArgs(commands) {
    const L = [
        '  # Which argument this word is: words after the command, less flags and their values.',
        '  local pos=0 valued',
        '  case "$cmd" in',
    ];
    for (const c of commands) {
        const valued = c.flags.filter((f) => f.value !== undefined).map((f) => `--${f.name}`);
        L.push(`    ${sq(c.path.join(' '))}) valued=${sq(' ' + valued.join(' ') + ' ')} ;;`);
    }
    L.push('  esac', '  for ((i = n + 1; i < COMP_CWORD; i++)); do', '    w="${COMP_WORDS[i]}"', '    if [[ "$w" == --* ]]; then', '      [[ "$valued" == *" $w "* ]] && ((i++))', '    else', '      ((pos++))', '    fi', '  done', '  case "$cmd $pos" in');
    for (const c of commands) {
        c.args.forEach((a, i) => {
            if (a.rest === true)
                return;
            L.push(`    ${sq(`${c.path.join(' ')} ${i}`)}) ${bashKind(kindOf(a))} ;;`);
        });
    }
    L.push('  esac', '  return 0', '}');
    return L;
}
/** The bash function; zsh runs the same one through bashcompinit. */
function bashBody(commands) {
    const L = [
        ...BASH_HELPERS,
        ...bashCommand(commands),
        ...bashLead(commands),
        ...bashFlags(commands),
        ...bashArgs(commands),
    ];
    return L.join('\n') + '\n';
}
function bashScript(commands) {
    return `${HEADER}\n# bash: source it, or install it as vault-cli in bash-completion's completions directory.\n${bashBody(commands)}complete -F _vault_cli vault-cli\n`;
}
function zshScript(commands) {
    return `#compdef vault-cli\n${HEADER}\n# zsh: put this file, named _vault-cli, in a directory of $fpath before compinit,\n# or source it. It runs the bash completion function through bashcompinit.\nautoload -U +X bashcompinit && bashcompinit\n${bashBody(commands)}complete -F _vault_cli vault-cli\n# Autoloaded from $fpath, this file runs on the first TAB: answer that one too.\nif [[ "\${funcstack[1]:-}" == _vault-cli ]]; then _bash_complete -F _vault_cli; fi\n`;
}
/** The fish functions every completion calls: the command a line names, and the owner's names. */
const FISH_HELPERS = [
    'function __vault_cli_is',
    '    set -l c (__vault_cli_command)',
    '    test "$c" = "$argv"',
    'end',
    '# True while the line is still naming the command: leading words only, as many as given.',
    'function __vault_cli_lead',
    '    set -l words (commandline -opc)',
    '    set -e words[1]',
    '    for w in $words',
    "        string match -q -- '-*' $w; and return 1",
    '    end',
    '    test (count $words) -eq $argv[1]; or return 1',
    '    test $argv[1] -eq 0; or test "$words[1]" = "$argv[2]"',
    'end',
    '# Names only for the owner on an unlocked terminal (vault-cli unlock): never a prompt.',
    'function __vault_cli_names',
    '    env VAULT_NO_PROMPT=1 vault-cli $argv[1] ls --json 2>/dev/null </dev/null | node -e \'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{try{for(const e of JSON.parse(s))console.log(e.name)}catch{}})\' 2>/dev/null',
    'end',
    '',
    'complete -c vault-cli -f',
];
/** `__vault_cli_command`: the longest path of the table the line's leading words match. */
function fishCommand(commands) {
    const paths = commands.map((c) => c.path.join(' '));
    return [
        '# The command the line names: the longest path of the table its leading words match.',
        'function __vault_cli_command',
        '    set -l words (commandline -opc)',
        '    set -e words[1]',
        '    set -l lead',
        '    for w in $words',
        "        string match -q -- '-*' $w; and break",
        '        set -a lead $w',
        '    end',
        `    set -l known ${paths.map(fishQuote).join(' ')}`,
        '    if test (count $lead) -ge 2; and contains -- "$lead[1] $lead[2]" $known',
        '        echo "$lead[1] $lead[2]"',
        '    else if test (count $lead) -ge 1; and contains -- "$lead[1]" $known',
        '        echo "$lead[1]"',
        '    end',
        'end',
    ];
}
/** The words that name a command: the groups, then each group's subcommands, with their summaries. */
function fishWords(commands) {
    const L = [];
    const summaryOf = (path) => commands.find((c) => c.path.join(' ') === path.join(' '))?.summary ?? `${path[0]} commands`;
    for (const g of topLevelWords(commands)) {
        L.push(`complete -c vault-cli -n '__vault_cli_lead 0' -a ${fishQuote(g)} -d ${fishQuote(summaryOf([g]))}`);
        for (const s of subcommands(g, commands)) {
            L.push(`complete -c vault-cli -n ${fishQuote(`__vault_cli_lead 1 ${g}`)} -a ${fishQuote(s)} -d ${fishQuote(summaryOf([g, s]))}`);
        }
    }
    return L;
}
function fishKind(k) {
    switch (k.kind) {
        case 'words':
            return ` -a ${fishQuote(k.words.join(' '))}`;
        case 'file':
            return ' -F';
        case 'entry':
            return " -a '(__vault_cli_names entry)'";
        case 'agent':
            return " -a '(__vault_cli_names agent)'";
        case 'none':
            return '';
    }
}
/** Each command's flags (with what their values are) and its first argument's kind. */
function fishOptions(commands) {
    const L = [];
    for (const c of commands) {
        const cond = `-n ${fishQuote(`__vault_cli_is ${c.path.join(' ')}`)}`;
        for (const f of [...c.flags, HELP_FLAG]) {
            // -x: a value, and no files unless the kind asks for them (-F).
            const k = kindOf(f);
            const value = f.value === undefined ? '' : k.kind === 'file' ? ' -r -F' : ` -x${fishKind(k)}`;
            L.push(`complete -c vault-cli ${cond} -l ${f.name}${value} -d ${fishQuote(f.summary)}`);
        }
        // Arguments: fish cannot count positions here, so the first argument's kind applies.
        const first = c.args[0];
        if (first !== undefined) {
            const k = fishKind(kindOf(first));
            if (k !== '')
                L.push(`complete -c vault-cli ${cond}${k}`);
        }
    }
    return L;
}
function fishScript(commands) {
    const L = [
        HEADER,
        '# fish: install as ~/.config/fish/completions/vault-cli.fish.',
        '',
        ...fishCommand(commands),
        ...FISH_HELPERS,
        ...fishWords(commands),
        ...fishOptions(commands),
    ];
    return L.join('\n') + '\n';
}
/** The completion script for `shell`, from `commands` (the parser's table by default). */
export function completionScript(shell, commands = COMMANDS) {
    switch (shell) {
        case 'bash':
            return bashScript(commands);
        case 'zsh':
            return zshScript(commands);
        case 'fish':
            return fishScript(commands);
    }
}
/** The files under completions/ and the shell each holds. */
export const COMPLETION_FILES = [
    { shell: 'bash', file: 'vault-cli.bash' },
    { shell: 'zsh', file: '_vault-cli' },
    { shell: 'fish', file: 'vault-cli.fish' },
];
