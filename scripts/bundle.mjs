/**
 * After tsc: dist/src/cli/pipe-main.js and everything it imports (its lazy
 * imports too) as one CommonJS file, dist/src/cli/pipe-main.bundle.cjs, which
 * src/cli/pipe.cts compiles with V8's code cache for get, totp, render and
 * --version (one file to read and no ESM loader, instead of 17-22 modules;
 * docs/decisions.md has the figures). npm packages and Node's built-ins stay
 * outside it, required (an ESM package by require(esm), Node 22.12 and later):
 * a vm.Script has no module URL for `import()`. No code splitting: a chunk is
 * one more file to load. Refuses a bundle that requires node:fs, net, tty or
 * util at its start (pipe-main's graph takes them by getBuiltinModule when it
 * needs them), that still holds an `import()` or `import.meta`, or that holds
 * the owner's side; removes the code caches of the bundle it replaces.
 */
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'cli');
const outfile = join(cli, 'pipe-main.bundle.cjs');
const result = await build({
  entryPoints: [join(cli, 'pipe-main.js')],
  outfile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node22',
  // import() of a package or of kernel/unix.js becomes require(): the script has no URL to import from.
  supported: { 'dynamic-import': false },
  packages: 'external',
  metafile: true,
  plugins: [
    {
      // koffi (a native addon) only for the owner's host check: src/kernel/unix.js
      // stays a module of its own, else its import of koffi would open the
      // bundle. '../kernel/unix.js' names the same file from dist/src/cli as
      // from dist/src/client, and it imports nothing of ours.
      name: 'kernel-outside',
      setup(b) {
        b.onResolve({ filter: /^\.\.\/kernel\/unix\.js$/ }, (args) => ({
          path: args.path,
          external: true,
        }));
      },
    },
  ],
  logLevel: 'warning',
});

// The ESM bundle of earlier builds, and caches of the bundle just replaced.
for (const f of readdirSync(cli)) {
  if (
    f === 'pipe-main.bundle.js' ||
    (f.startsWith('pipe-main.bundle.cjs.') && f.endsWith('.cache'))
  )
    rmSync(join(cli, f));
}
const text = readFileSync(outfile, 'utf8');
// A require() not inside a former import()'s `.then(() => __toESM(require(...)))` runs at start.
const eager = [
  ...text.matchAll(/(?<!=> __toESM\()require\("(node:(?:fs|net|tty|util)|koffi|chokidar)"\)/g),
].map((m) => m[1]);
const unscripted = /\bimport\(|\bimport\.meta\b/.test(text) ? ['import() or import.meta'] : [];
const inputs = Object.keys(result.metafile.inputs);
const owners = inputs.filter((f) =>
  /\/cli\/(owner|ceremony|full|argv)\.js$|\/commands\/argv\.js$/.test(f),
);
const found = [...eager, ...unscripted, ...owners];
if (result.warnings.length > 0 || found.length > 0) {
  console.error(
    `scripts/bundle.mjs: the bundle holds ${found.join(', ') || 'what esbuild warned of'}`,
  );
  process.exit(1);
}
