// docs/threat-model.md, "run a command outside later through the project",
// below the top of the working directory: a prompt-injected agent with a
// shell inside `vault-cli run` plants what the owner's own git, direnv,
// editor or next unsandboxed agent would run in a NESTED directory (a new
// repository's config or hooks, a bare repository, a `.git` file pointing
// elsewhere, `.envrc`, `.vscode/`, `.claude/settings.json`, `.mcp.json`), or
// edits an existing nested repository's config. Existing nested controls are
// read-only inside; what the agent made is renamed aside when `run` ends, and
// the owner's real git, run afterwards as the owner runs it, runs nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
// eslint-disable-next-line no-restricted-imports -- the owner's terminal, for git's pager
import { spawn } from 'node-pty';
import { hex } from '../support/e2e-helpers.js';
import { installBin, runScript, said, type PtyFate } from '../support/pty.js';
import { Rig } from '../support/rig.js';

const rig = new Rig();

/** Git as the owner runs it, outside: a throwaway HOME, no system config. */
const ownerEnv = () => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: join(rig.root, 'owner-home'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'o',
  GIT_AUTHOR_EMAIL: 'o@example.org',
  GIT_COMMITTER_NAME: 'o',
  GIT_COMMITTER_EMAIL: 'o@example.org',
});

function ownerGit(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd, env: ownerEnv(), encoding: 'utf8' });
}

/** The owner's `git log` at a terminal, where git starts its pager. */
async function ownerLogAtTerminal(cwd: string): Promise<void> {
  const pty = spawn('git', ['log', '-1'], { cols: 80, rows: 24, cwd, env: ownerEnv() });
  pty.onData(() => {});
  await new Promise<void>((res) => pty.onExit(() => res()));
}

/** A fresh project directory, a repository of the owner's, as the agent's working directory. */
function project(): string {
  const dir = join(rig.root, `proj-${hex(4)}`);
  mkdirSync(dir);
  ownerGit(dir, ['init', '-q']);
  return dir;
}

async function ran(cwd: string, script: string): Promise<PtyFate> {
  const r = await runScript(rig, script, { cwd }).exited;
  assert.equal(r.exitCode, 0, r.output);
  return r;
}

/**
 * `run`'s lines for what it held (a terminal's answer to the agent's shell may
 * precede the first), each once: run says them again as its very last lines.
 */
const heldLines = (output: string) => [
  ...new Set(
    output
      .split(/\r?\n/)
      .filter((l) => l.includes('vault-cli: held '))
      .map((l) => l.slice(l.indexOf('vault-cli: held '))),
  ),
];

/** Git inside, as an agent would: its own identity, no config of the owner's. */
const G = 'git -c user.name=a -c user.email=a@example.org';

before(async () => {
  await rig.create();
  await rig.addAgent('a', [], ['--per-minute', '10', '--per-hour', '10']);
  installBin(rig);
  mkdirSync(join(rig.root, 'owner-home'));
});
after(() => rig.dispose());

test('inside run, an existing nested repository’s config and hooks, and nested agent settings, cannot be changed', async () => {
  const dir = project();
  const pwned = join(dir, `pwned-${hex(4)}`);
  for (const sub of ['lib', join('a', 'b', 'c')]) {
    mkdirSync(join(dir, sub), { recursive: true });
    ownerGit(join(dir, sub), ['init', '-q']);
  }
  mkdirSync(join(dir, 'lib', '.claude'));
  writeFileSync(join(dir, 'lib', '.claude', 'settings.json'), '{"theme":"dark"}\n');
  const config = readFileSync(join(dir, 'lib', '.git', 'config'), 'utf8');
  const r = await ran(
    dir,
    [
      `(git -C lib config core.fsmonitor 'touch ${pwned}') 2>/dev/null; echo "config=$?"`,
      `(git -C a/b/c config core.fsmonitor 'touch ${pwned}') 2>/dev/null; echo "deep=$?"`,
      `(printf '#!/bin/sh\\ntouch ${pwned}\\n' > lib/.git/hooks/pre-commit) 2>/dev/null; echo "hook=$?"`,
      `(echo '{}' > lib/.claude/settings.json) 2>/dev/null; echo "claude=$?"`,
      // Renaming the repository's .git away with its read-only parts inside.
      `mv lib/.git lib/.git-moved 2>/dev/null; echo "rename=$?"`,
      `touch lib/work-file; echo "work=$?"`,
    ].join('; '),
  );
  const m = said(r.output);
  for (const k of ['config', 'deep', 'hook', 'claude', 'rename'])
    assert.notEqual(m.get(k), '0', `${k}: ${r.output}`);
  assert.equal(m.get('work'), '0', r.output);
  assert.equal(readFileSync(join(dir, 'lib', '.git', 'config'), 'utf8'), config);
  ownerGit(join(dir, 'lib'), ['status', '--porcelain']);
  ownerGit(join(dir, 'a', 'b', 'c'), ['status', '--porcelain']);
  assert.equal(existsSync(pwned), false, 'the owner’s git status ran the agent’s command');
  // Nothing the owner had was held, and no placeholder was made in a nested directory.
  assert.deepEqual(heldLines(r.output), []);
  assert.deepEqual(readdirSync(join(dir, 'lib')).sort(), ['.claude', '.git', 'work-file']);
});

