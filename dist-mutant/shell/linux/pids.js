/**
 * The sandbox's process limit (docs/sandbox.md, "Processes"): a fork bomb
 * inside must not take the machine's pids, the host's included. Two
 * mechanisms, because neither works everywhere:
 *
 * - RLIMIT_NPROC, set inside the sandbox's user namespace (`ulimit -u` in
 *   its start script, shell/linux/bubblewrap.ts). Since Linux 5.14 the count is kept
 *   per user namespace, so it counts the sandbox's own processes and threads
 *   only. The kernel does not apply it to root (uid 0 outside, which the
 *   sandbox's uid maps to), whatever the namespace and capabilities.
 * - A pids cgroup (v1 `pids` hierarchy, or v2 where the pids controller is
 *   enabled for the children of this process's cgroup) with `pids.max`, made
 *   here when it can be (root, or a delegated subtree): the sandbox joins it
 *   before bubblewrap starts (`sandboxLaunch`).
 */
import { mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
const PREFIX = 'vault-cli-run-';
function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (err) {
        return err.code === 'EPERM';
    }
}
/** Where a child cgroup with pids.max could go: this process's pids cgroup, v1 or v2. */
function bases() {
    let lines;
    try {
        lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    }
    catch {
        return [];
    }
    const out = [];
    for (const line of lines) {
        const [, controllers, path] = /^[0-9]+:([^:]*):(.*)$/.exec(line) ?? [];
        if (path === undefined)
            continue;
        if ((controllers ?? '').split(',').includes('pids'))
            out.push(join('/sys/fs/cgroup/pids', path));
        else if (controllers === '') {
            // This process's own cgroup where pids is delegated to its children; as
            // root, also the top of the hierarchy (a systemd session scope has
            // processes of its own, so the controller cannot be enabled below it).
            const candidates = [join('/sys/fs/cgroup', path)];
            if (process.getuid?.() === 0)
                candidates.push('/sys/fs/cgroup');
            for (const base of candidates)
                try {
                    const control = readFileSync(join(base, 'cgroup.subtree_control'), 'utf8');
                    if (control.split(/\s+/).includes('pids'))
                        out.push(base);
                }
                catch {
                    // Not a cgroup2 mount at /sys/fs/cgroup, or not ours to read.
                }
        }
    }
    return out;
}
/** Removes what an earlier `run` killed before its clean-up left behind (empty, or it stays). */
function sweep(base) {
    try {
        for (const name of readdirSync(base)) {
            const pid = Number(/^vault-cli-run-([0-9]+)-/.exec(name)?.[1]);
            if (Number.isInteger(pid) && pid > 0 && !alive(pid))
                rmdirSync(join(base, name));
        }
    }
    catch {
        // Still in use, or not ours: left alone.
    }
}
/**
 * A pids cgroup limited to `max` tasks, or null where none can be made here
 * (no pids controller, no permission): then RLIMIT_NPROC is what holds.
 */
export function pidsCgroup(max) {
    for (const base of bases()) {
        const dir = join(base, `${PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
        try {
            sweep(base);
            mkdirSync(dir);
        }
        catch {
            continue;
        }
        try {
            writeFileSync(join(dir, 'pids.max'), String(max));
        }
        catch {
            rmdirSync(dir);
            continue;
        }
        return {
            procs: join(dir, 'cgroup.procs'),
            remove: async () => {
                for (let i = 0; i < 250; i++) {
                    try {
                        rmdirSync(dir);
                        return;
                    }
                    catch (err) {
                        if (err.code !== 'EBUSY')
                            return;
                        await new Promise((r) => setTimeout(r, 20));
                    }
                }
            },
        };
    }
    return null;
}
