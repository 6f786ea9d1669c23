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
  /** What the value is, as help shows it (`--allow-write <dir>`); counts are `<n>`. */
  readonly metavar?: string;
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
  /** Given after `--` (help shows `-- <command>...`). */
  readonly afterDashes?: boolean;
  readonly complete?: Completion;
  readonly choices?: readonly string[];
}

export type Side = 'owner' | 'agent' | 'local';

/** The groups of the top-level `--help`, in order. */
export const SIDES: readonly { readonly side: Side; readonly title: string }[] = [
  { side: 'owner', title: 'for the owner (with the vault passphrase, never inside `run`)' },
  { side: 'agent', title: 'for agents (with the agent’s token)' },
  { side: 'local', title: 'host and set-up' },
];

export interface CommandDef {
  /** Words that name the command, e.g. ['entry', 'set']. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Who runs it: an agent with a token, the owner with a passphrase, or anyone (host and set-up). */
  readonly side: Side;
  readonly args: readonly ArgDef[];
  readonly flags: readonly FlagDef[];
  /** More lines for `--help`, after the summary: what the summary cannot say in one line. */
  readonly notes?: readonly string[];
  /** Command lines `--help` shows, each a complete `vault-cli ...` line. */
  readonly examples: readonly string[];
  /** The module under src/cli/commands that runs it. */
  readonly module: string;
}

