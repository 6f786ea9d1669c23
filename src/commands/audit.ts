/** What was released and where it leaked: sweep, audit, audit archive. */
import type { CommandDef } from './types.js';
import { json } from './types.js';

export const AUDIT: readonly CommandDef[] = [
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
];
