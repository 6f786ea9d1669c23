/**
 * The only importer of koffi (an FFI with prebuilt binaries, so installing
 * needs no compiler): the system calls Node does not expose and the vault
 * relies on. `flock` keeps one host per vault; `SO_PEERCRED` names the process
 * at the other end of a Unix socket as the kernel knows it, which nothing that
 * process writes on the socket can change; `fallocate` keeps disk blocks for
 * the store's growth that no other process can take (src/store/lmdb/reserve.ts);
 * `madvise` takes the store's mapped pages out of the host's resident set
 * (src/store/lmdb/resident.ts).
 * `mprotect` and `memcpy` mend a constant of a loaded library that is unsafe
 * as built (src/store/lmdb/flush-error.ts).
 *
 * flock on Linux and macOS, SO_PEERCRED and fallocate on Linux only. The host and the client
 * load this module lazily, so `get` (which never sends a passphrase) does not
 * pay for it.
 */
import { readFileSync } from 'node:fs';
import koffi from 'koffi';

/** The peer of a Unix socket, as the kernel recorded it at connect(). */
export interface PeerCred {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
}

const SOL_SOCKET = 1;
/** 17 on x86, x86-64, arm, arm64 and riscv (asm-generic); 21 on powerpc. */
const SO_PEERCRED = process.arch === 'ppc64' ? 21 : 17;
const LOCK_EX = 2;
const LOCK_NB = 4;
/** EWOULDBLOCK: 11 on Linux, 35 on macOS. */
const EWOULDBLOCK = process.platform === 'darwin' ? 35 : 11;

interface Libc {
  flock(fd: number, op: number): number;
  /** Linux only: null elsewhere. */
  fallocate: ((fd: number, mode: number, offset: number, len: number) => number) | null;
  getsockopt(fd: number, level: number, name: number, out: object, len: number[]): number;
  madvise(addr: number, length: number, advice: number): number;
  mprotect(addr: bigint, len: bigint, prot: number): number;
  memcpy(dst: bigint, src: Buffer, n: number): unknown;
}

let libc: Libc | null = null;

