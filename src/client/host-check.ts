/**
 * Before the owner's passphrase goes onto the host's socket, the client checks
 * who is listening: a same-user agent can kill the host and put its own process
 * on `host.sock` to catch the owner's next passphrase (issue 16). The check runs
 * on the very connection the passphrase will be written to, with the peer's
 * identity as the kernel recorded it (SO_PEERCRED), so the process checked is
 * the process that reads.
 *
 * What it asks of the peer, and why each holds or not, is in
 * docs/threat-model.md ("The owner's client checks the host").
 */
import type { Socket } from 'node:net';
import { VaultError } from '../core/errors.js';
import { LOCK_NAME } from '../core/protocol.js';
import type { PeerCred } from '../kernel/unix.js';
import { ACCEPT_FAULT_SHIM } from './test-build.js';

// Built-ins by getBuiltinModule, not import: this file is in get's bundle
// (scripts/bundle.mjs), which would otherwise import node:fs's whole namespace
// on every start, though only an owner's request runs the check.
const { lstatSync, readFileSync, readdirSync, readlinkSync, realpathSync } =
  process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** Whom the owner's client expects at the other end: this installation's host. */
export interface ExpectedHost {
  /** The directory holding the socket (and, in same-user mode, the host lock). */
  readonly socketDir: string;
  readonly socketPath: string;
  /** The node binary and CLI script a host of this installation runs. */
  readonly node: string;
  readonly script: string;
  /**
   * Accept a host under libfaketime (LD_PRELOAD and FAKETIME_* set): the
   * tests that move the host's clock, in a test build only (ACCEPT_FAKETIME
   * in test-build.ts; never from the environment). Nothing else is relaxed.
   */
  readonly acceptFaketime?: boolean;
  /** The hardened host's uid: then the socket and its directory must be that user's. */
  readonly systemUid?: number;
}

/**
 * Variables that load code into a Node process or change its clock: a host
 * started with one of these is not this installation's host, whoever started it.
 */
const STEERING =
  /^(LD_|DYLD_|FAKETIME|NODE_OPTIONS$|NODE_COMPILE_CACHE$|NODE_INSPECT|NODE_REPL_EXTERNAL_MODULE$|NODE_PATH$|NODE_V8_COVERAGE$|NODE_DEBUG_NATIVE$|NODE_ICU_DATA$|GLIBC_TUNABLES$|MALLOC_)/;

/** The namespaces the host must share with the owner's client (/proc/PID/ns/<name>). */
const NAMESPACES = ['mnt', 'user'] as const;

/**
 * A listener whose /proc cannot be read because it has exited (gone, or a
 * zombie its parent has not reaped: a killed host) stopped under the client;
 * it is not an impostor. VLT-3005, the passphrase unsent.
 */
function refuseUnlessStopped(pid: number, why: string): never {
  let state: string | undefined;
  try {
    state = /^[0-9]+ \(.*\) (\S)/s.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
  } catch {
    state = 'X';
  }
  if (state === 'Z' || state === 'X')
    throw new VaultError(
      'VLT-3005',
      'The vault host stopped before the passphrase was sent; nothing was done: run the command again.',
    );
  return refuse(why);
}

function refuse(why: string): never {
  throw new VaultError(
    'VLT-3010',
    `The process on the vault host's socket is not this vault's host (${why}); the passphrase was not sent.`,
  );
}

/** Linux's dev_t as /proc/locks prints it: `MAJOR:MINOR` in hex. */
function devName(dev: number): string {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/** The pids holding an exclusive flock on the file `lockPath` (/proc/locks). */
export function lockHolders(lockPath: string): number[] {
  let st;
  try {
    st = lstatSync(lockPath);
  } catch {
    return [];
  }
  if (!st.isFile()) return [];
  const inode = `${devName(st.dev)}:${st.ino}`;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === 'FLOCK' && f[3] === 'WRITE' && f[5] === inode)
    .map((f) => Number(f[4]));
}

