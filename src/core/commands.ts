/**
 * Every command of vault-cli as plain data. The argv parser, `--help` and the
 * shell completions are all produced from this one table, so they cannot drift.
 */

/** What a shell may complete for a value. `entry` is owner-only (no enumeration for agents). */
export type Completion = 'entry' | 'agent' | 'field' | 'file' | 'none';

export interface FlagDef {
  readonly name: string;
  readonly summary: string;
  /** A flag without a value type is a boolean switch. */
  readonly value?: 'string' | 'count';
  readonly repeat?: boolean;
  readonly complete?: Completion;
  /** The only values a shell completes for it. */
  readonly choices?: readonly string[];
}

export interface ArgDef {
  readonly name: string;
  readonly summary: string;
  readonly optional?: boolean;
  /** Collects every remaining word. */
  readonly rest?: boolean;
  readonly complete?: Completion;
  readonly choices?: readonly string[];
}

export interface CommandDef {
  /** Words that name the command, e.g. ['entry', 'set']. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Who runs it: an agent with a token, the owner with a passphrase, or anyone. */
  readonly side: 'agent' | 'owner' | 'local';
  readonly args: readonly ArgDef[];
  readonly flags: readonly FlagDef[];
  /** The module under src/cli/commands that runs it. */
  readonly module: string;
}

const json: FlagDef = { name: 'json', summary: 'machine-readable output' };
const field: FlagDef = {
  name: 'field',
  value: 'string',
  summary: 'field name (default: password)',
  complete: 'field',
};
const noBrowser: FlagDef = {
  name: 'no-browser',
  summary: 'print the ceremony page’s URL only; do not open a browser',
};
/**
 * The proxy's port on 127.0.0.1 (interface-spec), the default of `--port`: the
 * product's contract, so the one definition sits with the command table that
 * documents it; `proxy`, `run` and the sandbox's loopback all use it.
 */
export const PROXY_PORT = 1983;

/** `run --max-procs`: tasks (processes and threads) the sandboxed agent may have at once; a build runs many. */
export const DEFAULT_MAX_PROCS = 1024;
const proxyPort: FlagDef = {
  name: 'port',
  value: 'count',
  summary: `port (default ${PROXY_PORT})`,
};
const entryArg: ArgDef = { name: 'entry', summary: 'entry name', complete: 'entry' };
const agentArg: ArgDef = { name: 'name', summary: 'agent name', complete: 'agent' };

export const COMMON_FIELDS = ['password', 'key', 'private_key', 'secret_key', 'token', 'totp'];

/** Coding agents `init` can leave the guardrail skill for (src/cli/skill.ts). */
export const SKILL_AGENTS = ['claude', 'codex', 'cursor', 'gemini', 'agents'] as const;

