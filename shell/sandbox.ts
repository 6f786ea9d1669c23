/**
 * The agent sandbox of `vault-cli run` (docs/sandbox.md): bubblewrap, run as
 * the owner without root or a setuid helper of ours, in new user, mount, PID,
 * network, IPC and UTS namespaces, with every capability dropped and no
 * further user namespaces.
 *
 * What the agent gets, in mount order (a later mount covers an earlier one):
 * the whole file system read-only; a private /tmp, /dev and /proc (its own
 * processes only); its working directory and the owner's --allow-write
 * directories writable; then the protected paths covered: the vault and
 * config directories and the passphrase files hidden, the installation of
 * vault-cli and the shell's start-up files read-only again. Its only network
 * is its own loopback, where socat relays 127.0.0.1:1983 to the session's
 * proxy and each --allow-net destination to its relay in `run`; the host is
 * reached through the session's own socket, never the host's.
 *
 * `sandboxArgs` is pure: paths are given, checked and sorted by the caller.
 */
import { spawnSync } from 'node:child_process';
import { VaultError } from '../src/core/errors.js';

/**
 * Where the owner's other credentials usually are, under the home directory:
 * SSH and GPG keys, cloud and cluster logins, registry and Git tokens, password
 * stores, browser profiles. A sandbox hides those that exist unless the owner
 * names one with --allow-read: an agent reads the whole file system, and these
 * are what it would take instead of going through the vault.
 */
export const CREDENTIAL_STORES: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.config/git/credentials',
  '.npmrc',
  '.pypirc',
  '.config/gh',
  '.config/hub',
  '.password-store',
  '.vault-token',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
  '.local/share/keyrings',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
];

/**
 * Unix sockets that lead out of the sandbox: a read-only bind does not stop a
 * connect(), and a new network namespace hides only abstract sockets. Through
 * the user's runtime directory (XDG_RUNTIME_DIR: the service manager and
 * session bus, where `systemd-run --user` starts a process outside any
 * sandbox; ssh and gpg agents) or a container engine's socket, an agent would
 * act as the owner, or as root, outside. The runtime directory is given by the
 * caller; these are the fixed ones.
 */
export const ESCAPE_SOCKETS: readonly string[] = [
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/run/podman/podman.sock',
  '/run/containerd/containerd.sock',
];

/** The proxy's port inside the sandbox: its loopback is its own, so always the documented one. */
export const SANDBOX_PROXY_PORT = 1983;

/** A direct TCP route the owner allowed (--allow-net host:port): an address inside, a relay outside. */
export interface NetRoute {
  readonly host: string;
  readonly port: number;
  /** The loopback address the host name resolves to inside (127.0.0.x). */
  readonly address: string;
  /** The Unix socket of `run`'s relay to host:port. */
  readonly socket: string;
}

export interface SandboxSpec {
  readonly bwrap: string;
  readonly socat: string;
  /** The agent's command: its file (looked up on the child's PATH) and arguments. */
  readonly command: readonly string[];
  readonly cwd: string;
  /** Existing directories the agent may write besides cwd and its /tmp (--allow-write). */
  readonly writable: readonly string[];
  /** Existing paths the agent may neither read nor write: directories and files. */
  readonly hidden: readonly { readonly path: string; readonly dir: boolean }[];
  /** Existing paths bound read-only again after the writable ones (installation, start-up files). */
  readonly readOnly: readonly string[];
  /** `run`'s directory for this session, bound read-only at the same path: CA files, sockets. */
  readonly sessionDir: string;
  /** The session's host socket, bound over a placeholder file in sessionDir. */
  readonly hostSocket: { readonly from: string; readonly to: string };
  /** The proxy's Unix socket (inside sessionDir). */
  readonly proxySocket: string;
  readonly routes: readonly NetRoute[];
  /** A hosts file naming each route's address (bound over /etc/hosts), when there are routes. */
  readonly hostsFile: string | null;
}

