/** `run` and the terminal it supervises: run, unlock, lock, dashboard. */
import type { CommandDef } from './types.js';
import { awsFlag, commandArg, DEFAULT_MAX_PROCS, noBrowser } from './types.js';

export const RUN: readonly CommandDef[] = [
  {
    path: ['run'],
    summary: 'run a command as an agent under a session token that dies with it',
    side: 'owner',
    args: [commandArg],
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
      awsFlag,
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
      {
        name: 'ssh',
        value: 'string',
        metavar: '<entry>',
        repeat: true,
        summary: 'offer this entry’s SSH key through SSH_AUTH_SOCK; the host signs (docs/ssh.md)',
        complete: 'entry',
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
    path: ['held'],
    summary: 'list what `run` held of agents’ state (one session, or all)',
    side: 'owner',
    args: [
      { name: 'session', summary: 'the session `run` named', optional: true, complete: 'none' },
    ],
    flags: [],
    notes: [
      'What an agent made or changed in its state that its profile does not keep (docs/run.md).',
    ],
    examples: ['vault-cli held', 'vault-cli held 20261129-043000-a1b2c3'],
    module: 'held',
  },
  {
    path: ['held', 'restore'],
    summary: 'bring back into your home what `run` held (one path, or all of a session)',
    side: 'owner',
    args: [
      { name: 'session', summary: 'the session `run` named', complete: 'none' },
      {
        name: 'path',
        summary: 'the path as `run` named it (default: all)',
        optional: true,
        complete: 'file',
      },
    ],
    flags: [],
    examples: [
      "vault-cli held restore 20261129-043000-a1b2c3 '~/.claude/rules/style.md'",
      'vault-cli held restore 20261129-043000-a1b2c3',
    ],
    module: 'held',
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
];
