// The direction of imports (docs/development.md, Layout), read from the source itself:
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
    return /\.(c?ts|tsx)$/.test(d.name) && !d.name.endsWith('.d.ts') ? [path] : [];
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

/** A relative specifier as the file it loads (`./x.js` is `./x.ts` or `./x.tsx` in the tree, `./x.cjs` is `./x.cts`). */
function target(from: string, spec: string): string {
  const path = relative(ROOT, resolve(ROOT, dirname(from), spec));
  const stem = path.replace(/\.(js|jsx|ts|tsx)$/, '');
  const exts = /\.c[jt]s$/.test(path) ? [] : ['.ts', '.tsx'];
  if (exts.length === 0) {
    const cts = path.replace(/\.cjs$/, '.cts');
    if (existsSync(join(ROOT, cts))) return cts;
  }
  for (const ext of exts) if (existsSync(join(ROOT, stem + ext))) return stem + ext;
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
 * The feature rooms (commands, terminal, sweep, import) sit on core. Inside
 * the host, each folder is a room: serve (sockets, channel) dispatches to
 * ops, ops to the features (agent, entries, owner, keys, vault), and audit
 * and the host's root (context, damage) sit below them all: nothing but
 * serve imports ops, nothing but ops imports serve, and audit imports no
 * feature. The rows match the restrictions in eslint.config.js, with the
 * rooms that file leaves open closed the way section 3 draws them.
 */
const HOST_BASE = ['src/core', 'src/crypto', 'src/store', 'src/host'];
const HOST_FEATURES = [
  'src/host/audit',
  'src/host/keys',
  'src/host/owner',
  'src/host/agent',
  'src/host/entries',
];
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'src/core': [],
  'src/kernel': [],
  'src/commands': ['src/core'],
  'src/terminal': ['src/core'],
  'src/import': ['src/core'],
  'src/sweep': ['src/core', 'src/crypto'],
  'src/crypto': ['src/core'],
  // The store's LMDB engine keeps its disk reserve with fallocate (src/store/lmdb/reserve.ts);
  // the sealed digest's hashes are crypto's (sodium's only importer; issue 37: store/seal.ts).
  'src/store': ['src/core', 'src/kernel', 'src/crypto'],
  'src/render': ['src/core', 'src/crypto'],
  'src/proxy': ['src/core', 'src/crypto', 'src/kernel', 'src/render'],
  'src/webauthn': ['src/core', 'src/crypto'],
  'src/client': ['src/core', 'src/crypto', 'src/kernel'],
  // The root: the context every request carries (it owns the caller cache; the store its reserve).
  'src/host': ['src/core', 'src/crypto', 'src/store', 'src/host/agent'],
  'src/host/audit': HOST_BASE,
  'src/host/keys': [...HOST_BASE, 'src/host/audit', 'src/host/owner'],
  'src/host/owner': [...HOST_BASE, ...HOST_FEATURES, 'src/webauthn'],
  'src/host/agent': [...HOST_BASE, ...HOST_FEATURES],
  'src/host/entries': [...HOST_BASE, ...HOST_FEATURES],
  'src/host/vault': [...HOST_BASE, ...HOST_FEATURES, 'src/kernel'],
  'src/host/ops': [
    ...HOST_BASE,
    ...HOST_FEATURES,
    'src/host/vault',
    'src/host/serve',
    'src/import',
  ],
  'src/host/serve': [
    ...HOST_BASE,
    ...HOST_FEATURES,
    'src/host/vault',
    'src/host/ops',
    'src/kernel',
  ],
  shell: [
    'src/core',
    'src/crypto',
    'src/kernel',
    'src/client',
    'src/render',
    'src/proxy',
    'src/commands',
    'src/terminal',
    // Only shell/sandbox-engine.ts, which chooses the engine.
    'shell/linux',
  ],
  // The bubblewrap engine: what the sandbox policy decided, carried out on Linux.
  'shell/linux': ['shell', 'src/core', 'src/commands', 'src/kernel'],
  tui: [
    'src/core',
    'src/crypto',
    'src/kernel',
    'src/client',
    'src/render',
    'src/proxy',
    'src/webauthn',
    'src/commands',
    'shell',
  ],
  // The CLI starts a host (serve) and creates or unlocks a vault in-process (owner); the rest
  // of the host it reaches over the socket.
  'src/cli': [
    'src/core',
    'src/crypto',
    'src/kernel',
    'src/client',
    'src/commands',
    'src/import',
    'src/sweep',
    'src/host/serve',
    'src/host/owner',
    'src/render',
    'src/proxy',
    'src/webauthn',
    'tui',
    // The sandbox only through shell/engine.ts and the chooser, never an engine itself.
    'shell',
  ],
};

