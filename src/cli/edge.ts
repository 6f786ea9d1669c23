/**
 * The process edge both of main.ts's entries share: the context a command
 * runs with, and the end of every run, the only place that sets the exit
 * status; every error becomes one line on stderr, `vault-cli: <code>:
 * <message>`. full.ts runs any command; pipe-main.ts runs get, totp and
 * render, and is bundled into one file at build time (scripts/bundle.mjs), so
 * what this file imports is in that bundle too: nothing of the owner's.
 */
import type { Invocation } from '../commands/parse.js';
import { ERRORS, VaultError } from '../core/errors.js';
import type { Op, Ops } from '../core/protocol.js';
import type { ClientOptions } from '../client/options.js';
import { ACCEPT_FAKETIME } from '../client/test-build.js';
import { anchorMemory } from './anchors.js';
import type { CliContext, Command } from './context.js';
import { hostEnv, resolvePaths, type Paths } from './paths.js';

// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { readFileSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/** `vault-cli <version>, Node <version> (<path>)`: which Node runs it is half the answer. */
export function versionLine(script: string): string {
  let dir = dirname(script);
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'vault-cli') {
        return `vault-cli ${pkg.version ?? '?'}, Node ${process.version} (${process.execPath})\n`;
      }
    } catch {
      // not here: one directory up
    }
    dir = dirname(dir);
  }
  return `vault-cli (version unknown), Node ${process.version} (${process.execPath})\n`;
}

/**
 * What the host's messages leave to the edge: the vault directory VLT-3001
 * means, and a retry time in local time to the second, as every time the CLI
 * prints (the host writes it as UTC ISO, for logs and the proxy's replies).
 */
async function presented(err: unknown, paths: Paths): Promise<unknown> {
  if (!(err instanceof VaultError)) return err;
  if (err.code === 'VLT-3001' && err.message === ERRORS['VLT-3001'].message) {
    return new VaultError(
      'VLT-3001',
      `No vault in ${paths.vaultDir}: create one with \`vault-cli vault create\`, or set VAULT_DIR to the directory of an existing vault.`,
      { cause: err },
    );
  }
  if (err.code === 'VLT-2042') {
    const { localTimes } = await import('../core/audit.js');
    const message = localTimes(err.message);
    if (message !== err.message) {
      return new VaultError('VLT-2042', message, { cause: err, problems: err.problems });
    }
  }
  return err;
}

let stdoutReady = false;

/**
 * process.stdout, where a reader that goes away (`vault-cli audit | head`) is
 * not an error. Made on first use: a stream costs a start-up, and a get made
 * none before its value is in hand.
 */
export function stdout(): NodeJS.WriteStream {
  if (!stdoutReady) {
    stdoutReady = true;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
    });
  }
  return process.stdout;
}

/** How a context's `call` reaches the host: `to` is the client with its autoStart settled. */
export type Via = <O extends Op>(
  ctx: CliContext,
  to: ClientOptions,
  op: O,
  body: Ops[O]['req'],
) => Promise<Ops[O]['res']>;

/** The context `inv` runs with; `script` is main.js, which a started host runs as `daemon`. */
export function context(inv: Invocation, script: string, via: Via): CliContext {
  const env = process.env;
  const paths = resolvePaths(env);
  const client: ClientOptions = {
    vaultDir: paths.vaultDir,
    socketDir: paths.socketDir,
    daemon: { node: process.execPath, script, env: hostEnv(env, paths) },
    // A test build's (src/client/test-build.ts), never the environment's.
    acceptFaketime: ACCEPT_FAKETIME,
    // The hardened host runs as its own user: a client neither starts nor doubts it by pid.
    system: paths.systemHost,
    anchors: anchorMemory(paths.anchorsFile, paths.vaultDir),
    remote: paths.remoteHost,
  };
  const ctx: CliContext = {
    inv,
    paths,
    env,
    script,
    // A getter: touching process.stdin sets up a stream, which `get` never needs.
    get stdin() {
      return process.stdin;
    },
    // Getters, as stdin: each stream is made when a command first writes to it.
    get stdout() {
      return stdout();
    },
    get stderr() {
      return process.stderr;
    },
    client,
    call: (op, body, opts) =>
      via(ctx, { ...client, autoStart: opts?.autoStart ?? client.system === null }, op, body),
  };
  return ctx;
}

/** Runs `command` in `ctx`, its error as the edge presents it. */
export async function runIn(ctx: CliContext, command: Command): Promise<number> {
  try {
    return await command(ctx);
  } catch (err) {
    throw await presented(err, ctx.paths);
  }
}

/** The end of a run: its exit status, or its error as one line on stderr and the error's status. */
export function finish(run: Promise<number>): void {
  run.then(
    (code) => {
      process.exitCode = code;
    },
    async (err: unknown) => {
      const refused =
        err instanceof VaultError
          ? null
          : (await import('./unwritable.js')).unwritable(err, process.env);
      const e =
        err instanceof VaultError
          ? err
          : (refused ?? new VaultError('VLT-3007', undefined, { cause: err }));
      process.stderr.write(e.line() + '\n');
      if (!(err instanceof VaultError) && process.env.VAULT_DEBUG === '1') console.error(err);
      process.exitCode = e.exitCode;
    },
  );
}
