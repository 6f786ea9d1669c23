// bash completion of entry names that hold spaces: the name goes onto the
// command line quoted, so `vault-cli entry show Stripe<TAB>` gives one word
// (`Stripe\ Prod`), as zsh and fish already did. Real bash, the committed
// script, and a vault-cli on PATH that answers `entry ls --json`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { COMPLETION_FILES, completionScript } from '../../src/commands/completion.js';
import { ROOT } from '../support/rig.js';

const NAMES = ['Stripe Prod', 'GitHub', "Bob's key", 'a&b'];
const home = mkdtempSync(join(tmpdir(), 'vault-cli-quoting-'));
after(() => rmSync(home, { recursive: true, force: true }));
writeFileSync(
  join(home, 'vault-cli'),
  `#!/bin/sh\ncat <<'JSON'\n${JSON.stringify(NAMES.map((name) => ({ name })))}\nJSON\n`,
  { mode: 0o755 },
);

test('completions/ is what src/commands/table.ts generates (npm run completions)', () => {
  for (const { shell, file } of COMPLETION_FILES) {
    assert.equal(
      readFileSync(join(ROOT, 'completions', file), 'utf8'),
      completionScript(shell),
      `completions/${file} is stale: run npm run completions`,
    );
  }
});

/**
 * Completes `words` (the last one under the cursor) in bash, then has bash
 * parse the command line with each candidate put in place of that word, as
 * readline would: returns the candidates and the word bash then sees.
 */
function complete(words: readonly string[]): { reply: string[]; parsed: string[] } {
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source ${join(ROOT, 'completions', 'vault-cli.bash')}
COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=()
_vault_cli vault-cli
for c in "\${COMPREPLY[@]}"; do
  printf 'reply\\t%s\\n' "$c"
  # A candidate inside an opened quote gets its closing quote from readline.
  q=; case "\${COMP_WORDS[COMP_CWORD]}" in \\'*) q=\\' ;; \\"*) q=\\" ;; esac
  prefix=; [[ -n "$q" ]] && prefix=$q
  eval "set -- $prefix$c$q"
  printf 'parsed\\t%s\\n' "$1"
done`,
      'bash',
      ...words,
    ],
    {
      encoding: 'utf8',
      env: {
        PATH: `${home}:${process.env.PATH ?? ''}`,
        HOME: home,
        LANG: 'C.UTF-8',
        VAULT_PASSPHRASE_FILE: join(home, 'passphrase'),
      },
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean);
  const of = (kind: string) =>
    lines.filter((l) => l.startsWith(`${kind}\t`)).map((l) => l.slice(kind.length + 1));
  return { reply: of('reply'), parsed: of('parsed') };
}

test('bash: a name with a space is inserted quoted, and the shell reads it as one word', () => {
  const all = complete(['vault-cli', 'entry', 'show', '']);
  assert.deepEqual([...all.parsed].sort(), [...NAMES].sort());
  assert.ok(all.reply.includes('Stripe\\ Prod'), all.reply.join(' | '));
  assert.ok(!all.reply.includes('Stripe Prod'), 'unquoted, it would be two words');

  const stripe = complete(['vault-cli', 'entry', 'show', 'Str']);
  assert.deepEqual(stripe.reply, ['Stripe\\ Prod']);
  assert.deepEqual(stripe.parsed, ['Stripe Prod']);
  // Quotes and shell characters in a name are quoted too.
  assert.deepEqual(complete(['vault-cli', 'entry', 'rm', 'Bob']).parsed, ["Bob's key"]);
  assert.deepEqual(complete(['vault-cli', 'entry', 'rm', 'a']).parsed, ['a&b']);
});

test('bash: a word already escaped or inside an opened quote completes the same name', () => {
  const escaped = complete(['vault-cli', 'entry', 'show', 'Stripe\\ P']);
  assert.deepEqual(escaped.reply, ['Stripe\\ Prod']);
  assert.deepEqual(escaped.parsed, ['Stripe Prod']);
  for (const open of ["'Str", '"Str']) {
    const quoted = complete(['vault-cli', 'entry', 'show', open]);
    assert.deepEqual(quoted.reply, ['Stripe Prod'], open);
    assert.deepEqual(quoted.parsed, ['Stripe Prod'], open);
  }
  // Flags that take an entry use the same names: --scope of run and agent add.
  assert.deepEqual(complete(['vault-cli', 'run', '--scope', 'Str']).parsed, ['Stripe Prod']);
  assert.deepEqual(complete(['vault-cli', 'agent', 'add', 'x', '--scope', 'Str']).reply, [
    'Stripe\\ Prod',
  ]);
});
