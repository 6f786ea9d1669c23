/** `vault-cli daemon [stop|status]`: the vault host in the foreground, or control of a running one. */
import { fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { formatTime } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { SPAWNED_BY_ENV } from '../../core/protocol.js';
import { flag, type Command } from '../context.js';
import { ownerPassphrase } from '../owner.js';
import { processRunning } from '../../kernel/process.js';

/** Exit status of `daemon status` when no host runs (as `systemctl status` and LSB use). */
const NOT_RUNNING = 3;
const DEFAULT_IDLE_MS = 15 * 60_000;
/**
 * Exit status of a host whose store got stuck (RunningHost.stuck): 75
 * (EX_TEMPFAIL, "try again"): the next client starts a fresh host.
 */
export const STUCK_EXIT = 75;

export const run: Command = async (ctx) => {
  const sub = ctx.inv.command?.path[1];
  if (sub === 'stop' || sub === 'status') {
    let status;
    try {
      status = await ctx.call('status', {}, { autoStart: false });
    } catch (err) {
      if (!(err instanceof VaultError && err.code === 'VLT-3005')) throw err;
      if (sub === 'stop') return 0;
      ctx.stdout.write(
        flag(ctx, 'json') ? JSON.stringify({ running: false }) + '\n' : 'not running\n',
      );
      return NOT_RUNNING;
    }
    if (sub === 'stop') {
      // Asked only once a host answers: with none running there is nothing to prove.
      const passphrase = status.vault ? await ownerPassphrase(ctx) : '';
      await ctx.call('shutdown', { passphrase }, { autoStart: false });
      // The host answers before it closes the store: "stopped" once it has
      // exited, so what follows (a copy of the store, removing the directory)
      // never races its close, which writes the clean-close record.
      if (await exited(status.pid, STOP_WAIT_MS))
        ctx.stderr.write(`vault-cli: stopped the vault host (pid ${status.pid})\n`);
      else
        ctx.stderr.write(
          `vault-cli: the vault host (pid ${status.pid}) was told to stop and is still closing its store\n`,
        );
      return 0;
    }
    ctx.stdout.write(
      flag(ctx, 'json')
        ? JSON.stringify({ running: true, ...status }) + '\n'
        : `running: pid ${status.pid}, vault ${status.vaultDir}${status.vault ? '' : ' (no vault yet)'}, since ${formatTime(status.startedAt)}\n`,
    );
    return 0;
  }
  return runHost(ctx);
};

/**
 * What a log line must start with so it starts a line: lmdb-js's native code
 * writes `Write error: ...` to the same stderr without a newline, and the
 * next line would run on from it. Only when stderr is a file (host.log),
 * whose last byte is read through a descriptor of its own; else nothing.
 */
function lineStart(): () => string {
  let fd: number | null = null;
  try {
    if (fstatSync(2).isFile()) fd = openSync('/proc/self/fd/2', 'r');
  } catch {
    fd = null;
  }
  const last = Buffer.alloc(1);
  return () => {
    if (fd === null) return '';
    try {
      const size = fstatSync(fd).size;
      if (size === 0 || readSync(fd, last, 0, 1, size - 1) !== 1) return '';
      return last[0] === 0x0a ? '' : '\n';
    } catch {
      return '';
    }
  };
}

/** How long `daemon stop` waits for the host to exit (its close hashes the store: 0.3-0.8 s at 100,000 entries). */
const STOP_WAIT_MS = 30_000;

/**
 * Whether process `pid` is gone (or a zombie: exited, not yet reaped by a
 * parent that is not ours) within `ms`.
 */
async function exited(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    let state: string | undefined;
    try {
      state = /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'latin1'))?.[1];
    } catch {
      // No such process (or no /proc: signal 0 tells).
      if (!processRunning(pid)) return true;
    }
    if (state === 'Z' || state === 'X') return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function runHost(ctx: Parameters<Command>[0]): Promise<number> {
  const system = ctx.paths.systemHost;
  if (system !== null) {
    // The hardened host runs as its own user, started by systemd or as `host install` printed.
    throw new VaultError(
      'VLT-3011',
      `This machine's vault host runs as ${system.user} (vault-cli host status); set VAULT_DIR to run a host of your own.`,
    );
  }
  // A same-user process could otherwise open the inspector with SIGUSR1 and read keys.
  process.on('SIGUSR1', () => {});
  process.umask(0o077);
  const { startHost, HostAlreadyRunning, isFailedCommitEcho } =
    await import('../../host/serve/server.js');
  const { sessionTerms } = await import('../../host/owner/unlock.js');
  const ownerSessions = sessionTerms(
    ctx.env.VAULT_OWNER_SESSION_MINUTES,
    ctx.env.VAULT_OWNER_IDLE_MINUTES,
  );
  const idle = Number(ctx.env.VAULT_HOST_IDLE_MS ?? DEFAULT_IDLE_MS);
  const log = hostLog(ctx);
  // A commit that failed (a disk turned read-only or full) is refused to its
  // request; lmdb-js reports it a second time where nothing can catch it, and
  // that must not end a host that can go on refusing until the disk recovers.
  const survive = (err: unknown) => {
    if (!isFailedCommitEcho(err)) throw err;
    log('a commit failed (already refused to its request)');
  };
  process.on('uncaughtException', survive);
  process.on('unhandledRejection', survive);
  const spawner = Number(ctx.env[SPAWNED_BY_ENV] ?? 0);
  if (spawner > 0 && !processRunning(spawner)) {
    log(`started for pid ${spawner}, which no longer waits: not serving`);
    return 0;
  }
  let host;
  try {
    host = await startHost({
      dir: ctx.paths.vaultDir,
      socketDir: ctx.paths.socketDir,
      idleMs: Number.isFinite(idle) ? idle : DEFAULT_IDLE_MS,
      ownerSessions,
      storeUrl: ctx.paths.storeUrl,
      remote: ctx.paths.remoteListen,
      log,
    });
  } catch (err) {
    if (err instanceof HostAlreadyRunning) {
      log('another host already serves this vault; exiting');
      return 0;
    }
    throw err;
  }
  // Only a daemon's host: the watch ends the whole process (stall-watch.ts).
  const { watchStalls } = await import('../../host/serve/stall-watch.js');
  watchStalls(STUCK_EXIT);
  log(
    ownerSessions.ttlMs === 0
      ? 'owner sessions: off'
      : `owner sessions: ${ownerSessions.ttlMs / 60_000} min, ${ownerSessions.idleMs / 60_000} min idle`,
  );
  return untilStopped(host, log);
}

