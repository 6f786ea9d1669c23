/*
 * A test tool (test/support/faults.ts compiles and loads it): an LD_PRELOAD
 * shim that fails chosen file-system calls on one file with a chosen errno,
 * switched on and off while the process runs.
 *
 * FAULT_SHIM_CTL names a control file the test replaces (write + rename) to
 * switch faults; the shim looks at its inode, size and mtime at each call it
 * wraps and re-reads it when they change. Its one line:
 *
 *   CALLS ERRNO SIZE PATH [DELAY [THREADS]]
 *
 * CALLS  comma-separated: pwrite (pwrite, pwrite64, pwritev), write (write,
 *        writev), fdatasync, fsync, msync, ftruncate, fallocate, pread
 *        (pread, pread64, preadv: LMDB reads its meta pages so when it
 *        opens a file; its other reads are of the map, which no shim sees),
 *        read (read, readv)
 * ERRNO  EIO, ENOSPC or EROFS
 * SIZE   0 for any write, else only writes of exactly this many bytes
 *        (LMDB's meta page record: 128 bytes in this lmdb-js build)
 * PATH   the file (as /proc/self/fd/N reads) whose descriptors fail, or a
 *        shell pattern (fnmatch: `*` within one name) for files named only
 *        once they are made: the start-up scan's scratch copy (its
 *        directory `<vault>/.check-<pid>`), a backup's (in `.<name>.tmp-<random>`)
 * DELAY  optional: milliseconds each failing call waits before it fails, as
 *        a disk that takes its time to give up does: what the process queues
 *        meanwhile meets the failure (a batch queued behind a failed commit)
 * THREADS optional: `workers` fails only calls made off the main thread
 *        (lmdb-js's batched commits, on libuv's pool; not a transactionSync
 *        on the main thread, which would stop the loop for the delay and
 *        let nothing queue); else any thread
 *
 * An empty file switches every fault off. Each call failed appends a line
 * (call, size) to FAULT_SHIM_CTL.hits, so a test can tell that its fault was
 * met. msync has no descriptor: it fails for every mapping while on.
 *
 * A child the process starts keeps the shim even when it is given an
 * environment of its own (the host's start-up scan runs in a child whose
 * environment is PATH only): execve adds LD_PRELOAD and FAULT_SHIM_CTL, as
 * this process was started with them, to the child's environment (as does
 * execvp, which libuv calls once it has set `environ` to the child's).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { C_PWRITE = 1, C_WRITE = 2, C_FDATASYNC = 4, C_FSYNC = 8, C_MSYNC = 16, C_FTRUNCATE = 32, C_FALLOCATE = 64, C_PREAD = 128, C_READ = 256 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stat seen;
static int calls, err;
static long size, delay_ms;
static int workers_only;
static char path[4096];

static void reload(void) {
  const char *ctl = getenv("FAULT_SHIM_CTL");
  struct stat st;
  if (ctl == NULL || stat(ctl, &st) != 0) {
    calls = 0;
    return;
  }
  if (st.st_ino == seen.st_ino && st.st_size == seen.st_size &&
      st.st_mtim.tv_sec == seen.st_mtim.tv_sec && st.st_mtim.tv_nsec == seen.st_mtim.tv_nsec)
    return;
  seen = st;
  calls = 0;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, ctl, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4200] = {0};
  ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return;
  char names[256], e[32];
  char threads[16] = "any";
  delay_ms = 0;
  if (sscanf(buf, "%255s %31s %ld %4095s %ld %15s", names, e, &size, path, &delay_ms, threads) < 4)
    return;
  workers_only = strcmp(threads, "workers") == 0;
  err = strcmp(e, "ENOSPC") == 0 ? ENOSPC : strcmp(e, "EROFS") == 0 ? EROFS : EIO;
  int c = 0;
  for (char *s = strtok(names, ","); s != NULL; s = strtok(NULL, ",")) {
    c |= strcmp(s, "pwrite") == 0      ? C_PWRITE
         : strcmp(s, "write") == 0     ? C_WRITE
         : strcmp(s, "fdatasync") == 0 ? C_FDATASYNC
         : strcmp(s, "fsync") == 0     ? C_FSYNC
         : strcmp(s, "msync") == 0     ? C_MSYNC
         : strcmp(s, "ftruncate") == 0 ? C_FTRUNCATE
         : strcmp(s, "fallocate") == 0 ? C_FALLOCATE
         : strcmp(s, "pread") == 0     ? C_PREAD
         : strcmp(s, "read") == 0      ? C_READ
                                       : 0;
  }
  calls = c;
}

static void hit(const char *name, long n) {
  const char *ctl = getenv("FAULT_SHIM_CTL");
  char file[4200], line[128];
  snprintf(file, sizeof file, "%s.hits", ctl);
  int len = snprintf(line, sizeof line, "%s %ld\n", name, n);
  int fd = (int)syscall(SYS_openat, AT_FDCWD, file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  syscall(SYS_write, fd, line, len);
  syscall(SYS_close, fd);
}

/*
 * Set while this thread is inside fails(): a signal handler that calls a
 * wrapped function meanwhile (libuv's SIGCHLD handler reads and writes its
 * signal pipe) must not wait for the lock its own thread holds (a deadlock
 * that hung the host), so such a call is never failed.
 */
