/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]... -- <command> [args...]`.
 * An owner command: with the owner's passphrase it asks the host for a session
 * token for the agent, runs the command under the supervisor with that token
 * in a scrubbed environment, revokes the token when the command ends, and
 * exits with the command's status.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { flagList, flagString, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import { DEFAULT_PORT, proxyEnv } from './proxy.js';

/** The command as the child would find it: a path, or the first executable on PATH. */
function findCommand(file: string, path: string | undefined): string | null {
  const executable = (f: string) => {
    try {
      accessSync(f, constants.X_OK);
      return statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (file.includes('/')) return executable(file) ? file : null;
  for (const dir of (path ?? '').split(':')) {
    const f = join(dir === '' ? '.' : dir, file);
    if (executable(f)) return f;
  }
  return null;
}

function longLivedToken(path: string): string[] {
  try {
    return [readFileSync(path, 'utf8').trim()];
  } catch {
    return [];
  }
}

export const run: Command = async (ctx) => {
  const words = ctx.inv.args.command;
  const command = Array.isArray(words) ? words : [];
  const file = command[0];
  if (file === undefined || file === '')
    throw new VaultError('VLT-1001', 'Give the command to run after --.');
  // Checked before a session is minted, so a typo costs no token.
  if (findCommand(file, ctx.env.PATH) === null)
    throw new VaultError('VLT-1004', `Command not found: ${JSON.stringify(file)}.`);
  const agent = flagString(ctx, 'agent') ?? basename(file);
  const passphrase = await ownerPassphrase(ctx);
  const { token } = await ctx.call('session.start', {
    passphrase,
    agent,
    scope: flagList(ctx, 'scope'),
  });
  try {
    // The proxy cannot yet tell callers apart by the URL's user-info, so the
    // block carries none. It is set only once the proxy's CA exists (a proxy
    // was set up on this machine): pointing tools at a missing CA breaks them.
    const { env } = (await import('../../../shell/env.js')).childEnv({
      parent: ctx.env,
      sessionToken: token,
      proxy: existsSync(ctx.paths.proxyCa)
        ? proxyEnv(`http://127.0.0.1:${DEFAULT_PORT}`, ctx.paths)
        : [],
      keep: flagList(ctx, 'keep-env'),
      forbiddenValues: [
        ...longLivedToken(ctx.paths.tokenFile),
        ...(ctx.env.VAULT_TOKEN === undefined ? [] : [ctx.env.VAULT_TOKEN]),
      ],
    });
    const { supervise } = await import('../../../shell/supervisor.js');
    const result = await supervise({
      file,
      args: command.slice(1),
      env,
      cwd: process.cwd(),
      io: { stdin: ctx.stdin, stdout: ctx.stdout, signals: process },
    });
    return result.status;
  } finally {
    await ctx.call('session.end', { token }).catch(() => {
      ctx.stderr.write('vault-cli: the session token could not be revoked; it expires anyway.\n');
    });
  }
};
