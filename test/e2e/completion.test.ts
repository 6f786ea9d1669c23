// Completion scripts: generated from the command table, committed in
// completions/, and answering real shells the way the table says.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { COMMON_FIELDS, topLevelWords } from '../../src/commands/table.js';
import { COMPLETION_FILES, completionScript } from '../../src/commands/completion.js';
import { CLI, ROOT } from '../support/rig.js';

const dir = join(ROOT, 'completions');
const cwd = mkdtempSync(join(tmpdir(), 'vault-cli-completion-'));
writeFileSync(join(cwd, 'app.yaml'), 'a: vault://x/y\n');
writeFileSync(join(cwd, 'app.env'), 'A=vault://x/y\n');
after(() => rmSync(cwd, { recursive: true, force: true }));

function has(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

function sh(shell: string, args: string[], script: string): string {
  const r = spawnSync(shell, [...args, script], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8' },
    // Only a guard against a shell that never answers; nothing waits on a clock.
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `${r.error?.message ?? ''} ${r.stderr}`);
  return r.stdout;
}

test('completions/ holds exactly what the command table generates (npm run completions)', () => {
  for (const { shell, file } of COMPLETION_FILES) {
    assert.equal(
      readFileSync(join(dir, file), 'utf8'),
      completionScript(shell),
      `completions/${file} is stale: run npm run completions`,
    );
  }
});

test('vault-cli completion <shell> prints the committed file', () => {
  for (const { shell, file } of COMPLETION_FILES) {
    const r = spawnSync(process.execPath, [CLI, 'completion', shell], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, readFileSync(join(dir, file), 'utf8'));
  }
  const bad = spawnSync(process.execPath, [CLI, 'completion', 'tcsh'], { encoding: 'utf8' });
  assert.equal(bad.status, 64);
  assert.match(bad.stderr, /^vault-cli: VLT-1001: /);
});

/** Completions bash offers for `words`, the last being the word under the cursor. */
function bash(words: string[], env = ''): string[] {
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const out = sh(
    'bash',
    ['-c'],
    `${env}
source ${join(dir, 'vault-cli.bash')}
[[ "$(complete -p vault-cli)" == "complete -F _vault_cli vault-cli" ]] || exit 9
COMP_WORDS=(${quoted}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=()
_vault_cli vault-cli
printf '%s\\n' "\${COMPREPLY[@]}"`,
  );
  return out.split('\n').filter(Boolean).sort();
}

test('bash: subcommands, flags, --field values and files for render', () => {
  assert.deepEqual(bash(['vault-cli', 'ge']), ['get']);
  assert.deepEqual(bash(['vault-cli', '']), [...topLevelWords()].sort());
  assert.deepEqual(bash(['vault-cli', 'get', 'X', '--fi']), ['--field']);
  assert.deepEqual(bash(['vault-cli', 'get', 'X', '--field', '']), [...COMMON_FIELDS].sort());
  assert.deepEqual(bash(['vault-cli', 'get', 'X', '--field', 'pa']), ['password']);
  assert.deepEqual(bash(['vault-cli', 'render', '']), ['app.env', 'app.yaml']);
  assert.deepEqual(bash(['vault-cli', 'entry', 's']), ['set', 'show']);
  assert.deepEqual(bash(['vault-cli', 'completion', '']), ['bash', 'fish', 'install', 'zsh']);
  assert.deepEqual(bash(['vault-cli', 'init', '--skill', 'c']), ['claude', 'codex', 'cursor']);
});

test('bash: entry names from the owner session, never a prompt; agents get none for get', () => {
  // A vault-cli on PATH that lists names and notes how it was asked.
  const bin = mkdtempSync(join(tmpdir(), 'vault-cli-completion-bin-'));
  after(() => rmSync(bin, { recursive: true, force: true }));
  writeFileSync(
    join(bin, 'vault-cli'),
    `#!/bin/sh\necho "NO_PROMPT=$VAULT_NO_PROMPT $@" >> ${join(bin, 'asked')}\necho '[{"name":"Stripe Prod"},{"name":"GitHub"}]'\n`,
    { mode: 0o755 },
  );
  const path = `PATH=${bin}:$PATH`;
  assert.deepEqual(bash(['vault-cli', 'get', ''], path), []);
  assert.throws(() => readFileSync(join(bin, 'asked')), /ENOENT/);
  // The owner: names from `entry ls --json`, asked so that it never prompts
  // (with no session on the terminal it fails quietly: no names).
  const names = bash(['vault-cli', 'entry', 'show', ''], path);
  assert.deepEqual(names, ['GitHub', 'Stripe\\ Prod']); // quoted for the shell (completion-quoting.test.ts)
  assert.equal(readFileSync(join(bin, 'asked'), 'utf8'), 'NO_PROMPT=1 entry ls --json\n');
});

test(
  'zsh: the same function through compinit and bashcompinit',
  { skip: !has('zsh') && 'zsh is not installed (apt-get install zsh)' },
  () => {
    const run = (words: string[]): string[] => {
      const out = sh(
        'zsh',
        ['-fc'],
        `autoload -U compinit && compinit -u
source ${join(dir, '_vault-cli')}
[[ "\${_comps[vault-cli]}" == "_bash_complete -F _vault_cli" ]] || exit 9
local -a COMP_WORDS COMPREPLY; local COMP_CWORD
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=$(( \${#COMP_WORDS} - 1 ))
_vault_cli vault-cli
print -rl -- "\${COMPREPLY[@]}"`,
      );
      // zsh's compgen leaves matching the prefix to compadd; do it here.
      const cur = words[words.length - 1] ?? '';
      return out
        .split('\n')
        .filter((w) => w !== '' && w.startsWith(cur))
        .sort();
    };
    assert.deepEqual(run(['vault-cli', 'ge']), ['get']);
    assert.deepEqual(run(['vault-cli', 'get', 'X', '--fi']), ['--field']);
    assert.deepEqual(run(['vault-cli', 'get', 'X', '--field', '']), [...COMMON_FIELDS].sort());
    assert.deepEqual(run(['vault-cli', 'render', '']), ['app.env', 'app.yaml']);
  },
);

test(
  'fish: complete -C answers from the generated file',
  { skip: !has('fish') && 'fish is not installed (apt-get install fish)' },
  () => {
    const run = (line: string): string[] =>
      sh('fish', ['-c'], `source ${join(dir, 'vault-cli.fish')}; complete -C '${line}'`)
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0] ?? '')
        .sort();
    assert.deepEqual(run('vault-cli ge'), ['get']);
    assert.deepEqual(run('vault-cli get X --fi'), ['--field']);
    assert.deepEqual(run('vault-cli get X --field '), [...COMMON_FIELDS].sort());
    assert.deepEqual(run('vault-cli render '), ['app.env', 'app.yaml']);
    assert.deepEqual(run('vault-cli entry sh'), ['show']);
  },
);