static int decide(int which, int fd, long n, const char *name);
static __thread int inside __attribute__((tls_model("initial-exec")));

/* Whether this call on `fd` (writing `n` bytes, or -1 for no size) fails; errno set when it does. */
static int fails(int which, int fd, long n, const char *name) {
  if (inside || getenv("FAULT_SHIM_CTL") == NULL) return 0;
  int saved = errno;
  inside = 1;
  int out = decide(which, fd, n, name);
  inside = 0;
  if (!out) errno = saved;
  return out;
}

static int decide(int which, int fd, long n, const char *name) {
  pthread_mutex_lock(&lock);
  reload();
  int on = (calls & which) != 0 && (size == 0 || n == size) &&
           !(workers_only && syscall(SYS_gettid) == getpid());
  int e = err;
  long wait = delay_ms;
  char want[4096];
  memcpy(want, path, sizeof want);
  pthread_mutex_unlock(&lock);
  if (!on) return 0;
  if (fd >= 0) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, target, sizeof target - 1);
    if (len < 0) return 0;
    target[len] = 0;
    if (fnmatch(want, target, FNM_PATHNAME | FNM_PERIOD) != 0) return 0;
  }
  hit(name, n);
  if (wait > 0) {
    struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  errno = e;
  return 1;
}

#define REAL(name) static __typeof__(name) *real; if (real == NULL) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite);
  return fails(C_PWRITE, fd, (long)n, "pwrite") ? -1 : real(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
  REAL(pwrite64);
  return fails(C_PWRITE, fd, (long)n, "pwrite64") ? -1 : real(fd, buf, n, off);
}
static long iovlen(const struct iovec *iov, int cnt) {
  long n = 0;
  for (int i = 0; i < cnt; i++) n += (long)iov[i].iov_len;
  return n;
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
  REAL(pwritev);
  return fails(C_PWRITE, fd, iovlen(iov, cnt), "pwritev") ? -1 : real(fd, iov, cnt, off);
}
ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write);
  return fails(C_WRITE, fd, (long)n, "write") ? -1 : real(fd, buf, n);
}
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  REAL(writev);
  return fails(C_WRITE, fd, iovlen(iov, cnt), "writev") ? -1 : real(fd, iov, cnt);
}
int fdatasync(int fd) {
  REAL(fdatasync);
  return fails(C_FDATASYNC, fd, -1, "fdatasync") ? -1 : real(fd);
}
int fsync(int fd) {
  REAL(fsync);
  return fails(C_FSYNC, fd, -1, "fsync") ? -1 : real(fd);
}
int msync(void *addr, size_t n, int flags) {
  REAL(msync);
  return fails(C_MSYNC, -1, (long)n, "msync") ? -1 : real(addr, n, flags);
}
int ftruncate(int fd, off_t n) {
  REAL(ftruncate);
  return fails(C_FTRUNCATE, fd, -1, "ftruncate") ? -1 : real(fd, n);
}
int ftruncate64(int fd, off64_t n) {
  REAL(ftruncate64);
  return fails(C_FTRUNCATE, fd, -1, "ftruncate64") ? -1 : real(fd, n);
}
int fallocate(int fd, int mode, off_t off, off_t n) {
  REAL(fallocate);
  return fails(C_FALLOCATE, fd, -1, "fallocate") ? -1 : real(fd, mode, off, n);
}
int fallocate64(int fd, int mode, off64_t off, off64_t n) {
  REAL(fallocate64);
  return fails(C_FALLOCATE, fd, -1, "fallocate64") ? -1 : real(fd, mode, off, n);
}
int posix_fallocate(int fd, off_t off, off_t n) {
  REAL(posix_fallocate);
  /* posix_fallocate returns the error rather than setting errno. */
  return fails(C_FALLOCATE, fd, -1, "posix_fallocate") ? errno : real(fd, off, n);
}
ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  REAL(pread);
  return fails(C_PREAD, fd, (long)n, "pread") ? -1 : real(fd, buf, n, off);
}
ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
  REAL(pread64);
  return fails(C_PREAD, fd, (long)n, "pread64") ? -1 : real(fd, buf, n, off);
}
ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off) {
  REAL(preadv);
  return fails(C_PREAD, fd, iovlen(iov, cnt), "preadv") ? -1 : real(fd, iov, cnt, off);
}
ssize_t read(int fd, void *buf, size_t n) {
  REAL(read);
  return fails(C_READ, fd, (long)n, "read") ? -1 : real(fd, buf, n);
}
ssize_t readv(int fd, const struct iovec *iov, int cnt) {
  REAL(readv);
  return fails(C_READ, fd, iovlen(iov, cnt), "readv") ? -1 : real(fd, iov, cnt);
}