/** The room of a file: a folder of src/, a folder of src/host/ or shell/, or a top-level tree. */
function room(file: string): string {
  const [top, sub, inner] = file.split('/');
  if (top === 'src')
    return sub === 'host' && file.split('/').length > 3 ? `src/host/${inner}` : `src/${sub}`;
  if (top === 'shell' && file.split('/').length > 2) return `shell/${sub}`;
  return top ?? file;
}

/** Every import that crosses from one room into a room its row does not name. */
function forbidden(g: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of g) {
    const from = room(file);
    const allowed = MAY_IMPORT[from];
    assert.ok(allowed !== undefined, `${file} is in no room of the table`);
    for (const dep of deps) {
      const to = room(dep);
      if (to !== from && !allowed.includes(to)) out.push(`${file} -> ${dep}`);
    }
  }
  return out;
}

test('the import graph is read: every tree has files and src/host imports its neighbours', () => {
  const g = graph();
  for (const tree of TREES)
    assert.ok(
      [...g.keys()].some((f) => f.startsWith(`${tree}/`)),
      tree,
    );
  assert.ok((g.get('src/host/ops/reads.ts') ?? []).includes('src/host/agent/access.ts'));
  assert.ok((g.get('src/host/agent/access.ts') ?? []).includes('src/core/policy.ts'));
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

test('no upward import (docs/development.md, Layout): each room imports only the rooms below it', () => {
  assert.deepEqual(forbidden(graph()), []);
});

test('a planted arrow between rooms that must not touch is found', () => {
  const g = new Map(graph());
  // The audit log reaching up into the agent access path, and core into the host.
  g.set('src/host/audit/log.ts', [
    ...(g.get('src/host/audit/log.ts') ?? []),
    'src/host/agent/access.ts',
  ]);
  g.set('src/core/policy.ts', [...(g.get('src/core/policy.ts') ?? []), 'src/host/context.ts']);
  g.set('src/host/agent/access.ts', [
    ...(g.get('src/host/agent/access.ts') ?? []),
    'src/host/ops/op.ts',
  ]);
  assert.deepEqual(forbidden(g).sort(), [
    'src/core/policy.ts -> src/host/context.ts',
    'src/host/agent/access.ts -> src/host/ops/op.ts',
    'src/host/audit/log.ts -> src/host/agent/access.ts',
  ]);
});

test('one module chooses the sandbox engine: the CLI reaches shell/linux only through shell/', () => {
  const g = graph();
  const importers = [...g]
    .filter(
      ([file, deps]) => room(file) !== 'shell/linux' && deps.some((d) => room(d) === 'shell/linux'),
    )
    .map(([file]) => file);
  assert.deepEqual(importers, ['shell/sandbox-engine.ts']);
  const planted = new Map(g);
  planted.set('src/cli/run/sandbox.ts', [
    ...(g.get('src/cli/run/sandbox.ts') ?? []),
    'shell/linux/bubblewrap.ts',
  ]);
  assert.deepEqual(forbidden(planted), ['src/cli/run/sandbox.ts -> shell/linux/bubblewrap.ts']);
});