test('after run, what the agent planted in new nested repositories is held: the owner’s git status, commit and log run nothing; a plain git init and commit survive', async () => {
  const dir = project();
  const pwned = join(dir, `pwned-${hex(4)}`);
  const touch = `touch ${pwned}`;
  const r = await ran(
    dir,
    [
      'set -e',
      // A new repository whose config runs a program at the owner's next git status.
      `git init -q fsm && git -C fsm config core.fsmonitor '${touch}'`,
      // One whose hook runs at the owner's next commit.
      `git init -q hook && printf '#!/bin/sh\\n${touch}\\n' > hook/.git/hooks/pre-commit && chmod +x hook/.git/hooks/pre-commit`,
      // A bare repository (HEAD, objects/, refs/) whose pager runs at the owner's git log.
      `git init -q w && ${G} -C w commit -q --allow-empty -m x && git clone -q --bare w bare && git --git-dir=bare config core.pager '${touch}; cat'`,
      // A .git file pointing at a git directory where the walk does not go.
      `git init -q node_modules/evil && git -C node_modules/evil config core.fsmonitor '${touch}'`,
      `mkdir pointer && echo 'gitdir: ../node_modules/evil/.git' > pointer/.git`,
      // Another directory's configuration, through commondir.
      `git init -q cd && git init -q --bare node_modules/common && git --git-dir=node_modules/common config core.fsmonitor '${touch}' && echo "$PWD/node_modules/common" > cd/.git/commondir`,
      // A name that is no UTF-8, where a string walk would not find the way back.
      `git init -q $'\\xff' && git -C $'\\xff' config core.fsmonitor '${touch}'`,
      // Nested editor and agent settings.
      `mkdir -p ed/.vscode ed/.claude && echo '{"tasks":[]}' > ed/.vscode/tasks.json && echo '{}' > ed/.claude/settings.json && echo '{}' > ed/.mcp.json && echo '${touch}' > ed/.envrc`,
      // What must stay: a plain repository with a commit, and a clone.
      `git init -q plain && echo a > plain/a && ${G} -C plain add a && ${G} -C plain commit -q -m first`,
      `git clone -q plain cloned`,
      // The top repository's .git stays writable (pinned): its commondir too.
      `echo "$PWD/node_modules/common" > .git/commondir`,
      'echo planted=0',
    ].join('\n'),
  );
  assert.equal(said(r.output).get('planted'), '0', r.output);
  assert.equal(existsSync(pwned), false, 'the agent’s own steps ran the planted command');

  ownerGit(join(dir, 'fsm'), ['status', '--porcelain']);
  ownerGit(join(dir, 'hook'), ['commit', '-q', '--allow-empty', '-m', 'owner']);
  await ownerLogAtTerminal(join(dir, 'bare'));
  ownerGit(join(dir, 'pointer'), ['status', '--porcelain']);
  ownerGit(join(dir, 'cd'), ['status', '--porcelain']);
  ownerGit(dir, ['status', '--porcelain']);
  assert.equal(existsSync(pwned), false, 'the owner’s git ran what the agent planted');

  const held = heldLines(r.output).join('\n');
  for (const p of [
    'fsm/.git/config',
    'hook/.git/hooks/pre-commit',
    'bare/config',
    'pointer/.git',
    'cd/.git/commondir',
    '.git/commondir',
    'ed/.vscode',
    'ed/.claude/settings.json',
    'ed/.mcp.json',
    'ed/.envrc',
  ]) {
    assert.ok(held.includes(join(dir, p)), `${p} held: ${held}`);
    assert.equal(existsSync(join(dir, p)), false, p);
    const [name, parent] = [p.split('/').at(-1) as string, join(dir, p, '..')];
    assert.ok(
      readdirSync(parent).some((f) => f.startsWith(`${name}.vault-held-`)),
      `${p}: kept beside, renamed`,
    );
  }
  // Under the name that is no UTF-8 (shown with U+FFFD in the line).
  const ff = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff])]);
  assert.equal(existsSync(Buffer.concat([ff, Buffer.from('/.git/config')])), false);
  assert.ok(held.includes(`${dir}/\ufffd/.git/config`), held);
  // The plain repository and the clone are as the agent left them.
  assert.doesNotMatch(held, /\/(plain|cloned|w)\//);
  assert.equal(ownerGit(join(dir, 'plain'), ['log', '--format=%s']).trim(), 'first');
  assert.equal(ownerGit(join(dir, 'cloned'), ['log', '--format=%s']).trim(), 'first');
  assert.deepEqual(
    readdirSync(join(dir, 'plain', '.git', 'hooks')).filter((h) => !h.endsWith('.sample')),
    [],
  );
});