/** Whether process `pid` holds an exclusive flock on the file `lockPath`. */
function holdsLock(pid: number, lockPath: string): boolean {
  // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
  return lockHolders(lockPath).includes(pid);
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Socket inodes of process `pid` that are TCP or UDP sockets (an inspector port, for one). */
interface NetSocket {
  readonly table: string;
  readonly inode: string;
  /** /proc/net's state, hex: 0A is LISTEN. */
  readonly state: string;
  readonly localPort: number;
}

function networkSockets(pid: number): NetSocket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[([0-9]+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1] !== undefined) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const found: NetSocket[] = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const inode = cols[9];
      if (inode === undefined || !inodes.has(inode)) continue;
      const localPort = parseInt(cols[1]?.split(':').pop() ?? '', 16);
      found.push({ table, inode, state: cols[3] ?? '', localPort });
    }
  }
  return found;
}

/**
 * Whether a host that failed its check had merely stopped under the client
 * (its idle stop, a kill) rather than been replaced: the socket file is gone
 * or is no longer the one connected to, the connection has been closed, or
 * the listening process has exited. The passphrase was not sent either way; a
 * stopped host is started and checked again, never reported as an
 * impersonator (VLT-3010) or as a raw ENOENT (VLT-3007).
 * @param socketIno the socket file's inode before connecting.
 */
