/**
 * After tsc: dist/src/cli/pipe-main.js and everything it imports (its lazy
 * imports too) as one file, dist/src/cli/pipe-main.bundle.js, which
 * src/cli/main.ts loads for get, totp, render and --version (one module to
 * resolve and compile instead of 17-22; docs/decisions.md has the figures).
 * npm packages and Node's built-ins stay imports. No code splitting: a chunk
 * is one more module to load. Refuses a bundle that imports node:fs, net,
 * tty or util as an ESM namespace (each evaluates every lazy export of the
 * module on every start), or that holds the owner's side.
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'cli');
const outfile = join(cli, 'pipe-main.bundle.js');
const result = await build({
  entryPoints: [join(cli, 'pipe-main.js')],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
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

const text = readFileSync(outfile, 'utf8');
const namespaces = [
  ...text.matchAll(/^import .* from "(node:(?:fs|net|tty|util)|koffi|chokidar)";$/gm),
].map((m) => m[1]);
const inputs = Object.keys(result.metafile.inputs);
const owners = inputs.filter((f) =>
  /\/cli\/(owner|ceremony|full|argv)\.js$|\/commands\/argv\.js$/.test(f),
);
if (namespaces.length > 0 || owners.length > 0) {
  console.error(`scripts/bundle.mjs: the bundle imports ${[...namespaces, ...owners].join(', ')}`);
  process.exit(1);
}