/** Shells `vault-cli completion` writes scripts for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;

export const COMMANDS: readonly CommandDef[] = [
  {
    path: ['init'],
    summary: 'store this agent’s token (read from stdin or a prompt)',
    side: 'agent',
    args: [],
    flags: [
      {
        name: 'skill',
        value: 'string',
        summary: 'install the guardrail skill for this agent only (created if absent)',
        choices: SKILL_AGENTS,
      },
      { name: 'no-skill', summary: 'do not install the guardrail skill for coding agents' },
    ],
    module: 'init',
  },
  {
    path: ['get'],
    summary: 'print one field of an entry into a pipe',
    side: 'agent',
    args: [{ ...entryArg, complete: 'none' }],
    flags: [field],
    module: 'get',
  },
  {
    path: ['totp'],
    summary: 'print the current one-time code of an entry into a pipe',
    side: 'agent',
    args: [{ ...entryArg, complete: 'none' }],
    flags: [],
    module: 'totp',
  },
  {
    path: ['proxy'],
    summary: `run the reference-resolving HTTPS proxy on 127.0.0.1 (default port ${PROXY_PORT})`,
    side: 'agent',
    args: [],
    flags: [
      proxyPort,
      {
        name: 'upstream-ca',
        value: 'string',
        repeat: true,
        summary: 'also trust this PEM file for upstream servers (tests, private CAs)',
        complete: 'file',
      },
    ],
    module: 'proxy',
  },
  {
    path: ['proxy', 'env'],
    summary: 'print the shell lines that route a tool through the proxy',
    side: 'agent',
    args: [],
    flags: [proxyPort],
    module: 'proxy',
  },
  {
    path: ['proxy', 'ca'],
    summary: 'print the path of the proxy’s CA certificate',
    side: 'agent',
    args: [],
    flags: [],
    module: 'proxy',
  },
  {
    path: ['render'],
    summary:
      'print a template with every vault:// reference replaced, into a pipe (all or nothing; - is stdin: < file streams, a pipe is held in memory)',
    side: 'agent',
    args: [{ name: 'file', summary: 'template file, or - for stdin', complete: 'file' }],
    flags: [
      {
        name: 'format',
        value: 'string',
        summary: 'escape values for json, yaml, toml, env or raw (default: by extension)',
      },
      { name: 'raw', summary: 'insert values as they are (same as --format raw)' },
      { name: 'watch', summary: 'render again to stdout whenever the template changes' },
    ],
    module: 'render',
  },
  {
    path: ['run'],
    summary: 'run a command as an agent under a session token that dies with it',
    side: 'owner',
    args: [{ name: 'command', summary: 'the command and its arguments, after --', rest: true }],
    flags: [
      { name: 'agent', value: 'string', summary: 'agent to act as', complete: 'agent' },
      {
        name: 'scope',
        value: 'string',
        repeat: true,
        summary: 'narrow the session to this entry (repeatable)',
        complete: 'entry',
      },
      {
        name: 'keep-env',
        value: 'string',
        repeat: true,
        summary: 'pass this secret-looking variable through (repeatable)',
        complete: 'none',
      },
      {
        name: 'upstream-ca',
        value: 'string',
        repeat: true,
        summary: 'also trust this PEM file for upstream servers in the proxy (tests, private CAs)',
        complete: 'file',
      },
      {
        name: 'allow-write',
        value: 'string',
        repeat: true,
        summary: 'let the sandboxed agent write this directory too (repeatable)',
        complete: 'file',
      },
      {
        name: 'allow-read',
        value: 'string',
        repeat: true,
        summary:
          'keep this credential store (~/.ssh, ~/.aws, ...) readable to the sandboxed agent (repeatable)',
        complete: 'file',
      },
      {
        name: 'allow-net',
        value: 'string',
        repeat: true,
        summary: 'let the sandboxed agent connect directly to host:port (repeatable)',
        complete: 'none',
      },
      {
        name: 'max-procs',
        value: 'string',
        summary: `the most processes and threads the sandboxed agent may have at once (default ${DEFAULT_MAX_PROCS})`,
        complete: 'none',
      },
      {
        name: 'no-sandbox',
        summary: 'run the agent without the OS sandbox, as you (warned and audited)',
      },
      { name: 'allow-title', summary: "let the agent set the terminal's window title" },
      noBrowser,
    ],
    module: 'run',
  },
  {
    path: ['dashboard'],
    summary: 'the live dashboard of agents, reads and lockdowns, and the vault UI',
    side: 'owner',
    args: [],
    flags: [noBrowser],
    module: 'dashboard',
  },
  {
    path: ['vault', 'create'],
    summary: 'create a new vault (prints a recovery key once)',
    side: 'owner',
    args: [],
    flags: [],
    module: 'vault',
  },
  {
    path: ['vault', 'passwd'],
    summary: 'change the owner passphrase',
    side: 'owner',
    args: [],
    flags: [{ name: 'recovery', summary: 'authenticate with the recovery key instead' }],
    module: 'vault',
  },
  {
    path: ['vault', 'backup'],
    summary: 'write a consistent, encrypted copy of the vault to a file, atomically',
    side: 'owner',
    args: [{ name: 'file', summary: 'the backup file to write', complete: 'file' }],
    flags: [json],
    module: 'vault',
  },
  {
    path: ['vault', 'check'],
    summary: 'verify every record, seal, index row and the audit chain; exit 74 on damage',
    side: 'owner',
    args: [],
    flags: [json],
    module: 'vault',
  },
  {
    path: ['vault', 'restore'],
    summary: 'replace the vault by a backup, after showing what it would roll back',
    side: 'owner',
    args: [{ name: 'file', summary: 'the backup file', complete: 'file' }],
    flags: [
      { name: 'yes', summary: 'restore without asking (needed when no terminal can ask)' },
      { name: 'dry-run', summary: 'show what would be rolled back; change nothing' },
      json,
    ],
    module: 'vault',
  },
  {
    path: ['vault', 'rekey'],
    summary: 'make a new root key and print a new recovery key (the old one stops working)',
    side: 'owner',
    args: [],
    flags: [],
    module: 'vault',
  },
  {
    path: ['entry', 'set'],
    summary: 'create an entry or rotate one of its fields (value from stdin or a prompt)',
    side: 'owner',
    args: [entryArg],
    flags: [
      field,
      { name: 'tier', value: 'string', summary: 'tier of a new entry (default: default)' },
    ],
    module: 'entry',
  },
  {
    path: ['entry', 'rm'],
    summary: 'remove an entry',
    side: 'owner',
    args: [entryArg],
    flags: [],
    module: 'entry',
  },
  {
    path: ['entry', 'show'],
    summary: 'show an entry’s fields and metadata; --reveal prints one field’s value',
    side: 'owner',
    args: [entryArg],
    flags: [
      json,
      {
        name: 'reveal',
        summary: 'print the value of one field (--field; default password), audited',
      },
      field,
    ],
    module: 'entry',
  },
  {
    path: ['entry', 'ls'],
    summary: 'list entries',
    side: 'owner',
    args: [],
    flags: [json],
    module: 'entry',
  },
  {
    path: ['entry', 'hosts'],
    summary: 'bind an entry to the hosts the proxy may send it to (--clear: any host)',
    side: 'owner',
    args: [entryArg, { name: 'host', summary: 'host name', optional: true, rest: true }],
    flags: [{ name: 'clear', summary: 'remove the binding' }],
    module: 'entry',
  },
  {
    path: ['agent', 'add'],
    summary: 'create an agent and print its token',
    side: 'owner',
    args: [{ ...agentArg, complete: 'none' }],
    flags: [
      {
        name: 'scope',
        value: 'string',
        repeat: true,
        summary: 'entry the agent may read',
        complete: 'entry',
      },
      { name: 'kind', value: 'string', summary: 'ai or script (default: ai)' },
      {
        name: 'per-minute',
        value: 'count',
        summary: 'distinct credentials per minute (default 3)',
      },
      { name: 'per-hour', value: 'count', summary: 'distinct credentials per hour (default 10)' },
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'ls'],
    summary: 'list agents',
    side: 'owner',
    args: [],
    flags: [json],
    module: 'agent',
  },
  {
    path: ['agent', 'show'],
    summary: 'show an agent’s scope, limits, state and current reads',
    side: 'owner',
    args: [agentArg],
    flags: [json],
    module: 'agent',
  },
  {
    path: ['agent', 'wrap'],
    summary: 'make shell-init wrap a command so it runs under run --agent <name>',
    side: 'local',
    args: [agentArg],
    flags: [
      {
        name: 'command',
        value: 'string',
        summary: 'the command to wrap (default: the agent name)',
      },
      { name: 'rm', summary: 'stop wrapping it' },
    ],
    module: 'wrap',
  },
  {
    path: ['agent', 'scope'],
    summary: 'add entries to or remove them from an agent’s scope',
    side: 'owner',
    args: [agentArg],
    flags: [
      { name: 'add', value: 'string', repeat: true, summary: 'entry to add', complete: 'entry' },
      { name: 'rm', value: 'string', repeat: true, summary: 'entry to remove', complete: 'entry' },
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'limits'],
    summary: 'change an agent’s rate limits',
    side: 'owner',
    args: [agentArg],
    flags: [
      { name: 'per-minute', value: 'count', summary: 'distinct credentials per minute' },
      { name: 'per-hour', value: 'count', summary: 'distinct credentials per hour' },
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'lock'],
    summary: 'lock an agent now',
    side: 'owner',
    args: [agentArg],
    flags: [],
    module: 'agent',
  },
  {
    path: ['agent', 'unlock'],
    summary: 'lift an agent’s lockdown with an enrolled hardware key (WebAuthn, in a browser)',
    side: 'owner',
    args: [agentArg],
    flags: [noBrowser],
    module: 'agent',
  },
  {
    path: ['agent', 'revoke'],
    summary: 'revoke an agent’s token for good',
    side: 'owner',
    args: [agentArg],
    flags: [],
    module: 'agent',
  },
  {
    path: ['key', 'add'],
    summary: 'enrol a hardware key (FIDO2, in a browser); enrol two',
    side: 'owner',
    args: [],
    flags: [
      { name: 'name', value: 'string', summary: 'name of the key (default: key-<n>)' },
      noBrowser,
    ],
    module: 'key',
  },
  {
    path: ['key', 'ls'],
    summary: 'list enrolled hardware keys',
    side: 'owner',
    args: [],
    flags: [json],
    module: 'key',
  },
  {
    path: ['key', 'rm'],
    summary: 'remove an enrolled hardware key',
    side: 'owner',
    args: [{ name: 'name', summary: 'key name' }],
    flags: [],
    module: 'key',
  },
  {
    path: ['audit'],
    summary: 'print the audit log',
    side: 'owner',
    args: [],
    flags: [
      json,
      {
        name: 'agent',
        value: 'string',
        summary: 'records by or about this agent',
        complete: 'agent',
      },
      {
        name: 'since',
        value: 'string',
        summary: 'from a time (2026-11-22 14:00) or back a span (10m, 2h, 7d)',
      },
      { name: 'follow', summary: 'keep printing records as they are written' },
      {
        name: 'verify',
        summary:
          'check the hash chain; exit 74 (VLT-3003) if a record was changed, removed or reordered',
      },
      {
        name: 'archive',
        value: 'string',
        repeat: true,
        summary: 'with --verify: verify this archive file (repeatable) and its link into the store',
        complete: 'file',
      },
    ],
    module: 'audit',
  },
  {
    path: ['audit', 'archive'],
    summary: 'move the records older than a date into a sealed archive file',
    side: 'owner',
    args: [{ name: 'file', summary: 'the archive file to write', complete: 'file' }],
    flags: [
      {
        name: 'before',
        value: 'string',
        summary: 'archive records before this time (2026-11-01) or older than a span (30d)',
      },
    ],
    module: 'audit',
  },
  {
    path: ['shell-init'],
    summary: 'print the lines to eval in a shell: completion and the agent wrappers',
    side: 'local',
    args: [{ name: 'shell', summary: 'bash, zsh or fish', choices: SHELLS }],
    flags: [],
    module: 'shell-init',
  },
  {
    path: ['completion'],
    summary: 'print the shell completion script for bash, zsh or fish',
    side: 'local',
    args: [{ name: 'shell', summary: 'bash, zsh or fish', choices: SHELLS }],
    flags: [],
    module: 'completion',
  },
  {
    path: ['daemon'],
    summary: 'run the vault host in the foreground',
    side: 'local',
    args: [],
    flags: [],
    module: 'daemon',
  },
  {
    path: ['daemon', 'stop'],
    summary: 'stop the running vault host',
    side: 'local',
    args: [],
    flags: [],
    module: 'daemon',
  },
  {
    path: ['daemon', 'status'],
    summary: 'say whether a vault host is running (exit 3 when none)',
    side: 'local',
    args: [],
    flags: [json],
    module: 'daemon',
  },
  {
    path: ['host', 'install'],
    summary: 'as root: run the vault host as its own system user (hardened mode)',
    side: 'local',
    args: [],
    flags: [
      { name: 'user', value: 'string', summary: 'the host’s system user (default vault-cli)' },
      {
        name: 'group',
        value: 'string',
        summary: 'the group whose members reach the host (default vault-cli)',
      },
      {
        name: 'state-dir',
        value: 'string',
        summary: 'the store, only the host’s user enters it (default /var/lib/vault-cli)',
        complete: 'file',
      },
      {
        name: 'socket-dir',
        value: 'string',
        summary: 'the socket, reachable by the group (default /run/vault-cli)',
        complete: 'file',
      },
      {
        name: 'member',
        value: 'string',
        repeat: true,
        summary: 'a user to add to the group',
      },
      {
        name: 'move',
        value: 'string',
        summary: 'move this same-user vault directory’s store into the hardened host',
        complete: 'file',
      },
      { name: 'no-systemd', summary: 'write no service unit; print how to start the host' },
    ],
    module: 'host',
  },
  {
    path: ['host', 'uninstall'],
    summary: 'as root: undo `host install` (the store moves out or is purged)',
    side: 'local',
    args: [],
    flags: [
      {
        name: 'move-to',
        value: 'string',
        summary: 'move the store to this directory, owned by --owner',
        complete: 'file',
      },
      { name: 'owner', value: 'string', summary: 'the user who gets the moved store' },
      { name: 'purge', summary: 'delete the hardened host’s store' },
    ],
    module: 'host',
  },
  {
    path: ['host', 'status'],
    summary: 'say which mode is in use (same-user or hardened) and whether the host runs',
    side: 'local',
    args: [],
    flags: [json],
    module: 'host',
  },
];

export const HELP_FLAG: FlagDef = { name: 'help', summary: 'show help' };

/** Groups of commands, for `vault-cli --help` and for completing the first word. */
export function topLevelWords(commands: readonly CommandDef[] = COMMANDS): string[] {
  return [...new Set(commands.map((c) => c.path[0] ?? ''))];
}