function load(): Libc {
  if (libc !== null) return libc;
  const lib = koffi.load(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6');
  koffi.struct('vault_ucred', { pid: 'int32', uid: 'uint32', gid: 'uint32' });
  libc = {
    flock: lib.func('int flock(int fd, int op)') as Libc['flock'],
    fallocate:
      process.platform === 'linux'
        ? (lib.func('int fallocate(int fd, int mode, int64_t offset, int64_t len)') as NonNullable<
            Libc['fallocate']
          >)
        : null,
    getsockopt: lib.func(
      'int getsockopt(int fd, int level, int name, _Out_ vault_ucred *val, _Inout_ uint32_t *len)',
    ) as Libc['getsockopt'],
    madvise: lib.func('int madvise(uintptr_t addr, size_t length, int advice)') as Libc['madvise'],
    mprotect: lib.func('int mprotect(uintptr_t addr, size_t len, int prot)') as Libc['mprotect'],
    memcpy: lib.func(
      'uintptr_t memcpy(uintptr_t dst, const void *src, size_t n)',
    ) as Libc['memcpy'],
  };
  return libc;
}

let exit: ((status: number) => void) | null = null;

/**
 * Ends this process at once with `status` (libc's _exit), from any thread: no
 * 'exit' listener, no clean-up hook, no thread joined, which a process whose
 * main thread is blocked for ever cannot run (src/host/serve/stall-worker.ts).
 */
export function exitNow(status: number): never {
  // Its own library handle: a worker thread has none of load()'s yet.
  exit ??= koffi
    .load(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6')
    .func('void _exit(int status)') as (status: number) => void;
  exit(status);
  throw new Error('_exit returned');
}

/**
 * Takes an exclusive, non-blocking flock on `fd`. The lock lasts as long as the
 * file stays open in this process (the kernel drops it when the process dies).
 * @returns false when another open file description holds it.
 * @throws Error for any other failure.
 */
export function tryLock(fd: number): boolean {
  if (load().flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
  const errno = koffi.errno();
  if (errno === EWOULDBLOCK) return false;
  throw new Error(`flock failed (errno ${errno})`);
}

/** The file descriptor under a connected `net.Socket` on a Unix socket. */
export function socketFd(socket: unknown): number {
  const fd = (socket as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('socket has no file descriptor');
  return fd;
}

/**
 * The pid, uid and gid of the process at the other end of a connected Unix
 * socket (`socket` is a `net.Socket`), read with SO_PEERCRED.
 * @throws Error when the socket is closed or the call fails.
 */
export function peerCred(socket: unknown): PeerCred {
  // macOS has LOCAL_PEERCRED with another layout and no pid: not wired here.
  if (process.platform !== 'linux') throw new Error('SO_PEERCRED is Linux only');
  const out: Partial<PeerCred> = {};
  const len = [12];
  if (load().getsockopt(socketFd(socket), SOL_SOCKET, SO_PEERCRED, out, len) !== 0) {
    throw new Error(`SO_PEERCRED failed (errno ${koffi.errno()})`);
  }
  const { pid, uid, gid } = out;
  if (typeof pid !== 'number' || typeof uid !== 'number' || typeof gid !== 'number') {
    throw new Error('SO_PEERCRED returned no credentials');
  }
  return { pid, uid, gid };
}

/** FALLOC_FL_KEEP_SIZE: the blocks are the file's, its size stays. */
const FALLOC_FL_KEEP_SIZE = 1;

/**
 * Allocates `length` bytes of disk blocks to `fd` from `offset`, past its end,
 * without changing its size: writes that later grow the file there need no
 * free space. False when the file system has no room or no such call.
 */
export function keepBlocks(fd: number, offset: number, length: number): boolean {
  const fallocate = load().fallocate;
  return fallocate !== null && fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length) === 0;
}

/** MADV_DONTNEED (Linux): the range leaves this process's page tables. */
const MADV_DONTNEED = 4;

/**
 * Takes the pages of every shared mapping of the file at `path` (as
 * /proc/self/maps names it: a real path) out of this process's resident set.
 * Their contents are not lost: a shared file mapping reads each page back
 * from the page cache (or the file) at its next touch, and a page written
 * through one was the page cache's already. Private mappings (whose pages
 * may be this process's own copies) are left alone. Linux only.
 *
 * The caller must know that no other thread unmaps that file meanwhile: a
 * range unmapped and mapped again as private memory between the read of
 * /proc/self/maps and the advice would lose its contents.
 * @returns the bytes of mappings advised (0 elsewhere, or when none is found)
 */
export function unmapResident(path: string): number {
  if (process.platform !== 'linux') return 0;
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return 0;
  }
  let advised = 0;
  for (const line of maps.split('\n')) {
    if (!line.endsWith(path)) continue;
    // start-end perms offset dev inode path
    const m = /^([0-9a-f]+)-([0-9a-f]+) [r-][w-][x-]s \S+ \S+ \d+\s+(.*)$/.exec(line);
    if (m === null || m[3] !== path) continue;
    const start = parseInt(m[1] as string, 16);
    const length = parseInt(m[2] as string, 16) - start;
    if (load().madvise(start, length, MADV_DONTNEED) === 0) advised += length;
  }
  return advised;
}

const PROT_READ = 1;
const PROT_WRITE = 2;
const PAGE = 4096n;

/**
 * Overwrites `bytes` at file offset `offset` of this process's read-only,
 * private mapping of `file` (a constant of a library it has loaded; the file
 * on disk is not touched): its pages are made writable for the copy only,
 * then read-only again, never executable. Linux only (/proc/self/maps).
 * @returns false when no read-only mapping of `file` holds that range, or a call fails.
 */
export function patchMappedConstant(file: string, offset: number, bytes: Buffer): boolean {
  if (process.platform !== 'linux') return false;
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return false;
  }
  const from = BigInt(offset);
  const to = from + BigInt(bytes.length);
  for (const line of maps.split('\n')) {
    // start-end perms offset dev inode path
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s+(.*)$/.exec(line);
    if (m === null || m[5] !== file || !m[3]!.startsWith('r--p')) continue;
    const start = BigInt(`0x${m[1]}`);
    const end = BigInt(`0x${m[2]}`);
    const at = BigInt(`0x${m[4]}`);
    if (from < at || to > at + (end - start)) continue;
    const addr = start + (from - at);
    const first = addr - (addr % PAGE);
    const last = ((addr + BigInt(bytes.length) + PAGE - 1n) / PAGE) * PAGE;
    const libc = load();
    if (libc.mprotect(first, last - first, PROT_READ | PROT_WRITE) !== 0) return false;
    libc.memcpy(addr, bytes, bytes.length);
    return libc.mprotect(first, last - first, PROT_READ) === 0;
  }
  return false;
}
