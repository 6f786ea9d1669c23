// The direction of imports (DESIGN section 3), read from the source itself:
// every import and export-from statement and every dynamic import() of
// src/**, tui/** and shell/**, type-only ones included (a type import still
// ties two files' concepts together). eslint.config.js forbids the single
// wrong edges; this test also sees the cycles, which no one edge shows.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TREES = ['src', 'tui', 'shell'];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return sources(path);
    return /\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module specifier a file names, statically or through import(). */
function specifiers(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** A relative specifier as the file it loads (`./x.js` is `./x.ts` or `./x.tsx` in the tree). */
function target(from: string, spec: string): string {
  const path = relative(ROOT, resolve(ROOT, dirname(from), spec));
  const stem = path.replace(/\.(js|jsx|ts|tsx)$/, '');
  for (const ext of ['.ts', '.tsx']) if (existsSync(join(ROOT, stem + ext))) return stem + ext;
  throw new Error(`${from}: ${spec} names no file in the tree`);
}

/** The import graph of our own files: file -> the files it imports. */
function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of TREES.flatMap(sources)) {
    // A data file (shell/profiles.json) imports nothing: a leaf the graph leaves out.
    const ours = specifiers(file).filter((s) => s.startsWith('.') && !s.endsWith('.json'));
    g.set(
      file,
      ours.map((s) => target(file, s)),
    );
  }
  return g;
}

/** The strongly connected components with more than one file (or a file importing itself). */
function cycles(g: Map<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (g.get(v) ?? []).includes(v)) found.push(scc.sort());
  };
  for (const v of g.keys()) if (!index.has(v)) strong(v);
  return found;
}

/**
 * Each room and the rooms it may import (its own always). Imports point
 * inward: cli, tui and shell at the edge; client, host, render, proxy,
 * webauthn in the middle; crypto, store and kernel below them; core pure.
 * The rows match the restrictions in eslint.config.js, with the rooms that
 * file leaves open (kernel, render, proxy) closed the way section 3 draws them.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'src/core': [],
  'src/kernel': [],
  'src/crypto': ['src/core'],
  'src/store': ['src/core'],
  'src/render': ['src/core', 'src/crypto'],
  'src/proxy': ['src/core', 'src/crypto', 'src/kernel', 'src/render'],
  'src/webauthn': ['src/core', 'src/crypto'],
  'src/client': ['src/core', 'src/crypto', 'src/kernel'],
  'src/host': [
    'src/core',
    'src/crypto',
    'src/store',
    'src/kernel',
    'src/render',
    'src/proxy',
    'src/webauthn',
  ],
  shell: ['src/core', 'src/crypto', 'src/kernel', 'src/client', 'src/render', 'src/proxy'],
  tui: [
    'src/core',
    'src/crypto',
    'src/kernel',
    'src/client',
    'src/host',
    'src/render',
    'src/proxy',
    'src/webauthn',
    'shell',
  ],
  'src/cli': [
    'src/core',
    'src/crypto',
    'src/kernel',
    'src/client',
    'src/host',
    'src/render',
    'src/proxy',
    'src/webauthn',
    'tui',
    'shell',
  ],
};

function room(file: string): string {
  const [top, sub] = file.split('/');
  return top === 'src' ? `src/${sub}` : (top ?? file);
}

test('the import graph is read: every tree has files and src/host imports its neighbours', () => {
  const g = graph();
  for (const tree of TREES)
    assert.ok(
      [...g.keys()].some((f) => f.startsWith(`${tree}/`)),
      tree,
    );
  assert.ok((g.get('src/host/ops/reads.ts') ?? []).includes('src/host/access.ts'));
  assert.ok((g.get('src/host/access.ts') ?? []).includes('src/core/policy.ts'));
});

test('the cycle finder finds a cycle and passes a chain', () => {
  const ring = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
  ]);
  assert.deepEqual(cycles(ring), [['a', 'b', 'c']]);
  assert.deepEqual(cycles(new Map([['a', ['a']]])), [['a']]);
  assert.deepEqual(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});

test('no import cycle in src, tui or shell (src/host first among them)', () => {
  const found = cycles(graph());
  assert.deepEqual(
    found.filter((c) => c.some((f) => f.startsWith('src/host/'))),
    [],
    'cycles through src/host',
  );
  assert.deepEqual(found, [], 'cycles');
});

test('no upward import (DESIGN section 3): each room imports only the rooms below it', () => {
  const upward: string[] = [];
  for (const [file, deps] of graph()) {
    const from = room(file);
    const allowed = MAY_IMPORT[from];
    assert.ok(allowed !== undefined, `${file} is in no room of the table`);
    for (const dep of deps) {
      const to = room(dep);
      if (to !== from && !allowed.includes(to)) upward.push(`${file} -> ${dep}`);
    }
  }
  assert.deepEqual(upward, []);
});
