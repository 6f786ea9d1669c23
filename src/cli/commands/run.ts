/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]... -- <command> [args...]`.
 * An owner command: with the owner's passphrase it asks the host for a session
 * token for the agent, serves a proxy that knows the session by the URL's
 * user-info (with a CA that lives in memory only), runs the command under the
 * supervisor in a scrubbed environment, shows the dashboard on Ctrl-], revokes
 * the token when the command ends, and exits with the command's status.
 * The vault host stays a process of its own (docs/decisions.md: Supervisor).
 */
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { flagList, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import { DEFAULT_PORT, proxyEnv, upstreamRoots } from './proxy.js';

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

/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;

/**
 * The session's proxy: 1983 when free, any free port otherwise; its CA is made
 * for this session and its certificate lives in `dir` until the session ends.
 */
async function sessionProxy(ctx: CliContext, dir: string) {
  const [{ startProxy, proxyUrl }, { Authority }] = await Promise.all([
    import('../../proxy/server.js'),
    import('../../proxy/ca.js'),
  ]);
  const files = {
    cert: join(dir, 'ca.pem'),
    bundle: join(dir, 'ca-bundle.pem'),
    systemRoots: ctx.paths.systemRoots,
  };
  const authority = Authority.ephemeral(files);
  const options = {
    authority,
    upstreamCa: upstreamRoots(ctx),
    requireCaller: true,
    resolve: async (
      refs: readonly { entry: string; field: string }[],
      host: string,
      caller: string | null,
    ) => {
      if (caller === null) throw new VaultError('VLT-2040');
      const { values } = await ctx.call('resolve', { token: caller, refs: [...refs], host });
      return values.map((v) => Buffer.from(v, 'base64'));
    },
    // A tunnel opens only for a token the host knows: an ended session's gets 403 at CONNECT.
    admit: async (caller: string) => {
      await ctx.call('whoami', { token: caller });
    },
  };
  const proxy = await startProxy({ ...options, port: DEFAULT_PORT }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      return startProxy({ ...options, port: 0 });
    },
  );
  return { proxy, files, url: (token: string) => proxyUrl(proxy.port, token) };
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
  // Kept for the dashboard's owner calls while the command runs; see docs/threat-model.md.
  const passphrase = await ownerPassphrase(ctx);
  const { token } = await ctx.call('session.start', {
    passphrase,
    agent,
    scope: flagList(ctx, 'scope'),
  });
  const dir = mkdtempSync(join(tmpdir(), 'vault-cli-run-'));
  let proxy: Awaited<ReturnType<typeof sessionProxy>> | undefined;
  try {
    proxy = await sessionProxy(ctx, dir);
    const { env } = (await import('../../../shell/env.js')).childEnv({
      parent: ctx.env,
      sessionToken: token,
      proxy: proxyEnv(proxy.url(token), {
        proxyCa: proxy.files.cert,
        proxyCaBundle: proxy.files.bundle,
      }),
      keep: flagList(ctx, 'keep-env'),
      forbiddenValues: [
        ...longLivedToken(ctx.paths.tokenFile),
        ...(ctx.env.VAULT_TOKEN === undefined ? [] : [ctx.env.VAULT_TOKEN]),
      ],
    });
    const [{ supervise }, { dashboardApi }] = await Promise.all([
      import('../../../shell/supervisor.js'),
      import('./dashboard.js'),
    ]);
    const api = await dashboardApi(ctx, passphrase);
    const result = await supervise({
      file,
      args: command.slice(1),
      env,
      cwd: process.cwd(),
      io: { stdin: ctx.stdin, stdout: ctx.stdout, signals: process },
      handOver: {
        key: HAND_OVER_KEY,
        show: async (io) => {
          const { showDashboard } = await import('../../../tui/index.js');
          await showDashboard({
            api,
            stdin: io.stdin,
            stdout: io.stdout,
            signal: io.signal,
            vault: ctx.paths.vaultDir,
          });
        },
        onError: (err) => {
          ctx.stderr.write(
            `vault-cli: ${err instanceof VaultError ? `${err.code}: ${err.message}` : 'the dashboard failed'}\r\n`,
          );
        },
      },
    });
    return result.status;
  } finally {
    await proxy?.proxy.close();
    rmSync(dir, { recursive: true, force: true });
    await ctx.call('session.end', { token }).catch(() => {
      ctx.stderr.write('vault-cli: the session token could not be revoked; it expires anyway.\n');
    });
  }
};
