/**
 * Which keys of a repository's git configuration are harmless to leave for
 * the owner's git: those `git init`, `git clone` and ordinary work write, none
 * of which names a program or another file to read. Any other key (core.fsmonitor,
 * core.hooksPath, core.pager, core.editor, core.sshCommand, alias.*, filter.*,
 * diff.*.command, include.*, includeIf.*, credential.*, remote.*.uploadpack,
 * submodule.*.update, ...) makes a configuration the agent wrote held at the
 * end of `run` (shell/project-check.ts). An allow-list: git grows new keys
 * that run programs more often than new harmless ones.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { within } from './sandbox-policy.js';
/** Keys as `git config --list` prints them: section and key lower case, a subsection as written. */
export const SAFE_GIT_KEYS = [
    /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks)$/,
    /^extensions\.(objectformat|refstorage)$/,
    /^remote\..+\.(url|fetch)$/,
    /^branch\..+\.(remote|merge)$/,
    /^user\.(name|email)$/,
];
/** The keys of `keys` outside the allow-list, each once. Pure. */
export function unsafeGitKeys(keys) {
    return [...new Set(keys.filter((k) => !SAFE_GIT_KEYS.some((re) => re.test(k))))];
}
/**
 * The keys of a configuration file, as git reads them (its own parser, so
 * quoting, continuation lines and case are what git makes of them), or null
 * when git cannot read it. The text goes in on stdin, includes are not
 * followed, and git runs with no system or global configuration, outside any
 * repository: it reads, it runs nothing.
 */
export function gitConfigKeys(git, text) {
    const r = spawnSync(git, ['config', '--file', '-', '--no-includes', '--null', '--list'], {
        input: text,
        cwd: '/',
        env: {
            PATH: '/usr/bin:/bin',
            HOME: '/nonexistent',
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_GLOBAL: '/dev/null',
            LC_ALL: 'C',
        },
        timeout: 10_000,
        maxBuffer: 4 * 1024 * 1024,
    });
    if (r.status !== 0 || r.stdout === null)
        return null;
    return r.stdout
        .toString('utf8')
        .split('\0')
        .filter((e) => e !== '')
        .map((e) => e.split('\n')[0]);
}
function fileId(path) {
    const st = statSync(path, { bigint: true });
    return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
}
/**
 * The git the end of the session may run to read configurations with,
 * outside the sandbox: the one on the owner's PATH (`found`), resolved to its
 * file before the agent starts, and only if that file lies outside every path
 * the agent may write. A PATH with a project directory on it (`bin/` by
 * direnv's PATH_add, `node_modules/.bin`) would otherwise let the agent put a
 * `git` there for `run` itself to execute. Null: no git to trust.
 */
export function gitAtStart(found, writable) {
    if (found === null)
        return null;
    try {
        const path = realpathSync(found);
        if (writable.some((w) => within(path, w)))
            return null;
        return { path, id: fileId(path) };
    }
    catch {
        return null;
    }
}
/** The start's git, if it is still the very file it was; else null. */
export function gitStill(git) {
    if (git === null)
        return null;
    try {
        return fileId(git.path) === git.id ? git.path : null;
    }
    catch {
        return null;
    }
}
