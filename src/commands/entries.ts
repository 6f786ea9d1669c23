/** Entries: set, rm, show, ls, exposed, hosts, and import. */
import type { CommandDef } from './types.js';
import { entryArg, field, json } from './types.js';

export const ENTRIES: readonly CommandDef[] = [
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
    summary:
      'bind an entry to the hosts the proxy may send it to, or SSH host keys (--clear: any host)',
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
    path: ['entry', 'import-ssh'],
    summary: 'import an OpenSSH private key file: the key stays in the vault (ssh-agent signs)',
    side: 'owner',
    args: [
      entryArg,
      { name: 'file', summary: 'the private key file (unencrypted)', complete: 'file' },
    ],
    flags: [],
    notes: [
      'Prints the public key (an authorized_keys line). An encrypted key: import a decrypted copy (ssh-keygen -p -N "" -f <copy>), then delete the copy.',
      'Bind it to servers by host key: vault-cli entry hosts <entry> SHA256:<fingerprint>.',
    ],
    examples: ['vault-cli entry import-ssh deploy ~/.ssh/id_ed25519'],
    module: 'ssh-import',
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
        summary: 'put this before every imported name (e.g. "myapp-"; no "/")',
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
      'vault-cli import .env --prefix "myapp-"',
      'vault-cli import ~/Downloads/export.1pux --skip-existing',
      'vault-cli import --from pass',
    ],
    module: 'import',
  },
];