test(
  'zsh: autoloaded from $fpath by compinit, the first TAB in an interactive shell completes',
  { skip: !has('zsh') && 'zsh is not installed (apt-get install zsh)' },
  () => {
    // An interactive zsh on a pseudo-terminal (zsh/zpty), typing a line and TAB.
    // The driver waits for what the shell prints, never for a fixed time:
    // compinit rebuilds its dump when $fpath changes (a second or more on a
    // loaded machine), and fixed sleeps read the screen before it had finished.
    // Each marker is printed uppercased from a lowercase word, so the echo of
    // the typed line cannot match it. Keys are read in order, so the
    // completion is done before the marker's command runs.
    const fp = mkdtempSync(join(tmpdir(), 'vault-cli-zfunc-'));
    after(() => rmSync(fp, { recursive: true, force: true }));
    writeFileSync(join(fp, '_vault-cli'), readFileSync(join(dir, '_vault-cli')));
    const driver = `zmodload zsh/zpty
zpty -b z 'zsh -fi'
zpty -w z "PS1='> '; fpath=(${fp} \\$fpath); autoload -U compinit; compinit -u; vault-cli() { :; }; print -r -- \\\${(U):-ready}"
zpty -r -m z out '*READY*' || exit 7
zpty -w z $'vault-cli get X --fi\\t; print -r -- \${(U):-done}'
zpty -r -m z out '*DONE*' || exit 8
zpty -d z
print -r -- "$out"`;
    const out = sh('zsh', ['-fc'], driver);
    assert.match(out, /vault-cli get X --field/);
  },
);