test('a planted name with control characters is printed escaped', async () => {
  const dir = project();
  const r = await ran(
    dir,
    `git init -q $'evil\\x1b]0;x\\x07\\x1b[2J' && git -C $'evil\\x1b]0;x\\x07\\x1b[2J' config alias.st '!touch pwned'; echo done=0`,
  );
  const lines = heldLines(r.output);
  assert.equal(lines.length, 1, r.output);
  const line = lines[0] as string;
  assert.ok(line.includes('evil\\x1b]0;x\\x07\\x1b[2J/.git/config'), line);
  assert.ok(line.includes('alias.st'), line);
  assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f]/);
});

test('inside run, a git planted in a project directory on the owner’s PATH is never what run’s own check runs', async () => {
  const dir = project();
  mkdirSync(join(dir, 'bin'));
  const ran = join(rig.root, `planted-git-ran-${hex(4)}`);
  // direnv's PATH_add bin, say: the project's bin/ comes first on the owner's PATH.
  const path = `${join(dir, 'bin')}:${join(rig.root, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  const script = [
    `printf '#!/bin/sh\\ntouch ${ran}\\nexec /usr/bin/git "$@"\\n' > bin/git`,
    'chmod +x bin/git',
    // A configuration the check must read with git.
    `${G} init -q sub`,
    `git -C sub config core.fsmonitor 'touch x'`,
    'echo planted=yes',
  ].join('; ');
  const r = await runScript(rig, script, { cwd: dir, env: { PATH: path } }).exited;
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(said(r.output).get('planted'), 'yes', r.output);
  // The configuration was read, with the git the start found, and held.
  assert.ok(
    heldLines(r.output).some((l) => l.includes('core.fsmonitor')),
    r.output,
  );
  assert.equal(existsSync(ran), false, 'run executed the git the agent planted');
});

test('an agent that floods the project past the walk’s bound: run says the check stopped there', async () => {
  const dir = project();
  // 100,001 entries in one directory near the top: the walk, breadth first, reads it before
  // anything deeper, and stops at its 100,000.
  const script = [
    `python3 -c "import os; os.mkdir('flood'); [open('flood/%d' % i, 'w').close() for i in range(100001)]"`,
    `mkdir -p a/b/c && ${G} init -q a/b/c/repo`,
    `git -C a/b/c/repo config core.fsmonitor 'touch x'`,
    'echo flooded=yes',
  ].join('; ');
  const r = await ran(dir, script);
  assert.equal(said(r.output).get('flooded'), 'yes', r.output);
  // What an agent does next: push its plant past the bound. The owner is told the check stopped.
  assert.match(r.output, /vault-cli: warning: the walk over project controls stopped at its bound/);
});
