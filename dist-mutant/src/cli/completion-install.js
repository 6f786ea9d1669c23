/**
 * Where `vault-cli completion install` puts a shell's completion script: the
 * directory each shell (or bash-completion) loads completions from on its own,
 * so no dotfile needs a line, except zsh's: ~/.zfunc is on no default $fpath,
 * and `--rc` adds it to ~/.zshrc (bash's `--rc` sources the file for a bash
 * without bash-completion). `doctor` asks the same paths whether it is done.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
export function completionPlace(shell, env) {
    const home = env.HOME ?? homedir();
    const data = env.XDG_DATA_HOME || join(home, '.local', 'share');
    const config = env.XDG_CONFIG_HOME || join(home, '.config');
    switch (shell) {
        case 'bash': {
            const file = join(data, 'bash-completion', 'completions', 'vault-cli');
            return { shell, file, rc: join(home, '.bashrc'), rcLine: `[ -r '${file}' ] && . '${file}'` };
        }
        case 'zsh': {
            const dir = join(home, '.zfunc');
            return {
                shell,
                file: join(dir, '_vault-cli'),
                rc: join(env.ZDOTDIR || home, '.zshrc'),
                rcLine: `fpath=('${dir}' $fpath); autoload -Uz compinit && compinit`,
            };
        }
        case 'fish':
            return {
                shell,
                file: join(config, 'fish', 'completions', 'vault-cli.fish'),
                rc: null,
                rcLine: null,
            };
    }
}
/** What an install did: each line for stderr. */
export function installCompletion(place, script, rc) {
    const said = [];
    const current = existsSync(place.file) ? readFileSync(place.file, 'utf8') : null;
    if (current === script)
        said.push(`${place.file} is up to date`);
    else {
        mkdirSync(dirname(place.file), { recursive: true });
        writeFileSync(place.file, script, { mode: 0o644 });
        said.push(`${current === null ? 'wrote' : 'updated'} ${place.file}`);
    }
    if (place.rc === null || place.rcLine === null)
        return said;
    const rcText = existsSync(place.rc) ? readFileSync(place.rc, 'utf8') : '';
    if (rcText.split('\n').includes(place.rcLine))
        said.push(`${place.rc} loads it already`);
    else if (rc) {
        const sep = rcText === '' || rcText.endsWith('\n') ? '' : '\n';
        appendFileSync(place.rc, `${sep}# vault-cli completion\n${place.rcLine}\n`);
        said.push(`added to ${place.rc}: ${place.rcLine}`);
    }
    else if (place.shell === 'zsh')
        said.push(`zsh loads it once ~/.zfunc is on $fpath: add to ${place.rc} (or run again with --rc): ${place.rcLine}`);
    else
        said.push(`bash-completion loads it from there; a bash without bash-completion needs --rc (${place.rc})`);
    return said;
}
