/**
 * The shapes of the command table (table.ts) and the flags, arguments and
 * constants its groups share.
 */
/** The groups of the top-level `--help`, in order. */
export const SIDES = [
    { side: 'owner', title: 'for the owner (with the vault passphrase, never inside `run`)' },
    { side: 'agent', title: 'for agents (with the agent’s token)' },
    { side: 'local', title: 'host and set-up' },
];
export const json = { name: 'json', summary: 'machine-readable output' };
export const field = {
    name: 'field',
    value: 'string',
    metavar: '<name>',
    summary: 'field name (default: password)',
    complete: 'field',
};
export const noBrowser = {
    name: 'no-browser',
    summary: 'print the ceremony page’s URL only; do not open a browser',
};
/** The ceremony page on a fixed port, for an owner on another machine (docs/hardware-key.md). */
export const ceremonyPort = {
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
export const proxyPort = {
    name: 'port',
    value: 'count',
    summary: `port (default ${PROXY_PORT})`,
};
/** `proxy env --aws` and `run --aws`: the AWS surrogate of an entry (docs/proxy.md). */
export const awsFlag = {
    name: 'aws',
    value: 'string',
    metavar: '<entry>',
    summary: 'AWS variables holding no secret: the proxy re-signs with <entry>’s key pair (docs/proxy.md)',
    complete: 'none',
};
/** get, totp, render: the rule their help states (src/cli/pipe-only.ts). */
export const PIPE_ONLY = 'stdout must be a pipe: on a terminal or into a file it is refused (VLT-2050) and nothing is read.';
/** `run` and `exec`: the command and its arguments, after `--`. */
export const commandArg = {
    name: 'command',
    summary: 'the command and its arguments, after --',
    rest: true,
    afterDashes: true,
};
export const entryArg = { name: 'entry', summary: 'entry name', complete: 'entry' };
export const agentArg = { name: 'name', summary: 'agent name', complete: 'agent' };
export const COMMON_FIELDS = ['password', 'key', 'private_key', 'secret_key', 'token', 'totp'];
/** Coding agents `init` can leave the guardrail skill for (src/cli/skill.ts). */
export const SKILL_AGENTS = ['claude', 'codex', 'cursor', 'gemini', 'agents'];
/** Shells `vault-cli completion` writes scripts for. */
export const SHELLS = ['bash', 'zsh', 'fish'];
export const HELP_FLAG = { name: 'help', summary: 'show this help' };
/** `vault-cli --version`: the top level's one flag besides --help. */
export const VERSION_FLAG = {
    name: 'version',
    summary: 'print the version and the Node it runs on',
};
