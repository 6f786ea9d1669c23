// The end-of-session check of nested project controls (shell/project-check.ts)
// on a real directory tree with the real git: what an agent made or changed
// is held, what the owner had and what a plain `git init` makes is not, and
// git's configuration is judged by the keys git itself reads from it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gitAtStart, gitConfigKeys, gitStill, unsafeGitKeys } from '../../shell/git-config.js';
import { projectCheck, projectStart, type ProjectStart } from '../../shell/project-check.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'a',
  GIT_AUTHOR_EMAIL: 'a@example.org',
  GIT_COMMITTER_NAME: 'a',
  GIT_COMMITTER_EMAIL: 'a@example.org',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8' });

function tree(): string {
  const d = mkdtempSync(join(tmpdir(), 'vault-cli-project-'));
  dirs.push(d);
  return d;
}

/** The session's start just after everything there is now, and the clock past it. */
function startAfter(root: string): ProjectStart {
  const last = Number(statSync(root, { bigint: true }).ctimeNs / 1_000_000n);
  const s = projectStart([root], [], Math.max(Date.now(), last + 2_001));
  // ctimes after this point are the session's (a coarse clock ticks every few milliseconds).
  while (BigInt(Date.now()) * 1_000_000n < s.since + 20_000_000n);
  return s;
}

const check = (s: ProjectStart, kept: readonly string[] = []) =>
  projectCheck(s, { opened: [], kept, skip: [], git: 'git', now: new Date() });
const heldPaths = (s: ProjectStart, root: string) =>
  check(s)
    .held.map((h) => h.path.toString().slice(root.length + 1))
    .sort();

test('git: the keys of a plain init and clone are safe; those that run a program are not', () => {
  const root = tree();
  git(root, 'init', '-q', 'a');
  git(join(root, 'a'), 'commit', '-q', '--allow-empty', '-m', 'x');
  git(root, 'clone', '-q', 'a', 'b');
  git(root, 'clone', '-q', '--bare', 'a', 'c');
  for (const config of ['a/.git/config', 'b/.git/config', 'c/config']) {
    const keys = gitConfigKeys('git', Buffer.from(execFileSync('cat', [join(root, config)])));
    assert.ok(keys !== null && keys.length > 0, config);
    assert.deepEqual(unsafeGitKeys(keys), [], config);
  }
  // As git reads them: case, quoting, continuation, a subsection with dots.
  const read = (text: string) => unsafeGitKeys(gitConfigKeys('git', Buffer.from(text)) ?? ['?']);
  assert.deepEqual(read('[Core]\n\tFSMonitor = "touch x"\n'), ['core.fsmonitor']);
  assert.deepEqual(read('[core]\n\tpager = touch \\\n x\n'), ['core.pager']);
  assert.deepEqual(read('[remote "a.b"]\n\turl = u\n\tuploadpack = touch x\n'), [
    'remote.a.b.uploadpack',
  ]);
  assert.deepEqual(read('[include]\n\tpath = /etc/x\n[alias]\n\tst = !touch x\n'), [
    'include.path',
    'alias.st',
  ]);
  for (const k of [
    'core.hookspath',
    'core.sshcommand',
    'core.editor',
    'filter.x.clean',
    'diff.x.command',
    'credential.helper',
    'includeif.gitdir:/.path',
    'submodule.x.update',
  ])
    assert.deepEqual(unsafeGitKeys([k]), [k]);
  // What git cannot parse, git would refuse too: null, and the caller holds it.
  assert.equal(gitConfigKeys('git', Buffer.from('[core\n')), null);
});

