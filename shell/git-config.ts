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

/** Keys as `git config --list` prints them: section and key lower case, a subsection as written. */
export const SAFE_GIT_KEYS: readonly RegExp[] = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks)$/,
  /^extensions\.(objectformat|refstorage)$/,
  /^remote\..+\.(url|fetch)$/,
  /^branch\..+\.(remote|merge)$/,
  /^user\.(name|email)$/,
];

/** The keys of `keys` outside the allow-list, each once. Pure. */
export function unsafeGitKeys(keys: readonly string[]): string[] {
  return [...new Set(keys.filter((k) => !SAFE_GIT_KEYS.some((re) => re.test(k))))];
}

/**
 * The keys of a configuration file, as git reads them (its own parser, so
 * quoting, continuation lines and case are what git makes of them), or null
 * when git cannot read it. The text goes in on stdin, includes are not
 * followed, and git runs with no system or global configuration, outside any
 * repository: it reads, it runs nothing.
 */
export function gitConfigKeys(git: string, text: Buffer): string[] | null {
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
  if (r.status !== 0 || r.stdout === null) return null;
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((e) => e !== '')
    .map((e) => e.split('\n')[0] as string);
}
