/**
 * The one module that reads the home directory, the XDG variables and the
 * VAULT_* overrides (docs/files.md). Everything else receives paths.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { readFileSync, statSync } = process.getBuiltinModule('node:fs');
/** Where `host install` records the hardened host, for every client on the machine. */
export const SYSTEM_HOST_CONFIG = '/etc/vault-cli/host.json';
/**
 * The hardened host's record at `file`, when there is one that root owns and
 * nobody else may write: a record another user could write could point the
 * owner's client at a socket of theirs.
 */
export function readSystemHost(file) {
    try {
        const st = statSync(file);
        if (st.uid !== 0 || (st.mode & 0o022) !== 0)
            return null;
        const j = JSON.parse(readFileSync(file, 'utf8'));
        if (typeof j.user !== 'string' ||
            typeof j.group !== 'string' ||
            typeof j.uid !== 'number' ||
            typeof j.gid !== 'number' ||
            typeof j.stateDir !== 'string' ||
            typeof j.socketDir !== 'string') {
            return null;
        }
        return {
            user: j.user,
            group: j.group,
            uid: j.uid,
            gid: j.gid,
            stateDir: j.stateDir,
            socketDir: j.socketDir,
        };
    }
    catch {
        return null;
    }
}
/** Start-up files of bash, zsh, fish and POSIX sh, under the home directory. */
const STARTUP = [
    '.profile',
    '.bashrc',
    '.bash_profile',
    '.bash_login',
    '.bash_logout',
    '.zshrc',
    '.zshenv',
    '.zprofile',
    '.zlogin',
    '.zlogout',
    '.config/fish',
    '.inputrc',
];
function dirFrom(env, override, xdg, fallback) {
    const o = env[override];
    if (o !== undefined && o !== '')
        return resolve(o);
    const x = env[xdg];
    const base = x !== undefined && x !== '' && isAbsolute(x) ? x : join(homedir(), fallback);
    return join(base, 'vault-cli');
}
function agentDirs(env) {
    const home = homedir();
    const codexHome = env.CODEX_HOME;
    return {
        claude: join(home, '.claude'),
        codex: codexHome !== undefined && isAbsolute(codexHome) ? codexHome : join(home, '.codex'),
        cursor: join(home, '.cursor'),
        gemini: join(home, '.gemini'),
        agents: join(home, '.agents'),
    };
}
/** VAULT_HOST_URL=tls://host:port with VAULT_HOST_CA, or null. */
function remoteHostOf(env) {
    const m = /^tls:\/\/\[?([^\]/]+?)\]?:(\d+)\/?$/.exec(env.VAULT_HOST_URL ?? '');
    if (m === null || !env.VAULT_HOST_CA)
        return null;
    return { host: m[1], port: Number(m[2]), ca: resolve(env.VAULT_HOST_CA) };
}
export function resolvePaths(env) {
    const configDir = dirFrom(env, 'VAULT_CONFIG_DIR', 'XDG_CONFIG_HOME', '.config');
    const file = (name) => (env[name] ? resolve(env[name]) : null);
    const hostConfig = file('VAULT_HOST_CONFIG') ?? SYSTEM_HOST_CONFIG;
    // An explicit VAULT_DIR is a vault of this user's (or the host's own, when it
    // is the hardened host); otherwise a recorded system host is the vault.
    const explicit = env.VAULT_DIR !== undefined && env.VAULT_DIR !== '';
    const recorded = explicit ? null : readSystemHost(hostConfig);
    // Only its group's members (and root, who set it up) use it: a user left out
    // of the group keeps a same-user vault of their own.
    const uid = process.getuid?.() ?? -1;
    const systemHost = recorded !== null &&
        (uid === 0 || uid === recorded.uid || (process.getgroups?.() ?? []).includes(recorded.gid))
        ? recorded
        : null;
    const vaultDir = systemHost?.stateDir ?? dirFrom(env, 'VAULT_DIR', 'XDG_DATA_HOME', join('.local', 'share'));
    return {
        vaultDir,
        socketDir: systemHost?.socketDir ?? file('VAULT_SOCKET_DIR') ?? vaultDir,
        hostConfig,
        systemHost,
        configDir,
        tokenFile: join(configDir, 'token'),
        wrapsFile: join(configDir, 'wraps.json'),
        profilesFile: join(configDir, 'profiles.json'),
        anchorsFile: join(configDir, 'anchors.json'),
        proxyConfig: join(configDir, 'proxy.sealed'),
        proxyCa: join(configDir, 'proxy-ca.pem'),
        proxyCaBundle: join(configDir, 'proxy-ca-bundle.pem'),
        systemRoots: '/etc/ssl/certs/ca-certificates.crt',
        passphraseFile: file('VAULT_PASSPHRASE_FILE'),
        newPassphraseFile: file('VAULT_NEW_PASSPHRASE_FILE'),
        agentDirs: agentDirs(env),
        defaultDirs: [
            dirFrom({}, 'VAULT_DIR', 'XDG_DATA_HOME', join('.local', 'share')),
            dirFrom({}, 'VAULT_CONFIG_DIR', 'XDG_CONFIG_HOME', '.config'),
            dirFrom({ XDG_DATA_HOME: env.XDG_DATA_HOME }, 'VAULT_DIR', 'XDG_DATA_HOME', '.local/share'),
            dirFrom({ XDG_CONFIG_HOME: env.XDG_CONFIG_HOME }, 'VAULT_CONFIG_DIR', 'XDG_CONFIG_HOME', '.config'),
        ],
        shellStartup: STARTUP.map((f) => join(homedir(), f)),
        testWeakKdf: env.VAULT_TEST_WEAK_KDF === '1',
        passwordStore: env.PASSWORD_STORE_DIR
            ? resolve(env.PASSWORD_STORE_DIR)
            : join(homedir(), '.password-store'),
        storeUrl: env.VAULT_STORE_URL ? env.VAULT_STORE_URL : null,
        remoteListen: env.VAULT_LISTEN_TLS
            ? {
                listen: env.VAULT_LISTEN_TLS,
                cert: file('VAULT_TLS_CERT') ?? join(vaultDir, 'tls', 'cert.pem'),
                key: file('VAULT_TLS_KEY') ?? join(vaultDir, 'tls', 'key.pem'),
            }
            : null,
        remoteHost: remoteHostOf(env),
    };
}
/**
 * The environment a background host starts with: what it needs to find its
 * files and nothing an agent could use to steer it (no NODE_OPTIONS) or leak
 * (no VAULT_TOKEN, no passphrase file).
 */
