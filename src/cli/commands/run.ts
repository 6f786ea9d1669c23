/**
 * `vault-cli run [--agent <name>] [--scope <entry>]... [--keep-env NAME]...
 * [--allow-write DIR]... [--allow-net HOST:PORT]... [--no-sandbox] -- <command> [args...]`.
 * An owner command: with the owner's passphrase it asks the host for a session
 * token for the agent and holds the session on a connection of its own (the
 * host ends the session when that connection ends, even if `run` is killed),
 * serves a proxy that knows the session by the URL's user-info (with a CA that
 * lives in memory only), runs the command in the agent sandbox
 * (shell/sandbox.ts, docs/sandbox.md) under the supervisor in a scrubbed
 * environment, shows the dashboard on Ctrl-], ends the session when the
 * command ends, and exits with the command's status.
 * The vault host stays a process of its own (docs/decisions.md: Supervisor).
 */
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect, isIP, type Server, type Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, relative, isAbsolute, resolve } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { flag, flagList, flagString, type CliContext, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import { DEFAULT_PORT, proxyEnv, upstreamRoots } from './proxy.js';
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

/** Ctrl-]: hands the terminal to the dashboard and back, as telnet and docker attach use it. */
const HAND_OVER_KEY = 0x1d;

/**
 * The session's proxy: 1983 when free, any free port otherwise; its CA is made
 * for this session and its certificate lives in `dir` until the session ends.
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
    upstreamCa: upstreamRoots(ctx),
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
  const proxy = await startProxy({ ...options, port: DEFAULT_PORT }).catch(
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

/** Whether `p` is `dir` or inside it. */
function within(p: string, dir: string): boolean {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** `--allow-net host:port`, checked. */
function parseRoute(text: string): { host: string; port: number } {
  const m = /^([A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(text);
  const port = Number(m?.[2]);
  const host = (m?.[1] ?? '').toLowerCase();
  // A name is mapped to a loopback address inside; an address cannot be (no such interface there).
  if (m === null || port < 1 || port > 65535 || isIP(host) !== 0)
    throw new VaultError(
      'VLT-1002',
      `--allow-net takes host:port with a host name (or localhost), not ${JSON.stringify(text)}.`,
    );
  if (host === 'localhost' && port === SANDBOX_PORT)
    throw new VaultError(
      'VLT-1002',
      `--allow-net: localhost:${SANDBOX_PORT} is the vault proxy inside.`,
    );
  return { host, port };
}

/** The proxy's port inside the sandbox (shell/sandbox.ts SANDBOX_PROXY_PORT, without loading it). */
const SANDBOX_PORT = 1983;

/** A Unix-socket server at `path` whose connections `onConnection` takes. */
async function listenUnix(path: string, onConnection: (s: Socket) => void) {
  const server = createServer(onConnection);
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(path, () => res());
  });
  return server;
}

/**
 * Everything the sandbox needs besides the agent's command: the paths it
 * protects and opens, and `run`'s relays for the proxy and each allowed route.
 * Throws before anything is started when a path cannot be honoured.
 */
async function prepareSandbox(
  ctx: CliContext,
  programs: { bwrap: string; socat: string },
  dir: string,
  hostSocket: string,
  proxy: { accept(s: Socket): void },
  servers: Server[],
): Promise<Omit<Sandbox.SandboxSpec, 'command'>> {
  const cwd = process.cwd();
  const kind = (p: string): 'dir' | 'file' | null => {
    try {
      return statSync(p).isDirectory() ? 'dir' : 'file';
    } catch {
      return null;
    }
  };
  const secretPaths = [
    ctx.paths.vaultDir,
    ctx.paths.socketDir,
    ctx.paths.configDir,
    ...ctx.paths.defaultDirs,
    ...[ctx.paths.passphraseFile, ctx.paths.newPassphraseFile].filter((p) => p !== null),
  ];
  const hidden = [...new Set(secretPaths.map((p) => resolve(p)))]
    .map((path) => ({ path, kind: kind(path) }))
    .filter((h) => h.kind !== null)
    .map((h) => ({ path: h.path, dir: h.kind === 'dir' }));
  const covered = hidden.find((h) => within(cwd, h.path));
  if (covered !== undefined)
    throw new VaultError(
      'VLT-1001',
      'Run the agent from a directory outside the vault and configuration directories.',
    );
  const sandbox = await import('../../../shell/sandbox.js');
  // The owner's other credentials: hidden unless named with --allow-read.
  const home = homedir();
  const stores = sandbox.CREDENTIAL_STORES.map((f) => join(home, f));
  const shown = flagList(ctx, 'allow-read').map((p) => {
    const full = resolve(p);
    if (!stores.includes(full))
      throw new VaultError(
        'VLT-1002',
        `--allow-read takes one of the credential stores a sandbox hides (${sandbox.CREDENTIAL_STORES.map((f) => `~/${f}`).join(', ')}), not ${JSON.stringify(p)}.`,
      );
    return full;
  });
  // Sockets that lead outside: the runtime directory (unless the session's own files are in it) and container engines.
  const runtime = ctx.env.XDG_RUNTIME_DIR ?? `/run/user/${process.getuid?.() ?? ''}`;
  const escapes = [
    ...(within(dir, runtime) || within(cwd, runtime) ? [] : [runtime]),
    ...sandbox.ESCAPE_SOCKETS,
  ];
  for (const path of [...stores.filter((s) => !shown.includes(s)), ...escapes].map((p) =>
    resolve(p),
  )) {
    const k = kind(path);
    if (k === null || hidden.some((h) => h.path === path)) continue;
    if (within(cwd, path))
      throw new VaultError(
        'VLT-1001',
        `Run the agent from a directory outside ${path} (the sandbox hides it), or name it with --allow-read.`,
      );
    hidden.push({ path, dir: k === 'dir' });
  }
  const writable = flagList(ctx, 'allow-write').map((d) => {
    const full = resolve(d);
    if (kind(full) !== 'dir')
      throw new VaultError('VLT-1002', `--allow-write takes a directory: ${JSON.stringify(d)}.`);
    // A directory holding one of them is fine: they are covered again after it.
    if (hidden.some((h) => within(full, h.path)))
      throw new VaultError(
        'VLT-1002',
        `--allow-write cannot open a path the sandbox hides (the vault, configuration, a credential store): ${JSON.stringify(d)}.`,
      );
    return full;
  });
  // The installation and the `vault-cli` on PATH: readable (the agent runs them), never writable.
  const installation = resolve(dirname(ctx.script), '..', '..', '..');
  const onPath = sandbox.which('vault-cli', ctx.env.PATH);
  const readOnly = [
    installation,
    ...(onPath === null ? [] : [onPath, realpathSync(onPath)]),
    ...ctx.paths.shellStartup,
  ].filter((p, i, all) => kind(p) !== null && all.indexOf(p) === i);

  // The proxy: 127.0.0.1:1983 inside, relayed by socat to this socket, served by the session's proxy.
  const proxySocket = join(dir, 'proxy.sock');
  servers.push(await listenUnix(proxySocket, (s) => proxy.accept(s)));
  // The host: the session's own socket, bound over this placeholder.
  writeFileSync(join(dir, 'host.sock'), '');

  const routes = flagList(ctx, 'allow-net').map(parseRoute);
  const planned = await Promise.all(
    routes.map(async (r, i) => {
      const socket = join(dir, `net-${i}.sock`);
      servers.push(
        await listenUnix(socket, (inner) => {
          const outer = connect(r.port, r.host);
          inner.on('error', () => outer.destroy());
          outer.on('error', () => inner.destroy());
          inner.pipe(outer).pipe(inner);
        }),
      );
      // Clients resolve localhost themselves (RFC 6761), never through the hosts file.
      return { ...r, address: r.host === 'localhost' ? '127.0.0.1' : `127.0.0.${i + 2}`, socket };
    }),
  );
  let hostsFile: string | null = null;
  if (planned.length > 0) {
    hostsFile = join(dir, 'hosts');
    const system = existsSync('/etc/hosts') ? readFileSync('/etc/hosts', 'utf8') : '';
    const names = new Map<string, string>();
    for (const r of planned)
      if (r.host !== 'localhost' && !names.has(r.host)) names.set(r.host, r.address);
    writeFileSync(hostsFile, [...[...names].map(([h, a]) => `${a}\t${h}`), system].join('\n'));
  }
  return {
    ...programs,
    cwd,
    writable,
    hidden,
    readOnly,
    sessionDir: dir,
    hostSocket: { from: hostSocket, to: join(dir, 'host.sock') },
    proxySocket,
    routes: planned,
    hostsFile,
  };
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
  const dir = mkdtempSync(join(tmpdir(), 'vault-cli-run-'));
  let proxy: Awaited<ReturnType<typeof sessionProxy>> | undefined;
  const servers: Server[] = [];
  try {
    // Sandboxed, the proxy is the agent's only way out: not back into this machine,
    // except to what the owner allowed with --allow-net.
    const confine = sandboxed
      ? new Set(
          flagList(ctx, 'allow-net')
            .map((t) => parseRoute(t))
            .map((r) => `${r.host.toLowerCase()}:${r.port}`),
        )
      : undefined;
    proxy = await sessionProxy(ctx, dir, confine);
    const spec =
      sandbox === null || programs === null || started.socket === undefined
        ? null
        : await prepareSandbox(ctx, programs, dir, started.socket, proxy.proxy, servers);
    const url = proxy.url(token);
    const inside =
      sandbox === null ? url : url.replace(/:[0-9]+$/, `:${sandbox.SANDBOX_PROXY_PORT}`);
    const noProxy = ['localhost', '127.0.0.1', '::1', ...(spec?.routes.map((r) => r.host) ?? [])];
    const { env } = (await import('../../../shell/env.js')).childEnv({
      parent: ctx.env,
      sessionToken: token,
      proxy: [
        ...proxyEnv(inside, {
          proxyCa: proxy.files.cert,
          proxyCaBundle: proxy.files.bundle,
          proxyCaDir: proxy.files.dir,
        }).map(([k, v]): [string, string] =>
          k === 'NO_PROXY' || k === 'no_proxy' ? [k, noProxy.join(',')] : [k, v],
        ),
        // Inside, the client finds the session's socket where it looks for the host's.
        ...(spec === null ? [] : [['VAULT_DIR', dir] as [string, string]]),
      ],
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
      file: spec === null ? file : spec.bwrap,
      args:
        spec === null || sandbox === null
          ? command.slice(1)
          : sandbox.sandboxArgs({ ...spec, command }),
      env,
      cwd: process.cwd(),
      signalForeground: spec !== null,
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
    for (const s of servers) s.close();
    await proxy?.proxy.close();
    proxy?.host.close();
    rmSync(dir, { recursive: true, force: true });
    held.release();
    await ctx.call('session.end', { token }).catch(() => {
      // Already ended with the hold, or the host is gone: either way the token is refused.
    });
  }
};