export async function hostVanished(
  socket: Socket,
  socketPath: string,
  socketIno: number,
): Promise<boolean> {
  try {
    if (lstatSync(socketPath).ino !== socketIno) return true;
  } catch {
    return true;
  }
  if (socket.destroyed || socket.readableEnded) return true;
  if (process.platform !== 'linux') return false;
  const { peerCred } = await import('../kernel/unix.js');
  let pid: number;
  try {
    pid = peerCred(socket).pid;
  } catch {
    return false;
  }
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Checks the process behind `socket` before a passphrase is written to it.
 * @throws VaultError VLT-3010 naming the check that failed.
 */
export async function checkHost(socket: Socket, expected: ExpectedHost): Promise<void> {
  // Linux only: elsewhere there is neither SO_PEERCRED nor /proc to ask, and
  // the owner's client trusts the socket's directory alone, as before issue 16
  // (docs/threat-model.md).
  if (process.platform !== 'linux') return;
  const { peerCred } = await import('../kernel/unix.js');
  let peer;
  try {
    peer = peerCred(socket);
  } catch {
    return refuse('its identity cannot be read from the kernel');
  }
  if (checkOwners(peer, expected) === 'system') return;
  if (peer.pid === 0) {
    // The kernel names no pid for a peer outside this PID namespace: inside a
    // `run` sandbox, whose socket the owner never needs.
    refuse('it runs outside this PID namespace, as from inside a `run` sandbox');
  }
  if (!holdsLock(peer.pid, join(expected.socketDir, LOCK_NAME))) {
    refuseUnlessStopped(peer.pid, `pid ${peer.pid} does not hold the vault's host lock`);
  }
  checkNamespaces(peer.pid);
  checkProcess(peer.pid, expected);
}

/**
 * The socket's directory, the socket and the listener belong to the expected
 * user: this user, or the hardened host's ('system': nothing more to check).
 */
function checkOwners(peer: PeerCred, expected: ExpectedHost): 'system' | 'mine' {
  const me = process.getuid?.() ?? -1;
  const dir = lstatSync(expected.socketDir);
  const sock = lstatSync(expected.socketPath);
  if (!dir.isDirectory() || (dir.mode & 0o022) !== 0) {
    refuse('its directory is writable by others');
  }
  if (expected.systemUid !== undefined) {
    // Hardened: the host's own user owns the directory, so no other user can
    // have replaced the socket, and the kernel says that user is listening.
    // Its /proc is not ours to read, and need not be.
    const uid = expected.systemUid;
    if (dir.uid !== uid || sock.uid !== uid || peer.uid !== uid) {
      refuse(
        `the socket's directory belongs to uid ${dir.uid}, the socket to ${sock.uid}, the listener runs as ${peer.uid}; the host's user is ${uid}`,
      );
    }
    return 'system';
  }
  if (dir.uid !== me || sock.uid !== me || peer.uid !== me) {
    refuse(`it runs as uid ${peer.uid}, the socket's directory belongs to uid ${dir.uid}`);
  }
  return 'mine';
}

/**
 * Before anything else is read from /proc: a listener in a mount namespace
 * of its own (`unshare -Urm`, no privilege needed) can have bind-mounted any
 * script over main.js, and then its cmdline, exe, environ and maps all look
 * like the host's; a user namespace of its own could give it capabilities
 * that a check by uid does not see.
 */
function checkNamespaces(pid: number): void {
  for (const ns of NAMESPACES) {
    let theirs: string;
    let ours: string;
    try {
      theirs = readlinkSync(`/proc/${pid}/ns/${ns}`);
      ours = readlinkSync(`/proc/self/ns/${ns}`);
    } catch {
      return refuseUnlessStopped(pid, `pid ${pid}'s ${ns} namespace cannot be read`);
    }
    if (theirs !== ours) {
      refuse(`pid ${pid} runs in a ${ns} namespace of its own (${theirs}, this is ${ours})`);
    }
  }
}

/** The process is this installation's `vault-cli daemon`, untraced, unsteered, with no inspector. */
function checkProcess(pid: number, expected: ExpectedHost): void {
  const proc = `/proc/${pid}`;
  let exe: string;
  let argv: string[];
  let env: string[];
  let tracer: string | undefined;
  try {
    exe = readlinkSync(`${proc}/exe`);
    argv = readFileSync(`${proc}/cmdline`, 'utf8').split('\0').slice(0, -1);
    env = readFileSync(`${proc}/environ`, 'utf8').split('\0');
    tracer = /^TracerPid:\s*([0-9]+)$/m.exec(readFileSync(`${proc}/status`, 'utf8'))?.[1];
  } catch {
    return refuseUnlessStopped(pid, `pid ${pid} cannot be inspected`);
  }
  if (exe !== real(expected.node)) refuse(`pid ${pid} runs ${exe}, not ${expected.node}`);
  if (argv.length !== 3 || real(argv[1] ?? '') !== real(expected.script) || argv[2] !== 'daemon') {
    refuse(`pid ${pid} was not started as this installation's \`vault-cli daemon\``);
  }
  const faked = (kv: string) =>
    expected.acceptFaketime === true &&
    (/^FAKETIME/.test(kv) || /^LD_PRELOAD=[^:]*\/libfaketime[^/:]*$/.test(kv));
  const shimmed = (kv: string) =>
    ACCEPT_FAULT_SHIM &&
    (/^FAULT_SHIM_CTL=/.test(kv) || /^LD_PRELOAD=[^:]*\/fault-shim\.so$/.test(kv));
  const steering = env
    .filter((kv) => !faked(kv) && !shimmed(kv))
    .map((kv) => kv.split('=')[0] ?? '')
    .filter((k) => STEERING.test(k));
  if (steering.length > 0) refuse(`pid ${pid} runs with ${steering.join(', ')} set`);
  if (tracer !== '0') refuse(`pid ${pid} is being traced (TracerPid ${tracer})`);
  // An inspector listens on a port (and talks over connections accepted there).
  // A team host also listens for remote agents on the port its own
  // VAULT_LISTEN_TLS names, and connects out to its database (docs/team.md):
  // those are its own; any other listening port, any connection accepted on
  // one, and any UDP socket are not.
  const remotePort = Number(
    /:(\d+)$/.exec(env.find((kv) => kv.startsWith('VAULT_LISTEN_TLS=')) ?? '')?.[1] ?? -1,
  );
  const sockets = networkSockets(pid);
  const listening = new Set(
    sockets.filter((s) => s.state === '0A' && s.table.startsWith('tcp')).map((s) => s.localPort),
  );
  const open = sockets.filter(
    (s) => s.table.startsWith('udp') || (listening.has(s.localPort) && s.localPort !== remotePort),
  );
  if (open.length > 0) refuse(`pid ${pid} has a network socket open (an inspector?)`);
  // The libraries a preload or an injected debugger leaves in the map.
  const maps = readFileSync(`${proc}/maps`, 'utf8');
  const preloaded =
    expected.acceptFaketime === true ? /libinject|frida/i : /faketime|libinject|frida/i;
  if (preloaded.test(maps)) refuse(`pid ${pid} has a preloaded library`);
}
