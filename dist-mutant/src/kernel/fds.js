/**
 * Descriptors this process inherited without asking for them. A terminal, an
 * IDE, a CI runner or a wrapper can leave an open file (a passphrase file, a
 * socket) at any number above 2; Node keeps it, and every program it starts
 * would inherit it, a sandboxed agent included. Marking every descriptor from
 * 3 up close-on-exec keeps this process's own use of them and gives none to a
 * child: Node and libuv open theirs close-on-exec already, and a child's
 * stdio is dup'ed onto 0-2, which clears the flag there.
 *
 * Linux only (close_range, 5.11 and later); elsewhere, and on older kernels,
 * each descriptor listed in /proc/self/fd is marked with ioctl(FIOCLEX).
 */
import { readdirSync } from 'node:fs';
import koffi from 'koffi';
const CLOSE_RANGE_CLOEXEC = 1 << 2;
const FIOCLEX = 0x5451;
let calls = null;
function load() {
    if (calls !== null)
        return calls;
    const lib = koffi.load('libc.so.6');
    const ioctl = lib.func('int ioctl(int fd, unsigned long request, ...)');
    // glibc 2.34 and later export close_range; the system call itself is older.
    let closeRange;
    try {
        closeRange = lib.func('int close_range(unsigned int first, unsigned int last, int flags)');
    }
    catch {
        closeRange = () => -1;
    }
    calls = { closeRange, ioctl };
    return calls;
}
/**
 * Marks every descriptor from 3 up close-on-exec.
 * @throws Error when a descriptor could not be marked (the caller must not start a child then).
 */
export function closeOnExecAbove2() {
    if (process.platform !== 'linux')
        return;
    const c = load();
    if (c.closeRange(3, 0xffffffff, CLOSE_RANGE_CLOEXEC) === 0)
        return;
    for (const name of readdirSync('/proc/self/fd')) {
        const fd = Number(name);
        // The directory's own descriptor is gone by now: EBADF for it is no failure.
        if (fd > 2 && c.ioctl(fd, FIOCLEX) !== 0 && koffi.errno() !== 9)
            throw new Error(`could not mark descriptor ${fd} close-on-exec (errno ${koffi.errno()})`);
    }
}