/** The host's log line writer, onto its stderr (host.log). */
function hostLog(ctx: Parameters<Command>[0]): (line: string) => void {
  // host.log may sit on a file system that turned read-only or full: a log
  // line that cannot be written is lost, and must not end the host with it.
  ctx.stderr.on('error', () => {});
  const start = lineStart();
  return (line: string) => {
    try {
      ctx.stderr.write(
        `${start()}${new Date().toISOString()} vault-host[${process.pid}]: ${line}\n`,
      );
    } catch {
      // as above
    }
  };
}

/** Serves until told to stop (or the store is stuck): the daemon's exit status. */
async function untilStopped(
  host: { stop(): unknown; stopped: Promise<unknown>; stuck(): string | null },
  log: (line: string) => void,
): Promise<number> {
  const stop = () => host.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  await host.stopped;
  const stuck = host.stuck();
  if (stuck !== null) {
    // Not process.exit: its 'exit' event runs lmdb-js's hook, which closes
    // every environment and so waits for the write lock the stuck store's
    // thread holds for ever (measured: the process hung there, in
    // EnvWrap::cleanupStrayTxns). reallyExit is what process.exit calls once
    // the 'exit' listeners have run: the same exit, without them.
    log(
      `the store cannot be reopened in this process (${stuck}; lmdb-js's close did not end): exiting (status ${STUCK_EXIT}) for the next client to start a fresh host`,
    );
    (process as unknown as { reallyExit(code: number): never }).reallyExit(STUCK_EXIT);
  }
  log('stopped');
  // The store is closed and the lock released: nothing is left to do. A handle a
  // dependency keeps open (seen after runs of many test hosts: 'stopped' logged,
  // the process still alive 17 minutes later) must not keep a dead host around.
  setTimeout(() => process.exit(0), 1000).unref();
  return 0;
}