const json: FlagDef = { name: 'json', summary: 'machine-readable output' };
const field: FlagDef = {
  name: 'field',
  value: 'string',
  metavar: '<name>',
  summary: 'field name (default: password)',
  complete: 'field',
};
const noBrowser: FlagDef = {
  name: 'no-browser',
  summary: 'print the ceremony page’s URL only; do not open a browser',
};
/** The ceremony page on a fixed port, for an owner on another machine (docs/hardware-key.md). */
const ceremonyPort: FlagDef = {
  name: 'port',
  value: 'count',
  summary: 'serve the ceremony page on this port of 127.0.0.1 (to forward it with ssh -L)',
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
/** get, totp, render: the rule their help states (src/cli/pipe-only.ts). */
const PIPE_ONLY =
  'stdout must be a pipe: on a terminal or into a file it is refused (VLT-2050) and nothing is read.';
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
        metavar: '<agent>',
        summary: 'install the guardrail skill for this agent only (created if absent)',
        choices: SKILL_AGENTS,
      },
      { name: 'no-skill', summary: 'do not install the guardrail skill for coding agents' },
    ],
    notes: ['The token never goes on the command line: pipe it in, or type it at the prompt.'],
    examples: ['echo "$VAULT_TOKEN" | vault-cli init', 'vault-cli init --skill claude'],
    module: 'init',
  },
  {
    path: ['get'],
    summary: 'print one field of an entry into a pipe',
    side: 'agent',
    args: [{ ...entryArg, complete: 'none' }],
    flags: [field],
    notes: [PIPE_ONLY],
    examples: [
      'vault-cli get "Stripe Prod" --field key | app --api-key-stdin',
      'vault-cli get GitHub --field token | gh auth login --with-token',
    ],
    module: 'get',
  },
  {
    path: ['totp'],
    summary: 'print the current one-time code of an entry into a pipe',
    side: 'agent',
    args: [{ ...entryArg, complete: 'none' }],
    flags: [],
    notes: [PIPE_ONLY],
    examples: ['vault-cli totp GitHub | app --otp-stdin'],
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
        metavar: '<file>',
        repeat: true,
        summary: 'also trust this PEM file for upstream servers (tests, private CAs)',
        complete: 'file',
      },
    ],
    notes: ['It puts the value of a vault:// reference in a request header; nothing else changes.'],
    examples: [
      'vault-cli proxy &',
      'eval "$(vault-cli proxy env)"',
      "curl -H 'Authorization: Bearer vault://GitHub/token' https://api.github.com/user",
    ],
    module: 'proxy',
  },
  {
    path: ['proxy', 'env'],
    summary: 'print the shell lines that route a tool through the proxy',
    side: 'agent',
    args: [],
    flags: [
      proxyPort,
      {
        name: 'no-local-bypass',
        summary: 'send this machine’s own services through the proxy too (NO_PROXY empty)',
      },
    ],
    notes: [
      'By default NO_PROXY names localhost, 127.0.0.1 and ::1: a local service is reached directly and gets the literal reference.',
    ],
    examples: [
      'eval "$(vault-cli proxy env)"',
      'eval "$(vault-cli proxy env --port 8443)"',
      'eval "$(vault-cli proxy env --no-local-bypass)"',
    ],
    module: 'proxy',
  },
  {
    path: ['proxy', 'ca'],
    summary: 'print the path of the proxy’s CA certificate',
    side: 'agent',
    args: [],
    flags: [],
    examples: ['vault-cli proxy ca', 'curl --cacert "$(vault-cli proxy ca)" https://example.com'],
    module: 'proxy',
  },
  {
    path: ['render'],
    summary: 'print a template with every vault:// reference replaced, into a pipe',
    side: 'agent',
    args: [{ name: 'file', summary: 'template file, or - for stdin', complete: 'file' }],
    flags: [
      {
        name: 'format',
        value: 'string',
        metavar: '<json|yaml|toml|env|raw>',
        summary: 'how values are escaped (default: by the file’s extension)',
        choices: ['json', 'yaml', 'toml', 'env', 'raw'],
      },
      { name: 'raw', summary: 'insert values as they are (same as --format raw)' },
      {
        name: 'watch',
        summary: 'render again to stdout whenever the template or a value it uses changes',
      },
    ],
    notes: [
      'All or nothing: when a reference cannot be resolved, nothing is written and each bad one is named.',
      '- reads the template from stdin (< file streams; a pipe is held in memory).',
      PIPE_ONLY,
    ],
    examples: [
      'vault-cli render app.yaml | app --config -',
      'vault-cli render - < .env.tpl | docker run --env-file /dev/stdin app',
    ],
    module: 'render',
  },
  {
    path: ['exec'],
    summary: 'run a command with vault values in its environment, and nowhere else',
    side: 'agent',
    args: [
      {
        name: 'command',
        summary: 'the command and its arguments, after --',
        rest: true,
        afterDashes: true,
      },
    ],
    flags: [
      {
        name: 'env',
        value: 'string',
        metavar: '<NAME=vault://entry/field>',
        repeat: true,
        summary:
          'put the value in the command’s variable NAME (references in a longer text are replaced)',
        complete: 'none',
      },
    ],
    notes: [
      'For tools that read a credential only from their environment (DATABASE_URL, AWS and model SDKs).',
      'One request resolves every reference, audited and charged like render; when one is refused, the command is not started.',
      'The command replaces vault-cli: its exit status and signals are its own. Its environment holds the values (docs/threat-model.md).',
    ],
    examples: [
      "vault-cli exec --env 'DATABASE_URL=vault://App DB/url' -- psql -c 'select 1'",
      'vault-cli exec --env AWS_ACCESS_KEY_ID=vault://AWS/id --env AWS_SECRET_ACCESS_KEY=vault://AWS/secret -- aws s3 ls',
    ],
    module: 'exec',
  },
  {
    path: ['git-credential'],
    summary: 'git credential helper: hands git a vault:// reference as the password',
    side: 'agent',
    args: [
      {
        name: 'action',
        summary: 'get, store or erase (git adds it); only get answers',
        choices: ['get', 'store', 'erase'],
      },
    ],
    flags: [
      {
        name: 'entry',
        value: 'string',
        metavar: '<entry>',
        summary: 'the entry whose field is the password (required)',
        complete: 'none',
      },
      { ...field, summary: 'the field that is the password (default: password)' },
      {
        name: 'username',
        value: 'string',
        metavar: '<name>',
        summary: 'the user name git sends (default: the URL’s, else x-access-token)',
      },
    ],
    notes: [
      'git sends the reference as Basic credentials through the proxy, which fills it: git never holds the token.',
      'It never calls the vault host; the proxy and the host judge the fill (scope, host binding, limits).',
    ],
    examples: [
      "git config --global credential.https://github.com.helper '!vault-cli git-credential --entry GitHub --field token'",
      "printf 'protocol=https\\nhost=github.com\\n\\n' | vault-cli git-credential --entry GitHub get",
    ],
    module: 'git-credential',
  },
  {
    path: ['run'],
    summary: 'run a command as an agent under a session token that dies with it',
    side: 'owner',
    args: [
      {
        name: 'command',
        summary: 'the command and its arguments, after --',
        rest: true,
        afterDashes: true,
      },
    ],
    flags: [
      {
        name: 'agent',
        value: 'string',
        metavar: '<name>',
        summary: 'agent to act as (default: the command’s name)',
        complete: 'agent',
      },
      {
        name: 'scope',
        value: 'string',
        metavar: '<entry>',
        repeat: true,
        summary: 'narrow the session to this entry',
        complete: 'entry',
      },
      {
        name: 'keep-env',
        value: 'string',
        metavar: '<VAR>',
        repeat: true,
        summary: 'pass this secret-looking variable through',
        complete: 'none',
      },
      {
        name: 'upstream-ca',
        value: 'string',
        metavar: '<file>',
        repeat: true,
        summary: 'also trust this PEM file for upstream servers in the proxy (tests, private CAs)',
        complete: 'file',
      },
      {
        name: 'profile',
        value: 'string',
        metavar: '<name>',
        summary:
          'agent profile: claude, codex, gemini, aider, shell, none, or your own (default: from the command’s name)',
        complete: 'none',
      },
      {
        name: 'model-key',
        value: 'string',
        metavar: '<entry>',
        summary:
          'entry holding the model provider’s key, passed as a vault:// reference (none: pass nothing)',
        complete: 'entry',
      },
      {
        name: 'print-policy',
        summary:
          'print what the agent could read, write and reach, and which variables pass; start nothing',
      },
      {
        name: 'allow-write',
        value: 'string',
        metavar: '<path>',
        repeat: true,
        summary: 'let the sandboxed agent write this directory or file too',
        complete: 'file',
      },
      {
        name: 'allow-read',
        value: 'string',
        metavar: '<path>',
        repeat: true,
        summary: 'keep this credential store (~/.ssh, ~/.aws, ...) readable to the sandboxed agent',
        complete: 'file',
      },
      {
        name: 'allow-net',
        value: 'string',
        metavar: '<host:port>',
        repeat: true,
        summary: 'let the sandboxed agent connect directly to host:port',
        complete: 'none',
      },
      {
        name: 'max-procs',
        value: 'string',
        metavar: '<n>',
        summary: `the most processes and threads the sandboxed agent may have at once (default ${DEFAULT_MAX_PROCS})`,
        complete: 'none',
      },
      {
        name: 'no-sandbox',
        summary: 'run the agent without the OS sandbox, as you (warned and audited)',
      },
      { name: 'allow-title', summary: "let the agent set the terminal's window title" },
      {
        name: 'no-pty',
        summary:
          'no pseudo-terminal: stdout and stderr apart, bytes intact (default without a terminal)',
      },
      noBrowser,
    ],
    notes: [
      'The command runs in an OS sandbox (bubblewrap) with its own proxy; Ctrl-] shows the dashboard and back.',
      'Inside it, owner commands are refused (VLT-2051): run them in another terminal.',
    ],
    examples: [
      'vault-cli run --agent claude -- claude',
      'vault-cli run --print-policy -- claude',
      'vault-cli run --agent ci --scope "Stripe Prod" -- npm test',
      'vault-cli run --allow-write ~/src/app --allow-net localhost:5432 -- claude',
    ],
    module: 'run',
  },
  {
    path: ['unlock'],
    summary:
      'open an owner session: owner commands on this terminal ask no passphrase until it ends',
    side: 'owner',
    args: [],
    flags: [
      {
        name: 'for',
        value: 'count',
        summary: 'minutes the session lasts at most (default 15, at most 720)',
      },
      {
        name: 'idle',
        value: 'count',
        summary: 'minutes without an owner command that end it sooner (default 5)',
      },
    ],
    notes: [
      'Bound to this terminal and its login session, as the kernel names them, like sudo: another terminal, and anything inside `vault-cli run`, still needs the passphrase.',
      '`vault-cli lock` ends it; stopping the vault host ends every session.',
    ],
    examples: ['vault-cli unlock', 'vault-cli unlock --for 60 --idle 10'],
    module: 'unlock',
  },
  {
    path: ['lock'],
    summary: "end this terminal's owner session",
    side: 'owner',
    args: [],
    flags: [],
    examples: ['vault-cli lock'],
    module: 'lock',
  },
  {
    path: ['dashboard'],
    summary: 'the live dashboard of agents, reads and lockdowns, and the vault UI',
    side: 'owner',
    args: [],
    flags: [noBrowser],
    examples: ['vault-cli dashboard'],
    module: 'dashboard',
  },
  {
    path: ['vault', 'create'],
    summary: 'create a new vault (prints a recovery key once)',
    side: 'owner',
    args: [],
    flags: [
      {
        name: 'store',
        summary: 'create it in a PostgreSQL database, for several hosts (docs/team.md)',
        value: 'string',
        metavar: '<postgresql://...>',
      },
    ],
    notes: [
      'The vault goes in VAULT_DIR, or the default data directory (docs/files.md).',
      'With --store, the database holds the vault and VAULT_DIR the host socket and local state; the URL carries no password (use a PGPASSFILE).',
    ],
    examples: [
      'vault-cli vault create',
      'VAULT_DIR=~/work-vault vault-cli vault create',
      'vault-cli vault create --store postgresql://vault@db.internal/vault',
    ],
    module: 'vault',
  },
  {
    path: ['vault', 'migrate'],
    summary: 'move the vault to PostgreSQL or back to the LMDB file, verified record by record',
    side: 'owner',
    args: [],
    flags: [
      {
        name: 'to',
        summary: 'a postgresql:// URL, or `lmdb` for the file in VAULT_DIR',
        value: 'string',
        metavar: '<url|lmdb>',
      },
      json,
    ],
    examples: [
      'vault-cli vault migrate --to postgresql://vault@db.internal/vault',
      'vault-cli vault migrate --to lmdb',
    ],
    module: 'vault',
  },
  {
    path: ['vault', 'passwd'],
    summary: 'change the owner passphrase',
    side: 'owner',
    args: [],
    flags: [{ name: 'recovery', summary: 'authenticate with the recovery key instead' }],
    examples: ['vault-cli vault passwd', 'vault-cli vault passwd --recovery'],
    module: 'vault',
  },
  {
    path: ['vault', 'backup'],
    summary: 'write a consistent, encrypted copy of the vault to a file, atomically',
    side: 'owner',
    args: [{ name: 'file', summary: 'the backup file to write', complete: 'file' }],
    flags: [json],
    examples: ['vault-cli vault backup ~/backups/vault-$(date +%F).mdb'],
    module: 'vault',
  },
  {
    path: ['vault', 'check'],
    summary: 'verify every record, seal, index row and the audit chain; exit 74 on damage',
    side: 'owner',
    args: [],
    flags: [json],
    examples: ['vault-cli vault check'],
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
    examples: [
      'vault-cli vault restore --dry-run ~/backups/vault-2026-11-01.mdb',
      'vault-cli vault restore ~/backups/vault-2026-11-01.mdb',
    ],
    module: 'vault',
  },
  {
    path: ['vault', 'rekey'],
    summary: 'make a new root key and print a new recovery key (the old one stops working)',
    side: 'owner',
    args: [],
    flags: [],
    examples: ['vault-cli vault rekey'],
    module: 'vault',
  },
  {
    path: ['entry', 'set'],
    summary: 'create an entry or rotate one of its fields (value from stdin or a prompt)',
    side: 'owner',
    args: [entryArg],
    flags: [
      field,
      {
        name: 'tier',
        value: 'string',
        metavar: '<tier>',
        summary: 'tier of a new entry (default: default)',
      },
    ],
    examples: [
      'printf \'sk_live_x\' | vault-cli entry set "Stripe Prod" --field key',
      'vault-cli entry set GitHub --field token     # asks for the value, without echo',
    ],
    module: 'entry',
  },
  {
    path: ['entry', 'rm'],
    summary: 'remove an entry',
    side: 'owner',
    args: [entryArg],
    flags: [],
    examples: ['vault-cli entry rm "Old API"'],
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
    examples: ['vault-cli entry show GitHub', 'vault-cli entry show GitHub --reveal --field token'],
    module: 'entry',
  },
  {
    path: ['entry', 'ls'],
    summary: 'list entries',
    side: 'owner',
    args: [],
    flags: [json],
    examples: ['vault-cli entry ls', 'vault-cli entry ls --json'],
    module: 'entry',
  },
  {
    path: ['entry', 'exposed'],
    summary: 'list the fields a transcript sweep found: the rotation checklist',
    side: 'owner',
    args: [],
    flags: [json],
    notes: ['A field leaves the list when it is set anew (`vault-cli entry set`).'],
    examples: ['vault-cli entry exposed', 'vault-cli entry exposed --json'],
    module: 'entry',
  },
  {
    path: ['entry', 'hosts'],
    summary: 'bind an entry to the hosts the proxy may send it to (--clear: any host)',
    side: 'owner',
    args: [entryArg, { name: 'host', summary: 'host name', optional: true, rest: true }],
    flags: [{ name: 'clear', summary: 'remove the binding' }],
    examples: [
      'vault-cli entry hosts GitHub api.github.com',
      'vault-cli entry hosts GitHub --clear',
    ],
    module: 'entry',
  },
  {
    path: ['import'],
    summary: 'create entries from a .env file, a 1Password export or a pass store (one unlock)',
    side: 'owner',
    args: [
      {
        name: 'source',
        summary: 'the file (pass: the store, default $PASSWORD_STORE_DIR or ~/.password-store)',
        optional: true,
        complete: 'file',
      },
    ],
    flags: [
      {
        name: 'from',
        value: 'string',
        metavar: '<format>',
        summary: 'dotenv, 1pux, 1password-csv or pass (default: by the file name)',
        choices: ['dotenv', '1pux', '1password-csv', 'pass'],
      },
      { name: 'dry-run', summary: 'list the entries and field names it would create; no values' },
      { name: 'overwrite', summary: 'set the imported fields of entries that already exist' },
      { name: 'skip-existing', summary: 'leave entries that already exist as they are' },
      {
        name: 'prefix',
        value: 'string',
        metavar: '<text>',
        summary: 'put this before every imported name (e.g. "myapp/")',
      },
      { ...field, summary: 'dotenv: the field each variable goes in (default: password)' },
      {
        name: 'entry',
        value: 'string',
        metavar: '<entry>',
        summary: 'dotenv: one entry whose fields are the variables',
        complete: 'none',
      },
      {
        name: 'tier',
        value: 'string',
        metavar: '<tier>',
        summary: 'tier of the new entries (default: default)',
      },
      json,
    ],
    notes: [
      'An entry that already exists is not touched: the import is refused naming it, unless --overwrite or --skip-existing.',
      'Values are read from the file and sent to the host; they never go on a command line or in output.',
      'A symbolic link is refused: give the file it points to.',
    ],
    examples: [
      'vault-cli import .env --dry-run',
      'vault-cli import .env --prefix "myapp/"',
      'vault-cli import ~/Downloads/export.1pux --skip-existing',
      'vault-cli import --from pass',
    ],
    module: 'import',
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
        metavar: '<entry>',
        repeat: true,
        summary: 'entry the agent may read',
        complete: 'entry',
      },
      {
        name: 'kind',
        value: 'string',
        metavar: '<ai|script>',
        summary: 'what the agent is (default: ai)',
        choices: ['ai', 'script'],
      },
      {
        name: 'per-minute',
        value: 'count',
        summary: 'distinct credentials per minute (default 3)',
      },
      { name: 'per-hour', value: 'count', summary: 'distinct credentials per hour (default 10)' },
      {
        name: 'values-per-minute',
        value: 'count',
        summary: 'credentials released per minute, re-reads included (default 600)',
      },
    ],
    notes: ['The token is printed once, on stdout; the agent stores it with `vault-cli init`.'],
    examples: [
      'vault-cli agent add claude --scope "Stripe Prod" --scope GitHub',
      'vault-cli agent add deploy --kind script --scope Prod | ssh ci "vault-cli init"',
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'ls'],
    summary: 'list agents',
    side: 'owner',
    args: [],
    flags: [json],
    examples: ['vault-cli agent ls'],
    module: 'agent',
  },
  {
    path: ['agent', 'show'],
    summary: 'show an agent’s scope, limits, state and current reads',
    side: 'owner',
    args: [agentArg],
    flags: [json],
    examples: ['vault-cli agent show claude'],
    module: 'agent',
  },
  {
    path: ['agent', 'wrap'],
    summary: 'make shell-init wrap a command so it runs under run --agent <name>',
    side: 'owner',
    args: [agentArg],
    flags: [
      {
        name: 'command',
        value: 'string',
        metavar: '<command>',
        summary: 'the command to wrap (default: the agent name)',
      },
      { name: 'rm', summary: 'stop wrapping it' },
    ],
    examples: ['vault-cli agent wrap claude', 'vault-cli agent wrap claude --rm'],
    module: 'wrap',
  },
  {
    path: ['agent', 'scope'],
    summary: 'add entries to or remove them from an agent’s scope',
    side: 'owner',
    args: [agentArg],
    flags: [
      {
        name: 'add',
        value: 'string',
        metavar: '<entry>',
        repeat: true,
        summary: 'entry to add',
        complete: 'entry',
      },
      {
        name: 'rm',
        value: 'string',
        metavar: '<entry>',
        repeat: true,
        summary: 'entry to remove',
        complete: 'entry',
      },
    ],
    examples: ['vault-cli agent scope claude --add "Stripe Prod" --rm Payroll'],
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
      {
        name: 'values-per-minute',
        value: 'count',
        summary: 'credentials released per minute, re-reads included',
      },
    ],
    examples: [
      'vault-cli agent limits claude --per-minute 5 --per-hour 20',
      'vault-cli agent limits crawler --values-per-minute 3000',
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'lock'],
    summary: 'lock an agent now',
    side: 'owner',
    args: [agentArg],
    flags: [],
    examples: ['vault-cli agent lock claude'],
    module: 'agent',
  },
  {
    path: ['agent', 'unlock'],
    summary: 'lift an agent’s lockdown with an enrolled hardware key (WebAuthn, in a browser)',
    side: 'owner',
    args: [agentArg],
    flags: [noBrowser, ceremonyPort],
    examples: [
      'vault-cli agent unlock claude',
      'vault-cli agent unlock claude --port 8765 --no-browser',
    ],
    module: 'agent',
  },
  {
    path: ['agent', 'revoke'],
    summary: 'revoke an agent’s token for good',
    side: 'owner',
    args: [{ ...agentArg, optional: true }],
    flags: [
      {
        name: 'id',
        value: 'string',
        metavar: '<id>',
        summary: 'the agent by its id (agent ls --json), when its name no longer finds it',
      },
    ],
    notes: [
      'The agent is revoked first; the entries it held are rotated after. An entry that cannot be rotated is named and the exit status is not 0, but the agent stays revoked.',
    ],
    examples: ['vault-cli agent revoke claude', 'vault-cli agent revoke --id 3f2a…'],
    module: 'agent',
  },
  {
    path: ['key', 'add'],
    summary: 'enrol a hardware key (FIDO2, in a browser); enrol two',
    side: 'owner',
    args: [],
    flags: [
      {
        name: 'name',
        value: 'string',
        metavar: '<name>',
        summary: 'name of the key (default: key-<n>)',
      },
      {
        name: 'recovery',
        summary: 'confirm with the recovery key instead of an enrolled key (a lost key)',
      },
      noBrowser,
      ceremonyPort,
    ],
    examples: ['vault-cli key add --name yubikey-blue', 'vault-cli key add --recovery'],
    module: 'key',
  },
  {
    path: ['key', 'ls'],
    summary: 'list enrolled hardware keys',
    side: 'owner',
    args: [],
    flags: [json],
    examples: ['vault-cli key ls'],
    module: 'key',
  },
  {
    path: ['key', 'rm'],
    summary: 'remove an enrolled hardware key',
    side: 'owner',
    args: [{ name: 'name', summary: 'key name' }],
    flags: [],
    examples: ['vault-cli key rm key-1'],
    module: 'key',
  },
  {
    path: ['sweep'],
    summary: 'find released values in agents’ transcripts and shell histories (never printed)',
    side: 'owner',
    args: [],
    flags: [
      {
        name: 'path',
        value: 'string',
        metavar: '<file|dir>',
        repeat: true,
        summary: 'also sweep this file or directory',
        complete: 'file',
      },
      { name: 'paths-only', summary: 'sweep only the --path places, not the known stores' },
      {
        name: 'since',
        value: 'string',
        metavar: '<time|span>',
        summary: 'values released from a time or back a span (default: ever)',
      },
      { name: 'stored', summary: 'also look for stored values never released' },
      { name: 'redact', summary: 'rewrite each file with the vault:// reference in place' },
      {
        name: 'backup',
        value: 'string',
        metavar: '<dir>',
        summary: 'with --redact: keep each original there, sealed (only the owner opens it)',
        complete: 'file',
      },
      {
        name: 'open-backup',
        value: 'string',
        metavar: '<file>',
        summary: 'print the original a sealed backup holds (and do nothing else)',
        complete: 'file',
      },
      { name: 'watch', summary: 'keep sweeping what the agents write, as they write it' },
      {
        name: 'max-file-size',
        value: 'count',
        summary: 'skip files larger than this many MiB (default 1024)',
      },
      json,
    ],
    notes: [
      'Known stores: ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, Aider’s history, shell histories.',
      'Reports file, line, entry and field, and the form found (plain, base64, url, json); never the value.',
      'Each field found is marked exposed until set anew; exit 1 when a finding is left in place.',
    ],
    examples: [
      'vault-cli sweep',
      'vault-cli sweep --since 7d --redact',
      'vault-cli sweep --path ./logs --stored',
      'vault-cli sweep --watch --redact',
      'vault-cli sweep --redact --backup ~/sweep-backups',
    ],
    module: 'sweep',
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
        metavar: '<name>',
        summary: 'records by or about this agent',
        complete: 'agent',
      },
      {
        name: 'since',
        value: 'string',
        metavar: '<time|span>',
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
        metavar: '<file>',
        repeat: true,
        summary: 'with --verify: verify this archive file and its link into the store',
        complete: 'file',
      },
    ],
    notes: [
      'Columns: TIME ACTION ENTRY ACTOR, and ABOUT: the agent (or what) an owner action was about.',
    ],
    examples: [
      'vault-cli audit --agent claude --since 2h',
      'vault-cli audit --follow',
      'vault-cli audit --verify --archive ~/backups/audit-2026-11-01.arc',
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
        metavar: '<time|span>',
        summary: 'archive records before this time (2026-11-01) or older than a span (30d)',
      },
    ],
    examples: ['vault-cli audit archive --before 90d ~/backups/audit-$(date +%F).arc'],
    module: 'audit',
  },
  {
    path: ['shell-init'],
    summary: 'print the lines to eval in a shell: completion and the agent wrappers',
    side: 'local',
    args: [{ name: 'shell', summary: 'bash, zsh or fish', choices: SHELLS }],
    flags: [],
    examples: ['eval "$(vault-cli shell-init bash)"     # in ~/.bashrc'],
    module: 'shell-init',
  },
  {
    path: ['completion'],
    summary: 'print the shell completion script for bash, zsh or fish',
    side: 'local',
    args: [{ name: 'shell', summary: 'bash, zsh or fish', choices: SHELLS }],
    flags: [],
    examples: [
      'vault-cli completion bash > ~/.local/share/bash-completion/completions/vault-cli',
      'vault-cli completion fish > ~/.config/fish/completions/vault-cli.fish',
    ],
    module: 'completion',
  },
  {
    path: ['daemon'],
    summary: 'run the vault host in the foreground',
    side: 'local',
    args: [],
    flags: [],
    notes: ['Any command that finds no host starts one in the background; this runs it in front.'],
    examples: ['vault-cli daemon'],
    module: 'daemon',
  },
  {
    path: ['daemon', 'stop'],
    summary: 'stop the running vault host',
    side: 'owner',
    args: [],
    flags: [],
    examples: ['vault-cli daemon stop'],
    module: 'daemon',
  },
  {
    path: ['daemon', 'status'],
    summary: 'say whether a vault host is running (exit 3 when none)',
    side: 'local',
    args: [],
    flags: [json],
    examples: ['vault-cli daemon status'],
    module: 'daemon',
  },
  {
    path: ['host', 'install'],
    summary: 'as root: run the vault host as its own system user (hardened mode)',
    side: 'local',
    args: [],
    flags: [
      {
        name: 'user',
        value: 'string',
        metavar: '<user>',
        summary: 'the host’s system user (default vault-cli)',
      },
      {
        name: 'group',
        value: 'string',
        metavar: '<group>',
        summary: 'the group whose members reach the host (default vault-cli)',
      },
      {
        name: 'state-dir',
        value: 'string',
        metavar: '<dir>',
        summary: 'the store, only the host’s user enters it (default /var/lib/vault-cli)',
        complete: 'file',
      },
      {
        name: 'socket-dir',
        value: 'string',
        metavar: '<dir>',
        summary: 'the socket, reachable by the group (default /run/vault-cli)',
        complete: 'file',
      },
      {
        name: 'member',
        value: 'string',
        metavar: '<user>',
        repeat: true,
        summary: 'a user to add to the group',
      },
      {
        name: 'move',
        value: 'string',
        metavar: '<dir>',
        summary: 'move this same-user vault directory’s store into the hardened host',
        complete: 'file',
      },
      { name: 'no-systemd', summary: 'write no service unit; print how to start the host' },
    ],
    examples: ['sudo vault-cli host install --member alice'],
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
        metavar: '<dir>',
        summary: 'move the store to this directory, owned by --owner',
        complete: 'file',
      },
      {
        name: 'owner',
        value: 'string',
        metavar: '<user>',
        summary: 'the user who gets the moved store',
      },
      { name: 'purge', summary: 'delete the hardened host’s store' },
    ],
    examples: ['sudo vault-cli host uninstall --move-to /home/alice/vault --owner alice'],
    module: 'host',
  },
  {
    path: ['host', 'status'],
    summary: 'say which mode is in use (same-user or hardened) and whether the host runs',
    side: 'local',
    args: [],
    flags: [json],
    examples: ['vault-cli host status'],
    module: 'host',
  },
  {
    path: ['help'],
    summary: 'show the help of a command or a group (the same as <command> --help)',
    side: 'local',
    args: [{ name: 'command', summary: 'a command or group', optional: true, rest: true }],
    flags: [],
    examples: ['vault-cli help run', 'vault-cli help agent add'],
    module: 'help',
  },
];

export const HELP_FLAG: FlagDef = { name: 'help', summary: 'show this help' };

/** `vault-cli --version`: the top level's one flag besides --help. */
export const VERSION_FLAG: FlagDef = {
  name: 'version',
  summary: 'print the version and the Node it runs on',
};

/** Groups of commands, for `vault-cli --help` and for completing the first word. */
export function topLevelWords(commands: readonly CommandDef[] = COMMANDS): string[] {
  return [...new Set(commands.map((c) => c.path[0] ?? ''))];
}