test('held: a new repository’s unsafe config, hooks and commondir, a .git file, new editor settings; not held: a plain init, the owner’s unchanged controls, a commit in the owner’s deep repository', () => {
  const root = tree();
  // The owner's: a deep repository with a key of its own, a deep .vscode, a .envrc.
  const deep = join(root, 'a', 'b', 'c', 'd', 'e', 'f');
  mkdirSync(deep, { recursive: true });
  git(deep, 'init', '-q');
  git(deep, 'config', 'core.pager', 'less -R');
  mkdirSync(join(root, 'a', 'b', 'c', 'd', 'e', '.vscode'));
  writeFileSync(join(root, 'a', 'b', 'c', 'd', 'e', '.vscode', 'settings.json'), '{}');
  writeFileSync(join(root, 'a', '.envrc'), 'export A=1\n');
  const s = startAfter(root);

  // The session's work.
  git(deep, 'commit', '-q', '--allow-empty', '-m', 'agent');
  git(root, 'init', '-q', 'plain');
  git(join(root, 'plain'), 'commit', '-q', '--allow-empty', '-m', 'x');
  git(root, 'init', '-q', 'evil');
  git(join(root, 'evil'), 'config', 'core.fsmonitor', 'touch pwned');
  git(root, 'init', '-q', 'hooked');
  writeFileSync(join(root, 'hooked', '.git', 'hooks', 'post-checkout'), '#!/bin/sh\n');
  writeFileSync(join(root, 'hooked', '.git', 'commondir'), '/elsewhere\n');
  mkdirSync(join(root, 'ptr'));
  writeFileSync(join(root, 'ptr', '.git'), 'gitdir: /elsewhere\n');
  writeFileSync(join(root, 'a', 'b', 'c', 'd', 'e', '.vscode', 'tasks.json'), '{}');
  mkdirSync(join(root, 'ed', '.claude'), { recursive: true });
  writeFileSync(join(root, 'ed', '.claude', 'settings.json'), '{"hooks":{}}');
  // Harmless as they are: an empty .envrc, an empty .vscode.
  writeFileSync(join(root, 'ed', '.envrc'), '');
  mkdirSync(join(root, 'ed', '.vscode'));

  assert.deepEqual(heldPaths(s, root), [
    'a/b/c/d/e/.vscode',
    'ed/.claude/settings.json',
    'evil/.git/config',
    'hooked/.git/commondir',
    'hooked/.git/hooks/post-checkout',
    'ptr/.git',
  ]);
  assert.ok(existsSync(join(root, 'plain', '.git', 'config')));
  assert.ok(existsSync(join(deep, '.git', 'config')));
  assert.ok(existsSync(join(root, 'a', '.envrc')));
});

test('held: a directory renamed into place as .git, whose config is older than the session (staged in an earlier one)', () => {
  const root = tree();
  mkdirSync(join(root, 'notes'));
  writeFileSync(join(root, 'notes', 'config'), '[core]\n\tfsmonitor = touch pwned\n');
  mkdirSync(join(root, 'sub'));
  const s = startAfter(root);
  renameSync(join(root, 'notes'), join(root, 'sub', '.git'));
  assert.deepEqual(heldPaths(s, root), ['sub/.git/config']);
});

test('a bare repository made of staged parts is found by what git looks for: HEAD, objects/, refs/', () => {
  const root = tree();
  mkdirSync(join(root, 'stage', 'objects'), { recursive: true });
  writeFileSync(join(root, 'stage', 'config'), '[core]\n\tpager = touch pwned\n');
  const s = startAfter(root);
  mkdirSync(join(root, 'stage', 'refs'));
  writeFileSync(join(root, 'stage', 'HEAD'), 'ref: refs/heads/main\n');
  assert.deepEqual(heldPaths(s, root), ['stage/config']);
});

test('what the sandbox kept read-only is left alone: a change there was the owner’s, from outside', () => {
  const root = tree();
  git(root, 'init', '-q', 'sub');
  const s = startAfter(root);
  // The owner, in another terminal during the session (husky's install, say).
  git(join(root, 'sub'), 'config', 'core.hooksPath', '.husky');
  const config = join(root, 'sub', '.git', 'config');
  assert.deepEqual(check(s, [config]).held, []);
  assert.ok(existsSync(config));
  // Not kept (deeper than the sandbox keeps, say): the same change is held.
  assert.deepEqual(
    check(s).held.map((h) => h.path.toString()),
    [config],
  );
});