export function hostEnv(env, paths) {
    // VAULT_STORE_URL and PGPASSFILE: a team vault's database and its password (docs/team.md).
    const keep = [
        'PATH',
        'HOME',
        'LANG',
        'LC_ALL',
        'TZ',
        'VAULT_HOST_IDLE_MS',
        'VAULT_OWNER_SESSION_MINUTES',
        'VAULT_OWNER_IDLE_MINUTES',
        'VAULT_STORE_URL',
        'PGPASSFILE',
        'VAULT_LISTEN_TLS',
        'VAULT_TLS_CERT',
        'VAULT_TLS_KEY',
    ];
    const out = { VAULT_DIR: paths.vaultDir };
    if (paths.socketDir !== paths.vaultDir)
        out.VAULT_SOCKET_DIR = paths.socketDir;
    for (const k of keep)
        if (env[k] !== undefined)
            out[k] = env[k];
    return out;
}
/**
 * Where the coding agents and shells this user runs keep their transcripts
 * and histories (`vault-cli sweep`): Claude Code's projects ($CLAUDE_CONFIG_DIR
 * or ~/.claude), Codex's sessions and history ($CODEX_HOME or ~/.codex),
 * Gemini CLI's ~/.gemini/tmp, Aider's files in the home and the working
 * directory, and the shells' and REPLs' histories.
 */
export function transcriptStores(env, cwd) {
    const home = homedir();
    const dirs = agentDirs(env);
    const claude = env.CLAUDE_CONFIG_DIR !== undefined && isAbsolute(env.CLAUDE_CONFIG_DIR)
        ? env.CLAUDE_CONFIG_DIR
        : dirs.claude;
    const xdgData = env.XDG_DATA_HOME !== undefined && isAbsolute(env.XDG_DATA_HOME)
        ? env.XDG_DATA_HOME
        : join(home, '.local', 'share');
    const at = (agent, path) => ({
        agent,
        path,
        base: home,
    });
    const shell = (p) => at('shell', p);
    const stores = [
        at('claude', join(claude, 'projects')),
        at('codex', join(dirs.codex, 'sessions')),
        at('codex', join(dirs.codex, 'history.jsonl')),
        at('gemini', join(dirs.gemini, 'tmp')),
        ...[home, cwd].flatMap((d) => [
            at('aider', join(d, '.aider.chat.history.md')),
            at('aider', join(d, '.aider.input.history')),
        ]),
        shell(join(home, '.bash_history')),
        shell(join(home, '.zsh_history')),
        shell(join(xdgData, 'fish', 'fish_history')),
        shell(join(home, '.python_history')),
        shell(join(home, '.node_repl_history')),
        shell(join(home, '.psql_history')),
        shell(join(home, '.mysql_history')),
    ];
    const histfile = env.HISTFILE;
    if (histfile !== undefined && isAbsolute(histfile))
        stores.push(shell(histfile));
    const seen = new Set();
    return stores.filter((s) => !seen.has(s.path) && seen.add(s.path));
}
