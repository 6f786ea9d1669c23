/**
 * Starting a host when none answers: `vault-cli daemon` in the background,
 * shared by every call of this process that finds no host, and the wait for
 * it to answer. Loaded only then, so a call to a running host (`get`) never
 * pays for it.
 */
import { VaultError } from '../core/errors.js';
import { SPAWNED_BY_ENV, type Op, type Ops, type Reply } from '../core/protocol.js';
import type { ClientOptions } from './options.js';
import { post, Unreachable } from './request.js';

// Built-ins by getBuiltinModule, not import: this file is in get's bundle
// (scripts/bundle.mjs), which would otherwise import node:fs's whole namespace
// on every start, though only a call that finds no host loads it.
const { closeSync, existsSync, mkdirSync, openSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/** How long a client keeps trying after the daemon it spawned exited (another host may serve). */
const START_WAIT_MS = 10_000;
/** The longest a client waits for a daemon it spawned that still runs. */
const START_WAIT_MAX_MS = 120_000;
/** Daemons one call starts at most, when each found another host holding the lock and none answers. */
const START_TRIES = 3;

/** A daemon this client spawned: whether it still runs. */
interface Spawned {
  readonly exited: () => boolean;
}

/**
 * mkdir -p, but with the system's own reason: Node's recursive mkdir reports
 * a read-only parent as ENOENT, so that case is asked again without it.
 */
function makeDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !existsSync(dirname(dir))) throw err;
    mkdirSync(dir, { mode: 0o700 });
  }
}

async function startDaemon(opts: ClientOptions): Promise<Spawned> {
  const { spawn } = await import('node:child_process');
  let log: number;
  try {
    makeDir(opts.vaultDir);
    log = openSync(join(opts.vaultDir, 'host.log'), 'a', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOSPC') {
      throw new VaultError(
        'VLT-3005',
        `The vault host could not be started: the vault directory ${opts.vaultDir} is not writable (${code}); ` +
          'make it (or its parent) writable, or set VAULT_DIR to a directory you can write.',
        { cause: err },
      );
    }
    throw err;
  }
  try {
    // `ulimit -c 0`: the host holds keys, so it never dumps core.
    const child = spawn(
      '/bin/sh',
      ['-c', 'ulimit -c 0; exec "$0" "$@"', opts.daemon.node, opts.daemon.script, 'daemon'],
      {
        detached: true,
        stdio: ['ignore', log, log],
        // The host serves only while the command that started it still waits for it.
        env: { ...opts.daemon.env, [SPAWNED_BY_ENV]: String(process.pid) },
      },
    );
    let exited = false;
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    return { exited: () => exited };
  } finally {
    closeSync(log);
  }
}

/**
 * The daemon this process last started for each host socket. Calls that find
 * no host at once (a burst of proxy fills, a render's parallel steps) share
 * it and each wait for its socket, instead of each starting a daemon of its
 * own, all but one of which would find the host's lock taken and exit (36
 * processes were seen for 20 fills). Across processes the host's own lock
 * keeps one host (HostAlreadyRunning in src/host/serve/server.ts).
 */
const spawnedFor = new Map<string, Promise<Spawned>>();

/**
 * The daemon this process started for `socketPath` while it still runs,
 * else a new one, which calls after this one share in turn.
 * @throws VaultError VLT-3005 when the vault directory is not writable.
 */
async function sharedStart(opts: ClientOptions, socketPath: string): Promise<Spawned> {
  const current = spawnedFor.get(socketPath);
  if (current !== undefined) {
    const daemon = await current.catch(() => null);
    if (daemon !== null && !daemon.exited()) return daemon;
    // Another call replaced it while this one waited: share that one.
    if (spawnedFor.get(socketPath) !== current) return sharedStart(opts, socketPath);
  }
  const next = startDaemon(opts);
  spawnedFor.set(socketPath, next);
  next.catch(() => {
    if (spawnedFor.get(socketPath) === next) spawnedFor.delete(socketPath);
  });
  return next;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a daemon (or joins the one this process is starting: sharedStart)
 * and sends the operation once a host answers. It waits as long as that
 * daemon lives (a cold start under load can take more than any fixed wait),
 * up to START_WAIT_MAX_MS. A daemon that exits at once found another host
 * holding the lock: one that may be stopping (its idle stop), so while no
 * host answers a new daemon is started, a few times, and the client gives up
 * START_WAIT_MS after the last one exited.
 */
export async function startAndCall<O extends Op>(
  opts: ClientOptions,
  socketPath: string,
  op: O,
  body: Ops[O]['req'],
): Promise<Reply<O>> {
  let daemon = await sharedStart(opts, socketPath);
  let starts = 1;
  const started = Date.now();
  let exitedAt: number | null = null;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    await sleep(wait);
    try {
      return await post(opts, socketPath, op, body);
    } catch (again) {
      if (!(again instanceof Unreachable)) throw again;
    }
    const now = Date.now();
    if (exitedAt === null && daemon.exited()) exitedAt = now;
    if (exitedAt !== null && starts < START_TRIES) {
      daemon = await sharedStart(opts, socketPath);
      starts++;
      exitedAt = null;
      wait = 10;
    } else if (
      now - started > START_WAIT_MAX_MS ||
      (exitedAt !== null && now - exitedAt > START_WAIT_MS)
    ) {
      throw new VaultError('VLT-3005');
    }
  }
}