test('the git the check runs: found before the agent starts, outside what it may write, and still the same file', () => {
  const root = tree();
  const outside = tree();
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  // On a PATH dir inside a writable root: never trusted.
  mkdirSync(join(root, 'bin'));
  copyFileSync(real, join(root, 'bin', 'git'));
  assert.equal(gitAtStart(join(root, 'bin', 'git'), [root]), null);
  // Outside: trusted while it is the same file.
  const copy = join(outside, 'git');
  copyFileSync(real, copy);
  const g = gitAtStart(copy, [root]);
  assert.equal(gitStill(g), copy);
  appendFileSync(copy, '\n');
  assert.equal(gitStill(g), null);
  assert.equal(gitAtStart(null, [root]), null);
});

test('a git directory is judged by what git writes for ordinary work: a linked worktree’s commondir led elsewhere, a file git does not know and a HEAD-less git directory under node_modules are held; commits, a stash, a new worktree and info/exclude are not', () => {
  const root = tree();
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'first');
  const wt = join(tree(), 'wt');
  git(root, 'worktree', 'add', '-q', wt);
  const s = startAfter(root);
  // Ordinary work, and a second worktree made as git makes it.
  git(root, 'commit', '-q', '--allow-empty', '-m', 'second');
  writeFileSync(join(root, 'f'), 'x\n');
  git(root, 'add', 'f');
  git(root, 'stash', '-q');
  git(root, 'worktree', 'add', '-q', join(tree(), 'wt2'));
  appendFileSync(join(root, '.git', 'info', 'exclude'), 'dist/\n');
  // The agent's: a worktree's directory made again around a commondir of its own.
  const g = join(root, 'node_modules', '.cache', 'g');
  mkdirSync(join(g, 'objects'), { recursive: true });
  mkdirSync(join(g, 'refs'));
  writeFileSync(join(g, 'config'), '[core]\n\tfsmonitor = touch pwned\n');
  const w = join(root, '.git', 'worktrees', 'wt');
  renameSync(w, `${w}.old`);
  mkdirSync(w);
  for (const f of ['HEAD', 'gitdir']) copyFileSync(join(`${w}.old`, f), join(w, f));
  writeFileSync(join(w, 'commondir'), `${g}\n`);
  writeFileSync(join(root, '.git', 'mystery'), 'x\n');
  assert.deepEqual(heldPaths(s, root), [
    '.git/mystery',
    '.git/worktrees/wt/commondir',
    'node_modules/.cache/g/config',
  ]);
});

test('what runs later: named when the agent made or changed it (package.json only for its scripts, pyproject.toml only for its build system), never held', () => {
  const root = tree();
  mkdirSync(join(root, 'a'));
  writeFileSync(join(root, 'package.json'), '{"name":"p","scripts":{"t":"x"}}\n');
  writeFileSync(join(root, 'a', 'package.json'), '{"name":"a","version":"1"}\n');
  writeFileSync(join(root, 'pyproject.toml'), '[project]\nname = "p"\n');
  writeFileSync(join(root, 'Makefile'), 'all:\n\ttrue\n');
  const s = startAfter(root);
  writeFileSync(join(root, 'package.json'), '{"name":"p","scripts":{"t":"x"},"version":"2"}\n');
  writeFileSync(join(root, 'a', 'package.json'), '{"name":"a","scripts":{"prepare":"sh x"}}\n');
  writeFileSync(join(root, 'pyproject.toml'), '[project]\nname = "q"\n');
  mkdirSync(join(root, '.github', 'workflows'), { recursive: true });
  writeFileSync(join(root, '.github', 'workflows', 'ci.yml'), 'on: push\n');
  writeFileSync(join(root, '.env.local'), 'A=1\n');
  writeFileSync(join(root, 'lib.mk'), 'x:\n');
  const r = check(s);
  assert.deepEqual(r.held, []);
  assert.deepEqual(r.later.map((l) => l.path.toString().slice(root.length + 1)).sort(), [
    '.env.local',
    '.github/workflows/ci.yml',
    'a/package.json',
    'lib.mk',
  ]);
});
