#!/usr/bin/env node
/**
 * The process edge: argv in, one command run, exit status out. The only place
 * that sets the exit status; every error becomes one line on stderr,
 * `vault-cli: <code>: <message>`.
 */
import { fileURLToPath } from 'node:url';
import { helpText, parseArgv } from '../core/argv.js';
import { VaultError } from '../core/errors.js';
import type { CliContext, Command } from './context.js';
import { hostEnv, resolvePaths } from './paths.js';

async function main(argv: readonly string[]): Promise<number> {
  const inv = parseArgv(argv);
  if (inv.help || inv.command === null) {
    process.stdout.write(helpText(inv.group));
    return 0;
  }
  const env = process.env;
  const paths = resolvePaths(env);
  const script = fileURLToPath(import.meta.url);
  const client = {
    vaultDir: paths.vaultDir,
    socketDir: paths.socketDir,
    daemon: { node: process.execPath, script, env: hostEnv(env, paths) },
    acceptFaketime: env.VAULT_ACCEPT_FAKETIME === '1',
    // The hardened host runs as its own user: a client neither starts nor doubts it by pid.
    system: paths.systemHost,
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
    stdout: process.stdout,
    stderr: process.stderr,
    client,
    call: async (op, body, opts) => {
      const { call } = await import('../client/client.js');
      return call({ ...client, autoStart: opts?.autoStart ?? client.system === null }, op, body);
    },
  };
  const mod = (await import(`./commands/${inv.command.module}.js`)) as { run: Command };
  return mod.run(ctx);
}

// A reader that goes away (`vault-cli audit | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e =
      err instanceof VaultError ? err : new VaultError('VLT-3007', undefined, { cause: err });
    process.stderr.write(e.line() + '\n');
    if (!(err instanceof VaultError) && process.env.VAULT_DEBUG === '1') console.error(err);
    process.exitCode = e.exitCode;
  },
);