/*
 * The shim's own two variables, as this process was started with them (a
 * child's exec may come after its environment was replaced), and execve
 * resolved before any fork: the child of a vfork may not call dlsym.
 */
static char keep_preload[4200], keep_ctl[4200];
static __typeof__(execve) *real_execve;
static __typeof__(execvp) *real_execvp;

__attribute__((constructor)) static void keep(void) {
  const char *pre = getenv("LD_PRELOAD");
  const char *ctl = getenv("FAULT_SHIM_CTL");
  if (pre != NULL && ctl != NULL && strlen(pre) < 4000 && strlen(ctl) < 4000) {
    snprintf(keep_preload, sizeof keep_preload, "LD_PRELOAD=%s", pre);
    snprintf(keep_ctl, sizeof keep_ctl, "FAULT_SHIM_CTL=%s", ctl);
  }
  real_execve = (__typeof__(execve) *)dlsym(RTLD_NEXT, "execve");
  real_execvp = (__typeof__(execvp) *)dlsym(RTLD_NEXT, "execvp");
}

/* `envp` with the shim's two variables as this process was started with them (in a static array: no malloc after fork). */
static char *const *with_shim(char *const envp[]) {
  static char *with[1024];
  if (keep_ctl[0] == 0 || envp == NULL) return envp;
  int n = 0;
  for (int i = 0; envp[i] != NULL && n < 1020; i++) {
    if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0 || strncmp(envp[i], "FAULT_SHIM_CTL=", 15) == 0)
      continue;
    with[n++] = envp[i];
  }
  with[n++] = keep_preload;
  with[n++] = keep_ctl;
  with[n] = NULL;
  return with;
}

int execve(const char *file, char *const argv[], char *const envp[]) {
  return real_execve(file, argv, with_shim(envp));
}

/* libuv sets `environ` to the child's environment, then calls execvp. */
int execvp(const char *file, char *const argv[]) {
  environ = (char **)with_shim(environ);
  return real_execvp(file, argv);
}
