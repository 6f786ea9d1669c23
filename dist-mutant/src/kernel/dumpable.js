/**
 * PR_SET_DUMPABLE 0: where Yama is absent (or `ptrace_scope` is 0), any
 * process of the same user may ptrace this one, open its /proc/<pid>/mem or
 * read its /proc/<pid>/environ; an agent outside `run` (or under `run
 * --no-sandbox`) would read the passphrase `run` keeps for its dashboard, or
 * the values a sweep fetched. A process that is not dumpable is, to the
 * kernel's ptrace access check, as if it belonged to root: only a process
 * with CAP_SYS_PTRACE reaches it, whatever `ptrace_scope` says. No core file
 * is written either.
 *
 * The flag is cleared for this process only: a program it starts by execve
 * is dumpable again (the kernel resets it at exec unless the program is
 * set-uid), so the agent `run` starts, and its tools, are unaffected.
 *
 * Linux only; elsewhere a no-op.
 */
import koffi from 'koffi';
const PR_SET_DUMPABLE = 4;
const PR_GET_DUMPABLE = 3;
let prctl = null;
function load() {
    if (prctl !== null)
        return prctl;
    const lib = koffi.load('libc.so.6');
    prctl = lib.func('int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)');
    return prctl;
}
/**
 * Marks this process not dumpable.
 * @throws Error when the kernel refuses (the caller must not go on holding secrets then).
 */
export function markNotDumpable() {
    if (process.platform !== 'linux')
        return;
    const call = load();
    if (call(PR_SET_DUMPABLE, 0, 0, 0, 0) !== 0 || call(PR_GET_DUMPABLE, 0, 0, 0, 0) !== 0)
        throw new Error(`prctl(PR_SET_DUMPABLE, 0) failed (errno ${koffi.errno()})`);
}
