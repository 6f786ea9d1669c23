// Lint rules that carry the architecture of docs/development.md (Layout):
// imports point inward, and each dangerous dependency has exactly one importer.
import tseslint from 'typescript-eslint';

const ours = (dirs) => dirs.map((d) => `**/${d}/**`);
const native = (name, home) => ({
  name,
  message: `only ${home} may import ${name} (one importer per dangerous dependency)`,
});
// Ink and react cost 0.4-0.9 s to load: only the dashboard imports them; the
// terminal emulator that mirrors the agent's screen belongs to the supervisor.
const uiOnly = [
  native('ink', 'tui/'),
  native('react', 'tui/'),
  native('@xterm/headless', 'shell/'),
  native('@xterm/addon-serialize', 'shell/'),
];
const restrict = (patterns, paths = [], ui = uiOnly) => ({
  'no-restricted-imports': ['error', { patterns, paths: [...paths, ...ui] }],
});

export default tseslint.config(
  { ignores: ['dist/**', '.dist-*/**', 'node_modules/**', 'completions/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.cts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test() and suite() return promises the runner awaits.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // node-pty is loaded lazily (so `get` never loads it): catch import('node-pty') too.
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportExpression[source.value='node-pty']",
          message: 'only shell/ may import node-pty (one importer per dangerous dependency)',
        },
      ],
      ...restrict(
        [],
        [
          native('sodium-native', 'src/crypto'),
          native('koffi', 'src/kernel'),
          native('lmdb', 'src/store'),
          native('pg', 'src/store'),
          native('node-pty', 'shell/'),
          native('fido2-lib', 'src/webauthn'),
        ],
      ),
    },
  },
  {
    // The dashboard: the only importer of ink and react, loaded only by run and dashboard.
    files: ['tui/**/*.ts', 'tui/**/*.tsx', 'test/**/*.tsx'],
    rules: restrict(
      [
        {
          group: ours(['store', 'cli']),
          message: 'the dashboard reaches the vault through its api',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
        native('node-pty', 'shell/'),
      ],
      [],
    ),
  },
  {
    // core is pure: no I/O, no native dependencies, nothing of ours.
    files: ['src/core/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours([
            'crypto',
            'store',
            'host',
            'client',
            'cli',
            'render',
            'proxy',
            'webauthn',
            'commands',
            'terminal',
            'sweep',
            'import',
          ]),
          message: 'core imports nothing of ours',
        },
        {
          regex: '^(node:)?(fs|fs/promises|net|tls|http|https|child_process|os|process|dgram|dns)$',
          message: 'core is pure: no I/O',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
  {
    // Feature rooms on the shared vocabulary: the command table (and the parser, help and
    // completions made from it), the terminal parser and filter, the import formats and
    // batches (import's reading of files, sources.ts, is its I/O). Pure: no I/O, nothing of
    // ours but core.
    files: [
      'src/commands/**/*.ts',
      'src/terminal/**/*.ts',
      'src/import/formats.ts',
      'src/import/zip.ts',
      'src/import/batches.ts',
    ],
    rules: restrict(
      [
        {
          group: ours(['crypto', 'store', 'host', 'client', 'cli', 'render', 'proxy', 'webauthn']),
          message: 'a pure feature room imports only core',
        },
        {
          regex: '^(node:)?(fs|fs/promises|net|tls|http|https|child_process|os|process|dgram|dns)$',
          message: 'a pure feature room does no I/O',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
  {
    // The transcript sweep: reads the owner's files, seals its backups; never the store or host.
    files: ['src/sweep/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours(['store', 'host', 'client', 'cli', 'proxy', 'webauthn']),
          message: 'the sweep gets what it needs of the vault through the cli',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
  {
    files: ['src/crypto/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours(['store', 'host', 'client', 'cli']),
          message: 'crypto sits below host and cli',
        },
      ],
      [native('lmdb', 'src/store'), native('pg', 'src/store'), native('koffi', 'src/kernel')],
    ),
  },
  {
    // The only importer of koffi (flock, SO_PEERCRED); host and client load it lazily.
    files: ['src/kernel/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours(['crypto', 'store', 'host', 'client', 'cli']),
          message: 'kernel sits below everything',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
      ],
    ),
  },
  {
    files: ['src/store/**/*.ts'],
    rules: restrict(
      [{ group: ours(['host', 'client', 'cli']), message: 'store sits below host and cli' }],
      [native('sodium-native', 'src/crypto')],
    ),
  },
  {
    files: ['src/host/**/*.ts'],
    rules: restrict(
      [{ group: ours(['client', 'cli']), message: 'host does not import its callers' }],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
  {
    // The client is what `get` loads: no store, no crypto engine, no host.
    files: ['src/client/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours(['store', 'host', 'cli']),
          message: 'the client talks to the host only over its socket',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
  {
    // The only importer of fido2-lib; the host and the CLI load it lazily.
    files: ['src/webauthn/**/*.ts'],
    rules: restrict(
      [
        {
          group: ours(['store', 'host', 'cli']),
          message: 'webauthn verifies and relays; it reaches the store only through the host',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
      ],
    ),
  },
  {
    // The supervisor: the only importer of node-pty, which it loads lazily.
    files: ['shell/**/*.ts'],
    rules: {
      'no-restricted-syntax': 'off',
      ...restrict(
        [
          {
            group: ours(['store', 'cli']),
            message: 'the supervisor sits below cli, beside the host',
          },
        ],
        [
          native('sodium-native', 'src/crypto'),
          native('koffi', 'src/kernel'),
          native('lmdb', 'src/store'),
          native('pg', 'src/store'),
          native('fido2-lib', 'src/webauthn'),
        ],
        uiOnly.filter((r) => !r.name.startsWith('@xterm/')),
      ),
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: restrict(
      [
        { group: ours(['store']), message: 'cli reaches the store only through the host' },
        {
          group: ours(['shell/linux']),
          message:
            'cli reaches a sandbox engine only through shell/engine.ts and shell/sandbox-engine.ts',
        },
      ],
      [
        native('sodium-native', 'src/crypto'),
        native('koffi', 'src/kernel'),
        native('lmdb', 'src/store'),
        native('pg', 'src/store'),
        native('fido2-lib', 'src/webauthn'),
      ],
    ),
  },
);
