/**
 * `run`'s session directory in $TMPDIR (`vault-cli-run-XXXXXX`: the CA, the
 * proxy's and the host's sockets, the SSH agent's): made at the start,
 * removed when `run` ends. A `run` killed by SIGKILL cannot remove its own,
 * so each `run` first removes the owner's directories whose `run` is gone.
 *
 * The live `run` holds an exclusive flock on `run.lock` in its directory for
 * as long as it lives (the kernel drops it when the process dies, however it
 * dies): a lock another process can take marks a directory nobody owns any
 * more. A directory made before this lock (an older vault-cli) has no
 * `run.lock`; it is taken for gone when its `proxy.sock` is a socket nobody
 * listens on (ECONNREFUSED), the state a killed `run` leaves it in, or, with
 * no `proxy.sock`, once it is a day old (a session lives 12 h at most).
 * Only a real directory of this uid, 0700, named with the prefix and holding
 * only what `run` puts there is considered: never a symlink, never another
 * user's, never a directory someone else put there under that name.
 */
import {
  closeSync,
  constants,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const PREFIX = 'vault-cli-run-';
/** mkdtemp's six characters after the prefix. */
const NAME = /^vault-cli-run-[A-Za-z0-9]{6}$/;
const LOCK = 'run.lock';
/** How old a directory with no lock and no proxy socket must be to be taken for gone. */
const UNLOCKED_KEPT_MS = 24 * 3_600_000;
/** What `run` writes into its directory (proxy.ts, ssh.ts, shell/linux/bubblewrap.ts, this file). */
const EXPECTED = new Set([
  'ca.pem',
  'ca-bundle.pem',
  'certs',
  'host.sock',
  'proxy.sock',
  'ssh-agent.sock',
  LOCK,
  // makeRunDir's lock before it is in place: with no run.lock, the age decides.
  `.${LOCK}.new`,
]);

/** A session directory of this `run`: `release()` lets go of its lock once it is removed. */
export interface RunDir {
  readonly path: string;
  release(): void;
}

/** Makes this `run`'s directory in `tmp` and locks it for as long as this process lives. */
export async function makeRunDir(tmp: string): Promise<RunDir> {
  const { tryLock } = await import('../../kernel/unix.js');
  const path = mkdtempSync(join(tmp, PREFIX));
  // Locked under another name, then renamed: a sweep never sees a `run.lock`
  // not yet held (the lock is the open file's, and follows the rename); one
  // with no run.lock and no proxy socket is kept for a day.
  const taking = join(path, `.${LOCK}.new`);
  const fd = openSync(taking, 'wx', 0o600);
  let held = false;
  try {
    held = tryLock(fd);
  } catch {
    // No flock here: the directory goes with this `run`, or a sweep's other rules.
  }
  if (held) renameSync(taking, join(path, LOCK));
  else {
    closeSync(fd);
    rmSync(taking, { force: true });
  }
  return { path, release: () => (held ? closeSync(fd) : undefined) };
}

/**
 * Removes the directories in `tmp` whose `run` is gone (see the top), and
 * returns how many. Best effort: whatever cannot be checked or removed is
 * left as it is, and `run` goes on.
 */
export async function removeStaleRunDirs(tmp: string): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(tmp).filter((n) => NAME.test(n));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    try {
      if (await removeIfGone(join(tmp, name))) removed++;
    } catch {
      // Raced by its own `run` ending, or unreadable: not ours to insist on.
    }
  }
  return removed;
}

async function removeIfGone(path: string): Promise<boolean> {
  const st = lstatSync(path);
  if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o777) !== 0o700)
    return false;
  const inside = readdirSync(path);
  if (!inside.every((n) => EXPECTED.has(n))) return false;
  if (!inside.includes(LOCK)) {
    const proxy = await proxyAt(join(path, 'proxy.sock'));
    if (proxy === 'answers') return false;
    // No proxy socket: its `run` was killed before the proxy started or after
    // it closed, or it is asking for the passphrase now; a day tells them apart.
    if (proxy === 'absent' && Date.now() - st.mtimeMs < UNLOCKED_KEPT_MS) return false;
    rmSync(path, { recursive: true, force: true });
    return true;
  }
  const { tryLock } = await import('../../kernel/unix.js');
  // O_NOFOLLOW: a symlink put in its place is not followed to some other file.
  const fd = openSync(join(path, LOCK), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    // Held: its `run` lives. Taken: removed while this process holds it, so
    // two `run`s starting together do not both remove it (the second finds
    // the lock held, or the directory gone).
    if (!tryLock(fd)) return false;
    rmSync(path, { recursive: true, force: true });
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Whether a process listens on `sock`: 'refused' when its socket file stays but nobody does. */
function proxyAt(sock: string): Promise<'answers' | 'refused' | 'absent'> {
  try {
    if (!lstatSync(sock).isSocket()) return Promise.resolve('answers');
  } catch {
    return Promise.resolve('absent');
  }
  return new Promise((resolve) => {
    const s = connect(sock);
    s.once('connect', () => {
      s.destroy();
      resolve('answers');
    });
    // Anything but ECONNREFUSED (EAGAIN: a full backlog) may be a live proxy.
    s.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'answers'),
    );
  });
}
