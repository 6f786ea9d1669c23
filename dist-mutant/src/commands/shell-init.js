/**
 * The snippet `vault-cli shell-init` prints for `eval`: the completion script
 * and one wrapper per command the owner wrapped (`vault-cli agent wrap`), so
 * that typing the command runs it under `vault-cli run --agent <name>`. Pure.
 * Names are checked before they reach a shell: a wrapper is code.
 */
import { completionScript } from './completion.js';
import { VaultError, quote } from '../core/errors.js';
const COMMAND_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$/;
/**
 * Checks a command name for a wrapper.
 * @throws VaultError VLT-1001 when it is not a plain command name.
 */
export function checkCommandName(name) {
    if (!COMMAND_NAME.test(name)) {
        throw new VaultError('VLT-1001', `cannot wrap ${quote(name)}: a command name is letters, digits, _ . + - (see vault-cli --help)`);
    }
    return name;
}
function sq(s) {
    return `'${s.replace(/'/g, `'\\''`)}'`;
}
function fishQuote(s) {
    return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
/** The text to eval in `shell`. */
export function shellInit(shell, wraps) {
    const L = ['# vault-cli shell-init: eval "$(vault-cli shell-init ' + shell + ')"'];
    if (shell === 'zsh') {
        L.push('(( $+functions[compdef] )) || { autoload -U compinit && compinit -u; }');
    }
    L.push(completionScript(shell).trimEnd());
    for (const w of wraps) {
        const cmd = checkCommandName(w.command);
        if (shell === 'fish') {
            L.push(`function ${cmd} --wraps ${cmd} --description ${fishQuote(`${cmd} under vault-cli run --agent ${w.agent}`)}`, `    command vault-cli run --agent ${fishQuote(w.agent)} -- ${cmd} $argv`, 'end');
        }
        else {
            L.push(`${cmd}() { command vault-cli run --agent ${sq(w.agent)} -- ${cmd} "$@"; }`);
        }
    }
    return L.join('\n') + '\n';
}
