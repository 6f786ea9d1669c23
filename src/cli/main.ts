#!/usr/bin/env node
/**
 * The process edge: argv in, one command run, exit status out (edge.ts ends
 * every run). get, totp, render and --version go to pipe-main.ts, bundled at
 * build time into one file (pipe-main.bundle.cjs, scripts/bundle.mjs), since
 * an agent runs them over and over and each is a whole Node start; any other
 * command to full.ts, which parses by the whole command table. This file is
 * the script a started host runs as `daemon`, and the one the owner's client
 * checks a host's command line against (src/client/host-check.ts).
 *
 * bin/vault-cli runs pipe.cts itself for those four words (no ESM loader).
 * Run it through bin/vault-cli, which picks the Node this installation was
 * installed with; `node` on PATH may be another (issue 25).
 */
// First: on a Node too old for vault-cli, nothing below is evaluated.
import './node-check.js';

/** The first words pipe-main.ts runs; it sends on what it does not (`get --help`). */
const PIPE_WORDS: ReadonlySet<string> = new Set(['get', 'totp', 'render', '--version']);

/**
 * get, totp, render and --version: through pipe.cts (the bundle compiled with
 * its code cache), or pipe-main.ts's own graph where no bundle was built (a
 * tree built by tsc alone): the same code, only slower to load.
 */
async function runPipe(argv: readonly string[], script: string): Promise<void> {
  const { load, full } = (await import('./pipe.cjs')).default;
  const pipe = load() ?? (await import('./pipe-main.js'));
  pipe.start(argv, script, full);
}

const argv = process.argv.slice(2);
if (PIPE_WORDS.has(argv[0] ?? '')) await runPipe(argv, import.meta.filename);
else (await import('./full.js')).start(argv, import.meta.filename);
