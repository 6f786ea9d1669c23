/**
 * `vault-cli proxy [--port N]`, `proxy env`, `proxy ca`. The proxy acts for
 * the agent that ran `init` (its token from VAULT_TOKEN or the token file) and
 * reaches the vault host through the client, like every other command. A
 * request whose proxy URL carries a token as user-info acts for that token
 * instead (docs/decisions.md: Proxy).
 */
import { existsSync, readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';
import { VaultError } from '../../core/errors.js';
import { flagCount, flagList, type CliContext, type Command } from '../context.js';
import { loadToken } from '../token.js';

export const DEFAULT_PORT = 1983;

function port(ctx: CliContext): number {
  const p = flagCount(ctx, 'port') ?? DEFAULT_PORT;
  if (p > 65535) throw new VaultError('VLT-1001', 'Ports are 1 to 65535.');
  return p;
}

async function authority(ctx: CliContext, token: string) {
  const { Authority } = await import('../../proxy/ca.js');
  const p = ctx.paths;
  return Authority.loadOrCreate(
    { config: p.proxyConfig, cert: p.proxyCa, bundle: p.proxyCaBundle, systemRoots: p.systemRoots },
    token,
  );
}

/**
 * Every variable in common use that names the file a client trusts instead
 * of (not beside) the system store: each gets the bundle (system roots plus
 * the proxy CA), whatever the user had, so no tool is left on a store that
 * does not know the proxy's leaves.
 */
export const CA_BUNDLE_VARS = [
  'SSL_CERT_FILE', // OpenSSL, Python ssl/urllib, Ruby, Go, rustls-native-certs, uv
  'REQUESTS_CA_BUNDLE', // Python requests (and conda)
  'CURL_CA_BUNDLE', // curl, and requests when REQUESTS_CA_BUNDLE is unset
  'GIT_SSL_CAINFO', // git
  'PIP_CERT', // pip (wins over REQUESTS_CA_BUNDLE)
  'AWS_CA_BUNDLE', // AWS CLI and SDKs (botocore)
  'HTTPLIB2_CA_CERTS', // httplib2 (Google's older Python clients)
  'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH', // gRPC core (Python, Ruby, C++)
  'CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE', // gcloud
  'NIX_SSL_CERT_FILE', // Nix
  'DENO_CERT', // Deno
  'CARGO_HTTP_CAINFO', // cargo
  'NPM_CONFIG_CAFILE', // npm (replaces its CA list)
  'npm_config_cafile', // npm reads either spelling
] as const;

/**
 * The proxy and CA block of a tool's environment (DESIGN §8): `proxy env`
 * prints it, `run` puts it into the child's environment. `proxyCaDir`: a
 * directory holding only the CA, for SSL_CERT_DIR (OpenSSL and Go read it
 * beside SSL_CERT_FILE; a user's own directory is replaced by it).
 */
export function proxyEnv(
  url: string,
  paths: {
    readonly proxyCa: string;
    readonly proxyCaBundle: string;
    readonly proxyCaDir?: string;
  },
): [string, string][] {
  const bundle = paths.proxyCaBundle;
  return [
    ['HTTPS_PROXY', url],
    ['https_proxy', url],
    ['HTTP_PROXY', url],
    ['http_proxy', url],
    ['NO_PROXY', 'localhost,127.0.0.1,::1'],
    ['no_proxy', 'localhost,127.0.0.1,::1'],
    ['NODE_USE_ENV_PROXY', '1'],
    ['NODE_EXTRA_CA_CERTS', paths.proxyCa],
    ...CA_BUNDLE_VARS.map((k): [string, string] => [k, bundle]),
    ...(paths.proxyCaDir === undefined
      ? []
      : [['SSL_CERT_DIR', paths.proxyCaDir] as [string, string]]),
  ];
}

/**
 * What upstream servers are verified against: the system roots (the bundle
 * file, or Node's copy of the system store), plus each `--upstream-ca` file.
 * @throws VaultError VLT-1002 when an `--upstream-ca` file cannot be read.
 */
export function upstreamRoots(ctx: CliContext): string[] {
  let roots: string[];
  try {
    roots = [readFileSync(ctx.paths.systemRoots, 'utf8')];
  } catch {
    roots = getCACertificates('system');
  }
  const extra = flagList(ctx, 'upstream-ca').map((f) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      throw new VaultError('VLT-1002', `Cannot read the CA file ${JSON.stringify(f)}.`);
    }
  });
  return [...roots, ...extra];
}

/** A value for a POSIX shell: single-quoted unless plainly safe. */
const shq = (v: string) =>
  /^[A-Za-z0-9_./:,=@+-]+$/.test(v) ? v : `'${v.replaceAll("'", `'\\''`)}'`;

export const run: Command = async (ctx) => {
  const sub = ctx.inv.command?.path[1];
  // A public path: printed without a token once the CA exists (a token makes it).
  if (sub === 'ca' && existsSync(ctx.paths.proxyCa)) {
    ctx.stdout.write(ctx.paths.proxyCa + '\n');
    return 0;
  }
  const token = loadToken(ctx);
  if (sub === 'ca') {
    await authority(ctx, token);
    ctx.stdout.write(ctx.paths.proxyCa + '\n');
    return 0;
  }
  if (sub === 'env') {
    await authority(ctx, token);
    const vars = proxyEnv(`http://127.0.0.1:${port(ctx)}`, ctx.paths);
    ctx.stdout.write(vars.map(([k, v]) => `export ${k}=${shq(v)}\n`).join(''));
    return 0;
  }

  // The token is checked before anything listens: a proxy that cannot resolve is no use.
  await ctx.call('whoami', { token });
  const [{ startProxy }, { HostChannel }] = await Promise.all([
    import('../../proxy/server.js'),
    import('../../client/client.js'),
  ]);
  // Kept-alive connections to the host, not ctx.call (a new connection per call,
  // and a module-loader lookup per call): the proxy calls on every fill.
  const channel = new HostChannel({ ...ctx.client, autoStart: true });
  const proxy = await startProxy({
    port: port(ctx),
    authority: await authority(ctx, token),
    upstreamCa: upstreamRoots(ctx),
    // A caller's own token, when its proxy URL carries one, else the init agent's.
    // A caller token the host refuses is refused: never retried as the init agent.
    resolve: async (refs, host, caller) => {
      const { values } = await channel.call('resolve', {
        token: caller ?? token,
        refs: [...refs],
        host,
      });
      return values.map((v) => Buffer.from(v, 'base64'));
    },
    admit: async (caller) => {
      await channel.call('whoami', { token: caller });
    },
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') {
      throw new VaultError('VLT-1002', `Port ${port(ctx)} is in use: is a proxy already running?`);
    }
    throw err;
  });
  ctx.stderr.write(
    `vault-cli: proxy on http://127.0.0.1:${proxy.port} (CA ${ctx.paths.proxyCa})\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () =>
      void proxy.close().then(() => {
        channel.close();
        resolve();
      });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
};