/** Single-quoted for sh. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The script the sandbox starts with: the loopback relays, a wait until they
 * listen (so the agent's first request finds them), then the agent as a
 * foreground job of its own. `set -m` gives the agent's process group the
 * terminal, so Ctrl-C reaches the agent and not bubblewrap (which would die
 * of it and take the agent with it).
 */
function innerScript(s: SandboxSpec): string {
  const relays = [
    { listen: `127.0.0.1`, port: SANDBOX_PROXY_PORT, to: s.proxySocket },
    ...s.routes.map((r) => ({ listen: r.address, port: r.port, to: r.socket })),
  ];
  const lines = relays.map(
    (r) =>
      `${q(s.socat)} TCP-LISTEN:${r.port},bind=${r.listen},fork,reuseaddr UNIX-CONNECT:${q(r.to)} </dev/null >/dev/null 2>&1 &`,
  );
  // /proc/net/tcp lists this namespace's sockets; state 0A is LISTEN.
  lines.push(
    `i=0; while [ "$(grep -c ' 0A ' /proc/net/tcp)" -lt ${relays.length} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done`,
    'set -m',
    '"$@"',
    'exit $?',
  );
  return lines.join('\n');
}

/** bubblewrap's arguments for `spec`: the command is `spec.bwrap` with these. */
export function sandboxArgs(s: SandboxSpec): string[] {
  const a: string[] = [
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
  ];
  for (const dir of [s.cwd, ...s.writable]) a.push('--bind', dir, dir);
  a.push('--ro-bind', s.sessionDir, s.sessionDir, '--bind', s.hostSocket.from, s.hostSocket.to);
  if (s.hostsFile !== null) a.push('--ro-bind', s.hostsFile, '/etc/hosts');
  for (const p of s.readOnly) a.push('--ro-bind', p, p);
  for (const h of s.hidden) {
    if (h.dir) a.push('--tmpfs', h.path, '--remount-ro', h.path);
    else a.push('--ro-bind', '/dev/null', h.path);
  }
  a.push('--chdir', s.cwd, '--', '/bin/bash', '-c', innerScript(s), 'vault-cli-sandbox');
  a.push(...s.command);
  return a;
}

/** Where a program is on PATH, or null. */
export function which(name: string, path: string | undefined): string | null {
  const r = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', name], {
    env: { PATH: path ?? '/usr/bin:/bin' },
    encoding: 'utf8',
  });
  const found = r.stdout.trim();
  return r.status === 0 && found.startsWith('/') ? found : null;
}

/**
 * Checks that the sandbox can start here, before any session is minted, and
 * returns the programs it needs.
 * @throws VaultError VLT-1005 naming what is missing and how to fix it.
 */
export function probeSandbox(
  platform: NodeJS.Platform,
  path: string | undefined,
): { bwrap: string; socat: string } {
  const missing = (what: string) =>
    new VaultError(
      'VLT-1005',
      `The agent sandbox cannot start: ${what}. Or run without it: --no-sandbox (docs/sandbox.md).`,
    );
  if (platform !== 'linux') throw missing(`it needs Linux (bubblewrap), and this is ${platform}`);
  const bwrap = which('bwrap', path);
  if (bwrap === null)
    throw missing('bubblewrap is not installed (Debian, Ubuntu: apt install bubblewrap)');
  const socat = which('socat', path);
  if (socat === null) throw missing('socat is not installed (Debian, Ubuntu: apt install socat)');
  const r = spawnSync(
    bwrap,
    [
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--',
      '/bin/true',
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (r.status !== 0) {
    // bubblewrap's own words say which namespace or option failed; they hold no secret.
    const said =
      (r.stderr ?? '')
        .trim()
        .split('\n')[0]
        ?.replace(/^bwrap: /, '') ?? '';
    throw missing(
      `bubblewrap could not make its namespaces (${said || `exit ${String(r.status ?? r.signal)}`}); ` +
        'user namespaces may be off (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu ' +
        'kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), ' +
        'or this bubblewrap is older than 0.8 (--disable-userns)',
    );
  }
  return { bwrap, socat };
}
