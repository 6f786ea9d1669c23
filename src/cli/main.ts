#!/usr/bin/env node
/**
 * The process edge: argv in, one command run, exit status out (edge.ts ends
 * every run). get, totp, render and --version go to pipe-main.ts, bundled at
 * build time into one file (pipe-main.bundle.js, scripts/bundle.mjs), since
 * an agent runs them over and over and each is a whole Node start; any other
 * command to full.ts, which parses by the whole command table. This file is
 * the script a started host runs as `daemon`, and the one the owner's client
 * checks a host's command line against (src/client/host-check.ts).
 *
 * Run it through bin/vault-cli, which picks the Node this installation was
 * installed with; `node` on PATH may be another (issue 25).
 */
// First: on a Node too old for vault-cli, nothing below is evaluated.
import './node-check.js';

interface Entry {
  start(argv: readonly string[], script: string): void;
}

/** The first words pipe-main.ts runs; it sends on what it does not (`get --help`). */
const PIPE_WORDS: ReadonlySet<string> = new Set(['get', 'totp', 'render', '--version']);

/**
 * The bundle, or pipe-main.ts's own graph where no bundle was built (a tree
 * built by tsc alone): the same code, only slower to load.
 */
async function pipeEntry(): Promise<Entry> {
  const bundle = new URL('./pipe-main.bundle.js', import.meta.url).href;
  try {
    return (await import(bundle)) as Entry;
  } catch (err) {
    const missing = err as { code?: unknown; url?: unknown };
    if (missing.code !== 'ERR_MODULE_NOT_FOUND' || missing.url !== bundle) throw err;
    return import('./pipe-main.js');
  }
}

const argv = process.argv.slice(2);
const entry = PIPE_WORDS.has(argv[0] ?? '') ? await pipeEntry() : await import('./full.js');
entry.start(argv, import.meta.filename);
