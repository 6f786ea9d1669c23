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

/** The hardened host as `host install` recorded it (root-owned, world-readable). */
export interface SystemHost {
  readonly user: string;
  readonly group: string;
  readonly uid: number;
  readonly gid: number;
  /** The host's state directory (the store): only the host's user enters it. */
  readonly stateDir: string;
  /** The socket's directory: the host's, reachable by its group, writable by nobody else. */
  readonly socketDir: string;
}

/**
 * The hardened host's record at `file`, when there is one that root owns and
 * nobody else may write: a record another user could write could point the
 * owner's client at a socket of theirs.
 */
export function readSystemHost(file: string): SystemHost | null {
  try {
    const st = statSync(file);
    if (st.uid !== 0 || (st.mode & 0o022) !== 0) return null;
    const j = JSON.parse(readFileSync(file, 'utf8')) as Partial<SystemHost>;
    if (
      typeof j.user !== 'string' ||
      typeof j.group !== 'string' ||
      typeof j.uid !== 'number' ||
      typeof j.gid !== 'number' ||
      typeof j.stateDir !== 'string' ||
      typeof j.socketDir !== 'string'
    ) {
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
  } catch {
    return null;
  }
}

export interface Paths {
  /** The vault: LMDB store, the host's lock and log (and its socket in same-user mode). */
  readonly vaultDir: string;
  /** Where the host's socket is: the vault directory, or the hardened host's socket directory. */
  readonly socketDir: string;
  /** The hardened host's record (VAULT_HOST_CONFIG, else /etc/vault-cli/host.json). */
  readonly hostConfig: string;
  /**
   * The hardened host this client uses: recorded, this user is in its group
   * (or root), and no VAULT_DIR chose a vault of this user's.
   */
  readonly systemHost: SystemHost | null;
  /** The agent's side: its token, proxy configuration, CA. */
  readonly configDir: string;
  readonly tokenFile: string;
  /** The commands shell-init wraps (`agent wrap`), as JSON. */
  readonly wrapsFile: string;
  /** The owner's agent profiles for `run`, extending the shipped ones (JSON). */
  readonly profilesFile: string;
  /**
   * The audit anchor the owner's last command left, per vault (owner.ts
   * anchorMemory): in the config directory, which `run` hides from its agent.
   */
  readonly anchorsFile: string;
  /** The proxy's sealed configuration (its CA key), the CA certificate, and system roots + CA. */
  readonly proxyConfig: string;
  readonly proxyCa: string;
  readonly proxyCaBundle: string;
  /** The system's trusted roots, which the bundle starts with. */
  readonly systemRoots: string;
  /** VAULT_PASSPHRASE_FILE, when set. */
  readonly passphraseFile: string | null;
  readonly newPassphraseFile: string | null;
  /** Where each coding agent keeps its configuration, for the guardrail skill. */
  readonly agentDirs: AgentDirs;
  /**
   * The vault and config directories this user's commands would use with no
   * VAULT_* override, whatever this command uses: other agents' and the
   * owner's defaults, hidden from a `run` sandbox as well as the ones in use.
   */
  readonly defaultDirs: readonly string[];
  /** The shell start-up files and directories a `run` sandbox keeps read-only. */
  readonly shellStartup: readonly string[];
  /**
   * VAULT_TEST_WEAK_KDF=1: `vault create` asks for libsodium's minimum
   * Argon2id costs. For the test suites only (every owner step of theirs
   * derives the key again); never documented as a user's option.
   */
  readonly testWeakKdf: boolean;
  /** `import --from pass`: $PASSWORD_STORE_DIR, else ~/.password-store, as pass has it. */
  readonly passwordStore: string;
  /** VAULT_STORE_URL: the PostgreSQL store this vault is in (team mode; docs/team.md), or null. */
  readonly storeUrl: string | null;
  /** VAULT_LISTEN_TLS (address:port): the host also takes remote agents there, with this cert and key. */
  readonly remoteListen: { listen: string; cert: string; key: string } | null;
  /** VAULT_HOST_URL (tls://host:port): this client's host is a remote team host, trusted by VAULT_HOST_CA. */
  readonly remoteHost: { host: string; port: number; ca: string } | null;
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

/** Configuration directories of the coding agents `init` writes guardrails for. */
export interface AgentDirs {
  /** Claude Code: ~/.claude. */
  readonly claude: string;
  /** Codex: $CODEX_HOME, else ~/.codex. */
  readonly codex: string;
  /** Cursor: ~/.cursor. */
  readonly cursor: string;
  /** Gemini CLI: ~/.gemini. */
  readonly gemini: string;
  /** Generic AGENTS.md readers: ~/.agents. */
  readonly agents: string;
}

function dirFrom(env: NodeJS.ProcessEnv, override: string, xdg: string, fallback: string): string {
  const o = env[override];
  if (o !== undefined && o !== '') return resolve(o);
  const x = env[xdg];
  const base = x !== undefined && x !== '' && isAbsolute(x) ? x : join(homedir(), fallback);
  return join(base, 'vault-cli');
}

function agentDirs(env: NodeJS.ProcessEnv): AgentDirs {
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
function remoteHostOf(env: NodeJS.ProcessEnv): Paths['remoteHost'] {
  const m = /^tls:\/\/\[?([^\]/]+?)\]?:(\d+)\/?$/.exec(env.VAULT_HOST_URL ?? '');
  if (m === null || !env.VAULT_HOST_CA) return null;
  return { host: m[1] as string, port: Number(m[2]), ca: resolve(env.VAULT_HOST_CA) };
}

export function resolvePaths(env: NodeJS.ProcessEnv): Paths {
  const configDir = dirFrom(env, 'VAULT_CONFIG_DIR', 'XDG_CONFIG_HOME', '.config');
  const file = (name: string) => (env[name] ? resolve(env[name] as string) : null);
  const hostConfig = file('VAULT_HOST_CONFIG') ?? SYSTEM_HOST_CONFIG;
  // An explicit VAULT_DIR is a vault of this user's (or the host's own, when it
  // is the hardened host); otherwise a recorded system host is the vault.
  const explicit = env.VAULT_DIR !== undefined && env.VAULT_DIR !== '';
  const recorded = explicit ? null : readSystemHost(hostConfig);
  // Only its group's members (and root, who set it up) use it: a user left out
  // of the group keeps a same-user vault of their own.
  const uid = process.getuid?.() ?? -1;
  const systemHost =
    recorded !== null &&
    (uid === 0 || uid === recorded.uid || (process.getgroups?.() ?? []).includes(recorded.gid))
      ? recorded
      : null;
  const vaultDir =
    systemHost?.stateDir ?? dirFrom(env, 'VAULT_DIR', 'XDG_DATA_HOME', join('.local', 'share'));
  // What every command needs is made here; the rest when first read (once):
  // each path.join is a loop Node's interpreter runs on every start, and all
  // of them cost a get about 1.4 ms of CPU (docs/development.md, "Start-up").
  // Nothing in the CLI changes process.env or the working directory, so a
  // field read later is the field read now.
  const eager = {
    vaultDir,
    socketDir: systemHost?.socketDir ?? file('VAULT_SOCKET_DIR') ?? vaultDir,
    hostConfig,
    systemHost,
    configDir,
    tokenFile: join(configDir, 'token'),
    anchorsFile: join(configDir, 'anchors.json'),
    systemRoots: '/etc/ssl/certs/ca-certificates.crt',
    testWeakKdf: env.VAULT_TEST_WEAK_KDF === '1',
    storeUrl: env.VAULT_STORE_URL ? env.VAULT_STORE_URL : null,
    remoteHost: remoteHostOf(env),
  };
  return withLazy(eager, {
    wrapsFile: () => join(configDir, 'wraps.json'),
    profilesFile: () => join(configDir, 'profiles.json'),
    proxyConfig: () => join(configDir, 'proxy.sealed'),
    proxyCa: () => join(configDir, 'proxy-ca.pem'),
    proxyCaBundle: () => join(configDir, 'proxy-ca-bundle.pem'),
    passphraseFile: () => file('VAULT_PASSPHRASE_FILE'),
    newPassphraseFile: () => file('VAULT_NEW_PASSPHRASE_FILE'),
    agentDirs: () => agentDirs(env),
    defaultDirs: () => [
      dirFrom({}, 'VAULT_DIR', 'XDG_DATA_HOME', join('.local', 'share')),
      dirFrom({}, 'VAULT_CONFIG_DIR', 'XDG_CONFIG_HOME', '.config'),
      dirFrom({ XDG_DATA_HOME: env.XDG_DATA_HOME }, 'VAULT_DIR', 'XDG_DATA_HOME', '.local/share'),
      dirFrom(
        { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME },
        'VAULT_CONFIG_DIR',
        'XDG_CONFIG_HOME',
        '.config',
      ),
    ],
    shellStartup: () => STARTUP.map((f) => join(homedir(), f)),
    passwordStore: () =>
      env.PASSWORD_STORE_DIR ? resolve(env.PASSWORD_STORE_DIR) : join(homedir(), '.password-store'),
    remoteListen: () =>
      env.VAULT_LISTEN_TLS
        ? {
            listen: env.VAULT_LISTEN_TLS,
            cert: file('VAULT_TLS_CERT') ?? join(vaultDir, 'tls', 'cert.pem'),
            key: file('VAULT_TLS_KEY') ?? join(vaultDir, 'tls', 'key.pem'),
          }
        : null,
  });
}

/** `base` with `makers`' fields added, each made when first read and then kept. */
function withLazy<T extends object, L extends object>(
  base: T,
  makers: { [K in keyof L]: () => L[K] },
): T & L {
  for (const key of Object.keys(makers) as (keyof L)[]) {
    Object.defineProperty(base, key, {
      enumerable: true,
      configurable: true,
      get() {
        const value = makers[key]();
        Object.defineProperty(base, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return base as T & L;
}

/**
 * The environment a background host starts with: what it needs to find its
 * files and nothing an agent could use to steer it (no NODE_OPTIONS) or leak
 * (no VAULT_TOKEN, no passphrase file).
 */
export function hostEnv(env: NodeJS.ProcessEnv, paths: Paths): NodeJS.ProcessEnv {
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
    // How long a silent team host counts in the tombstones' horizon (src/store/pg/horizon.ts).
    'VAULT_TEAM_HORIZON_MS',
    'VAULT_LISTEN_TLS',
    'VAULT_TLS_CERT',
    'VAULT_TLS_KEY',
  ];
  const out: NodeJS.ProcessEnv = { VAULT_DIR: paths.vaultDir };
  if (paths.socketDir !== paths.vaultDir) out.VAULT_SOCKET_DIR = paths.socketDir;
  for (const k of keep) if (env[k] !== undefined) out[k] = env[k];
  return out;
}

/** A place a coding agent or a shell keeps what it saw: a directory (swept whole) or one file. */
export interface TranscriptStore {
  readonly agent: 'claude' | 'codex' | 'gemini' | 'aider' | 'shell';
  readonly path: string;
  /** The home directory it lies under (links below it are not followed). */
  readonly base: string;
}

/**
 * Where the coding agents and shells this user runs keep their transcripts
 * and histories (`vault-cli sweep`): Claude Code's projects ($CLAUDE_CONFIG_DIR
 * or ~/.claude), Codex's sessions and history ($CODEX_HOME or ~/.codex),
 * Gemini CLI's ~/.gemini/tmp, Aider's files in the home and the working
 * directory, and the shells' and REPLs' histories.
 */
export function transcriptStores(env: NodeJS.ProcessEnv, cwd: string): TranscriptStore[] {
  const home = homedir();
  const dirs = agentDirs(env);
  const claude =
    env.CLAUDE_CONFIG_DIR !== undefined && isAbsolute(env.CLAUDE_CONFIG_DIR)
      ? env.CLAUDE_CONFIG_DIR
      : dirs.claude;
  const xdgData =
    env.XDG_DATA_HOME !== undefined && isAbsolute(env.XDG_DATA_HOME)
      ? env.XDG_DATA_HOME
      : join(home, '.local', 'share');
  const at = (agent: TranscriptStore['agent'], path: string): TranscriptStore => ({
    agent,
    path,
    base: home,
  });
  const shell = (p: string): TranscriptStore => at('shell', p);
  const stores: TranscriptStore[] = [
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
  if (histfile !== undefined && isAbsolute(histfile)) stores.push(shell(histfile));
  const seen = new Set<string>();
  return stores.filter((s) => !seen.has(s.path) && seen.add(s.path));
}
