/**
 * get, totp, render and --version: the commands an agent's scripts run over
 * and over, each a whole Node start. main.ts sends them here; anything this
 * does not run (their --help) goes on to full.ts. At build time
 * scripts/bundle.mjs makes this file and everything it imports one file,
 * dist/src/cli/pipe-main.bundle.js, which main.ts loads instead: a module
 * costs about 0.3 ms in Node's ESM loader, and a get loaded 17 of ours
 * (docs/development.md, "Start-up").
 *
 * What the bundle holds is this file's static graph and what it imports
 * lazily (the host's start, the errors' presentation, render's stdin and
 * --watch); npm packages stay outside it (chokidar, koffi), and nothing of
 * the owner's is in it: these commands make agent requests only, which no
 * host check or owner proof is asked for (full.ts has those).
 */
import { parseDirect } from '../commands/parse.js';
import { PIPE_SIDE } from '../commands/pipe-side.js';
import { call } from '../client/client.js';
import type { Command } from './context.js';
import { context, finish, runIn, stdout, versionLine, type Via } from './edge.js';
import { run as get } from './commands/get.js';
import { run as render } from './commands/render.js';
import { run as totp } from './commands/totp.js';

/** full.ts's start. */
export interface Entry {
  start(argv: readonly string[], script: string): void;
}

const RUN: Readonly<Record<string, Command>> = { get, totp, render };

const via: Via = (_ctx, to, op, body) => call(to, op, body);

/** Null when `argv` is not one of these commands' own (it asks for help). */
function main(argv: readonly string[], script: string): Promise<number> | null {
  const inv = parseDirect(argv, PIPE_SIDE);
  if (inv === null) return null;
  if (inv.version === true) {
    stdout().write(versionLine(script));
    return Promise.resolve(0);
  }
  const command = inv.command === null ? undefined : RUN[inv.command.module];
  if (command === undefined) return null;
  return runIn(context(inv, script, via), command);
}

/**
 * Runs `argv`; `script` is main.js, which a host this starts runs as `daemon`.
 * What this does not run (`get --help`) goes to `full()`, full.ts: the caller
 * imports it, since the bundle is compiled as a script (pipe.cts), which has
 * no module URL to import from.
 */
export function start(argv: readonly string[], script: string, full: () => Promise<Entry>): void {
  let run: Promise<number> | null;
  try {
    run = main(argv, script);
  } catch (err) {
    // A usage error, as full.ts would report it.
    run = Promise.reject(err);
  }
  if (run !== null) return finish(run);
  full().then(
    (m) => m.start(argv, script),
    (err: unknown) => finish(Promise.reject(err)),
  );
}
