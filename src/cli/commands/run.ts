/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]...
 * [--allow-write DIR]... [--allow-read PATH]... [--allow-net HOST:PORT]...
 * [--no-sandbox] -- <command> [args...]`.
 * An owner command: it decides the agent's sandbox (shell/sandbox-policy.ts,
 * docs/sandbox.md) before anything is asked; with the owner's passphrase it
 * asks the host for a session token for the agent and holds the session on a
 * connection of its own (the host ends the session when that connection
 * ends, even if `run` is killed); serves a proxy that knows the session by
 * the URL's user-info (with a CA that lives in memory only); runs the command
 * in the sandbox under the supervisor in a scrubbed environment, shows the
 * dashboard on Ctrl-], ends the session when the command ends, and exits
 * with the command's status.
 * The vault host stays a process of its own (docs/decisions.md: Supervisor).
 */
import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { PROXY_PORT } from '../../core/commands.js';
import { VaultError } from '../../core/errors.js';
import { NO_PROXY, proxyEnv, upstreamRoots } from '../../proxy/env.js';
import {
  policyProbes,
  sandboxPolicy,
  type PathKind,
  type SandboxPolicy,
} from '../../../shell/sandbox-policy.js';
import { flag, flagList, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import type * as Sandbox from '../../../shell/sandbox.js';

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

/** What is at `p`: a directory, a file, or nothing. */
function kind(p: string): PathKind | null {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;

/**
 * The sandbox for this invocation: the facts are gathered here (what exists,
 * where vault-cli is installed and found), the decision is the policy's.
 */
function policyFor(
  ctx: CliContext,
  sessionDir: string,
  which: (name: string, path: string | undefined) => string | null,
): SandboxPolicy {
  const p = ctx.paths;
  const onPath = which('vault-cli', ctx.env.PATH);
  const facts = {
    cwd: process.cwd(),
    home: homedir(),
    uid: process.getuid?.() ?? null,
    xdgRuntimeDir: ctx.env.XDG_RUNTIME_DIR,
    sessionDir,
    vaultPaths: [
      p.vaultDir,
      p.socketDir,
      p.configDir,
      ...p.defaultDirs,
      ...[p.passphraseFile, p.newPassphraseFile].filter((f) => f !== null),
    ],
    readOnly: [
      resolve(dirname(ctx.script), '..', '..', '..'),
      ...(onPath === null ? [] : [onPath, realpathSync(onPath)]),
      ...p.shellStartup,
    ],
    allowRead: flagList(ctx, 'allow-read'),
    allowWrite: flagList(ctx, 'allow-write'),
    allowNet: flagList(ctx, 'allow-net'),
  };
  return sandboxPolicy({ ...facts, found: new Map(policyProbes(facts).map((f) => [f, kind(f)])) });
}

/**
 * The session's proxy: PROXY_PORT when free, any free port otherwise; its CA
 * is made for this session and its certificate lives in `dir` until the
 * session ends.
 */
async function sessionProxy(ctx: CliContext, dir: string, confine?: ReadonlySet<string>) {
  const [{ startProxy, proxyUrl }, { Authority }, { HostChannel }] = await Promise.all([
    import('../../proxy/server.js'),
    import('../../proxy/ca.js'),
    import('../../client/client.js'),
  ]);
  // Kept-alive connections to the host: the proxy calls it on every fill.
  const host = new HostChannel(ctx.client);
  const files = {
    cert: join(dir, 'ca.pem'),
    bundle: join(dir, 'ca-bundle.pem'),
    systemRoots: ctx.paths.systemRoots,
  };
  const authority = Authority.ephemeral(files);
  // SSL_CERT_DIR: a directory of the session CA alone (Go and rustls read every
  // file in it; OpenSSL, which wants hashed names, has SSL_CERT_FILE).
  const certDir = join(dir, 'certs');
  mkdirSync(certDir, { mode: 0o700 });
  copyFileSync(files.cert, join(certDir, 'vault-cli-session-ca.pem'));
  const options = {
    authority,
    upstreamCa: upstreamRoots(ctx.paths.systemRoots, flagList(ctx, 'upstream-ca')),
    requireCaller: true,
    ...(confine === undefined ? {} : { confine }),
    resolve: async (
      refs: readonly { entry: string; field: string }[],
      to: string,
      caller: string | null,
    ) => {
      if (caller === null) throw new VaultError('VLT-2040');
      const { values } = await host.call('resolve', { token: caller, refs: [...refs], host: to });
      return values.map((v) => Buffer.from(v, 'base64'));
    },
    // A tunnel opens only for a token the host knows: an ended session's gets 403 at CONNECT.
    admit: async (caller: string) => {
      await host.call('whoami', { token: caller });
    },
  };
  const proxy = await startProxy({ ...options, port: PROXY_PORT }).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      return startProxy({ ...options, port: 0 });
    },
  );
  return {
    proxy,
    host,
    files: { ...files, dir: certDir },
    url: (token: string) => proxyUrl(proxy.port, token),
  };
}

/** The sandbox `run` starts the agent in: what the policy decided, and what carries it out. */
interface Box {
  readonly policy: SandboxPolicy;
  readonly programs: { readonly bwrap: string; readonly socat: string };
  readonly sandbox: typeof Sandbox;
}

/**
 * The agent's environment (shell/env.ts): the session token, and the proxy
 * block pointing at the session's proxy; inside the sandbox, at its loopback
 * end, with the allowed routes reached directly and VAULT_DIR at the session
 * directory, where the client finds the session's socket as it would the host's.
 */
async function agentEnv(
  ctx: CliContext,
  s: {
    token: string;
    dir: string;
    proxy: Awaited<ReturnType<typeof sessionProxy>>;
    box: Box | null;
  },
): Promise<Record<string, string>> {
  const { files } = s.proxy;
  const url = s.proxy.url(s.token);
  // Inside, the proxy's loopback is the sandbox's own: always the documented port.
  const inside = s.box === null ? url : url.replace(/:[0-9]+$/, `:${PROXY_PORT}`);
  const noProxy = [...NO_PROXY, ...(s.box?.policy.routes.map((r) => r.host) ?? [])];
  const ca = { proxyCa: files.cert, proxyCaBundle: files.bundle, proxyCaDir: files.dir };
  const { childEnv } = await import('../../../shell/env.js');
  return childEnv({
    parent: ctx.env,
    sessionToken: s.token,
    proxy: [
      ...proxyEnv(inside, ca, noProxy),
      ...(s.box === null ? [] : [['VAULT_DIR', s.dir] as [string, string]]),
    ],
    keep: flagList(ctx, 'keep-env'),
    forbiddenValues: [
      ...longLivedToken(ctx.paths.tokenFile),
      ...(ctx.env.VAULT_TOKEN === undefined ? [] : [ctx.env.VAULT_TOKEN]),
    ],
  }).env;
}

/** A held session: the agent's command under the supervisor, with the proxy (and sandbox) around it. */
async function supervised(
  ctx: CliContext,
  s: {
    command: readonly string[];
    dir: string;
    /** Absent: the terminal's owner session stands for it. */
    passphrase: string | undefined;
    token: string;
    box: (Box & { hostSocket: string }) | null;
  },
): Promise<number> {
  const { box, token } = s;
  let proxy: Awaited<ReturnType<typeof sessionProxy>> | undefined;
  let relays: { close(): void } | undefined;
  try {
    // Sandboxed, the proxy is the agent's only way out: not back into this machine,
    // except to what the owner allowed with --allow-net.
    proxy = await sessionProxy(ctx, s.dir, box?.policy.confine);
    relays = box === null ? undefined : await box.sandbox.openRelays(box.policy, proxy.proxy);
    const env = await agentEnv(ctx, { token, dir: s.dir, proxy, box });
    const [{ supervise }, { dashboardApi }] = await Promise.all([
      import('../../../shell/supervisor.js'),
      import('./dashboard.js'),
    ]);
    const api = await dashboardApi(ctx, s.passphrase);
    const result = await supervise({
      file: box === null ? (s.command[0] as string) : box.programs.bwrap,
      args:
        box === null
          ? s.command.slice(1)
          : box.sandbox.sandboxArgs({
              ...box.programs,
              policy: box.policy,
              hostSocket: box.hostSocket,
              command: s.command,
            }),
      env,
      cwd: process.cwd(),
      signalForeground: box !== null,
      output: { allowTitle: flag(ctx, 'allow-title') },
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
    relays?.close();
    await proxy?.proxy.close();
    proxy?.host.close();
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
  const sandboxed = !flag(ctx, 'no-sandbox');
  // No silent fallback: a sandbox that cannot start is an error before anything is asked.
  const sandbox = sandboxed ? await import('../../../shell/sandbox.js') : null;
  const programs = sandbox?.probeSandbox(process.platform, ctx.env.PATH) ?? null;
  if (!sandboxed)
    ctx.stderr.write(
      'vault-cli: warning: --no-sandbox: the agent runs as you, with your files, processes and network (docs/sandbox.md)\n',
    );
  const dir = mkdtempSync(join(tmpdir(), 'vault-cli-run-'));
  try {
    // Decided before the passphrase is asked: a path the sandbox cannot honour costs no session.
    const box =
      sandbox === null || programs === null
        ? null
        : { policy: policyFor(ctx, dir, sandbox.which), programs, sandbox };
    // Kept for the dashboard's owner calls while the command runs; see docs/threat-model.md.
    const passphrase = await ownerPassphrase(ctx);
    const started = await ctx.call('session.start', {
      passphrase,
      agent,
      scope: flagList(ctx, 'scope'),
      sandbox: sandboxed,
    });
    const { token } = started;
    const { hold } = await import('../../client/client.js');
    // From here the session ends when this process does, however it ends.
    const held = await hold(ctx.client, token);
    try {
      const hostSocket = started.socket;
      if (box !== null && hostSocket === undefined)
        throw new VaultError(
          'VLT-1005',
          'The agent sandbox cannot start: the vault host gave the session no socket of its own (an older host? `vault-cli daemon stop`, then run again).',
        );
      return await supervised(ctx, {
        command,
        dir,
        passphrase,
        token,
        box: box === null || hostSocket === undefined ? null : { ...box, hostSocket },
      });
    } finally {
      held.release();
      await ctx.call('session.end', { token }).catch(() => {
        // Already ended with the hold, or the host is gone: either way the token is refused.
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
