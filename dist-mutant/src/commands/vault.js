import { json } from './types.js';
export const VAULT = [
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
];
