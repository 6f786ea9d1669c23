/**
 * The three commands that put a value into a pipe (get, totp, render), in a
 * file of their own: src/cli/pipe-main.ts parses them with this file alone
 * (parse.ts), so their start-up loads neither the rest of the table nor the
 * help. agent-side.ts lists them in their place among the agent's commands.
 */
import { entryArg, field, PIPE_ONLY, type CommandDef } from './types.js';

export const GET: CommandDef = {
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
};

export const TOTP: CommandDef = {
  path: ['totp'],
  summary: 'print the current one-time code of an entry into a pipe',
  side: 'agent',
  args: [{ ...entryArg, complete: 'none' }],
  flags: [],
  notes: [PIPE_ONLY],
  examples: ['vault-cli totp GitHub | app --otp-stdin'],
  module: 'totp',
};

export const RENDER: CommandDef = {
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
};

/** get, totp and render, as pipe-main.ts and full.ts hand them to parse.ts. */
export const PIPE_SIDE: readonly CommandDef[] = [GET, TOTP, RENDER];
