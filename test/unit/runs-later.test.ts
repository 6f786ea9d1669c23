// The data of shell/runs-later.ts and shell/git-dir.ts as pure functions: which
// files run later, the part of package.json and pyproject.toml that runs, and
// what git writes for ordinary work. The parsers take any text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ordinary } from '../../shell/git-dir.js';
import { buildSystem, laterKind, packageScripts } from '../../shell/runs-later.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

test('laterKind: the listed names, in any directory; a workflow only under .github/workflows', () => {
  for (const [dir, name] of [
    ['/p', 'package.json'],
    ['/p/a', 'Makefile'],
    ['/p', 'rules.mk'],
    ['/p', '.env.local'],
    ['/p', '.envrc'],
    ['/p/.github/workflows', 'ci.yml'],
    ['/p', 'docker-compose.dev.yml'],
    ['/p', 'build.gradle.kts'],
  ] as const)
    assert.notEqual(laterKind(dir, name), null, `${dir}/${name}`);
  for (const [dir, name] of [
    ['/p', 'ci.yml'],
    ['/p/workflows', 'ci.yml'],
    ['/p/x.github/workflows', 'ci.yml'],
    ['/p', 'README.md'],
    ['/p', 'Makefile.bak.txt'],
    ['/p', 'environment'],
  ] as const)
    assert.equal(laterKind(dir, name), null, `${dir}/${name}`);
});

test('property: package.json’s scripts part ignores key order and every other key, and takes any text', () => {
  const scripts = fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 }), {
    minKeys: 1,
    maxKeys: 5,
  });
  fc.assert(
    fc.property(scripts, fc.jsonValue(), (s, other) => {
      const a = packageScripts(JSON.stringify({ scripts: s, version: other }));
      const b = packageScripts(
        JSON.stringify({ name: other, scripts: Object.fromEntries(Object.entries(s).reverse()) }),
      );
      assert.equal(a, b);
      assert.notEqual(a, null);
      assert.equal(packageScripts(JSON.stringify({ version: other })), null);
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.string(), (text) => {
      const r = packageScripts(text);
      assert.ok(r === null || typeof r === 'string');
      const b = buildSystem(text);
      assert.ok(b === null || text.includes(b.split('\n')[0] as string));
    }),
    { numRuns: RUNS },
  );
  assert.notEqual(packageScripts('{"scripts":{"a":"x"}}'), packageScripts('{"scripts":{"a":"y"}}'));
});

test('pyproject.toml: only the [build-system] table counts', () => {
  const base =
    '[project]\nname = "p"\n[build-system]\nrequires = ["setuptools"]\n[tool.x]\na = 1\n';
  assert.equal(buildSystem(base), buildSystem(base.replace('name = "p"', 'name = "q"')));
  assert.equal(buildSystem(base), buildSystem(base.replace('a = 1', 'a = 2')));
  assert.notEqual(buildSystem(base), buildSystem(base.replace('setuptools', 'evil')));
  assert.equal(buildSystem('[project]\n'), null);
});

test('what git writes for ordinary work is not judged; config, hooks, commondir, worktrees and unknown names are', () => {
  for (const n of [
    'objects',
    'refs',
    'logs',
    'index',
    'HEAD',
    'ORIG_HEAD',
    'FETCH_HEAD',
    'COMMIT_EDITMSG',
    'packed-refs',
    'index.lock',
    'BISECT_LOG',
    'sharedindex.abc',
    'rebase-merge',
    'info',
    'description',
  ])
    assert.ok(ordinary(n), n);
  for (const n of [
    'config',
    'config.worktree',
    'hooks',
    'commondir',
    'worktrees',
    'modules',
    'branches',
    'remotes',
    'mystery',
    'gitdir',
  ])
    assert.ok(!ordinary(n), n);
});
