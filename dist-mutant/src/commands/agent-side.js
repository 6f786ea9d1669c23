/** The agent side: what an agent or script runs with its token (init, get, totp, proxy, render, exec, git-credential). */
import { GET, RENDER, TOTP } from './pipe-side.js';
import { awsFlag, commandArg, entryArg, field, PROXY_PORT, proxyPort, SKILL_AGENTS, } from './types.js';
export const AGENT_SIDE = [
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
    GET,
    TOTP,
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
            awsFlag,
        ],
        notes: [
            'By default NO_PROXY names localhost, 127.0.0.1 and ::1: a local service is reached directly and gets the literal reference.',
        ],
        examples: [
            'eval "$(vault-cli proxy env)"',
            'eval "$(vault-cli proxy env --port 8443)"',
            'eval "$(vault-cli proxy env --no-local-bypass)"',
            'eval "$(vault-cli proxy env --aws AWS)"; aws s3 ls',
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
        path: ['ssh-agent'],
        summary: 'serve an SSH agent on a Unix socket: the keys stay in the vault, the host signs',
        side: 'agent',
        args: [{ ...entryArg, complete: 'none', rest: true, summary: 'entries whose keys it offers' }],
        flags: [
            {
                name: 'socket',
                value: 'string',
                metavar: '<path>',
                summary: 'the socket to create (default: a new one in a private temp directory)',
                complete: 'file',
            },
        ],
        notes: [
            'Prints SSH_AUTH_SOCK=<path>; every signature is checked, counted and audited by the host.',
        ],
        examples: [
            'vault-cli ssh-agent --socket ~/.vault-ssh.sock deploy &',
            'SSH_AUTH_SOCK=~/.vault-ssh.sock git push',
        ],
        module: 'ssh-agent',
    },
    RENDER,
    {
        path: ['exec'],
        summary: 'run a command with vault values in its environment, and nowhere else',
        side: 'agent',
        args: [commandArg],
        flags: [
            {
                name: 'env',
                value: 'string',
                metavar: '<NAME=vault://entry/field>',
                repeat: true,
                summary: 'put the value in the command’s variable NAME (references in a longer text are replaced)',
                complete: 'none',
            },
            {
                name: 'keep-vault-env',
                summary: 'pass VAULT_TOKEN, VAULT_TOKEN_FILE and the other VAULT_* variables on to the command (warned)',
            },
        ],
        notes: [
            'For tools that read a credential only from their environment (DATABASE_URL, AWS and model SDKs).',
            'The command gets no VAULT_* variable (the token above all: it would hold the whole scope), unless --keep-vault-env.',
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
];
