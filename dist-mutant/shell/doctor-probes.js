/**
 * What `vault-cli doctor` asks of this machine about `run`'s sandbox:
 * bubblewrap, socat, unprivileged user namespaces (and what refuses them),
 * the pids cgroup of --max-procs, and node-pty for a run under a terminal.
 * Each probe only looks (or starts bubblewrap's own no-op); none changes the
 * machine. A finding says what was seen and, when it is not well, the fix.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { which } from './which.js';
/** Where a program is on `path` (none: nowhere), or null. */
function onPath(name, path) {
    return which(name, path ?? '');
}
/** A sysctl's value under /proc/sys, or null where this kernel has none. */
function sysctl(name) {
    try {
        return readFileSync(join('/proc/sys', ...name.split('.')), 'utf8').trim();
    }
    catch {
        return null;
    }
}
export function probeProgram(name, pkg, path) {
    const at = onPath(name, path);
    return at === null
        ? {
            name,
            verdict: 'fail',
            said: 'not found on PATH',
            fix: `apt install ${pkg} (Debian, Ubuntu), dnf install ${pkg} (Fedora)`,
        }
        : { name, verdict: 'ok', said: at };
}
/**
 * Whether bubblewrap can make the namespaces `run` asks for: its own no-op
 * with the same unshare flags. Without bubblewrap, util-linux's unshare
 * stands in, so the line still says whether the kernel allows them.
 */
export function probeUserNamespaces(bwrap, path) {
    const name = 'user namespaces';
    const unshare = onPath('unshare', path);
    const r = bwrap !== null
        ? spawnSync(bwrap, ['--unshare-user', '--disable-userns', '--unshare-pid', '--unshare-net'].concat([
            '--ro-bind',
            '/',
            '/',
            '--',
            '/bin/true',
        ]), { encoding: 'utf8', timeout: 10_000 })
        : unshare !== null
            ? spawnSync(unshare, ['--user', '/bin/true'], { encoding: 'utf8', timeout: 10_000 })
            : null;
    if (r === null)
        return { name, verdict: 'warn', said: 'not tried: neither bwrap nor unshare is on PATH' };
    if (r.status === 0)
        return { name, verdict: 'ok', said: bwrap !== null ? 'bwrap made its namespaces' : 'allowed' };
    const why = (r.stderr ?? '').trim().split('\n')[0] ?? `exit ${String(r.status)}`;
    return { name, verdict: 'fail', said: `refused (${why})`, fix: userNamespaceFix() };
}
/** The fix for refused user namespaces: which knob of this kernel refuses them. */
function userNamespaceFix() {
    if (sysctl('kernel.apparmor_restrict_unprivileged_userns') === '1')
        return ('AppArmor refuses them (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later): ' +
            'give bwrap a profile that allows them, as Ubuntu documents (/etc/apparmor.d/bwrap: ' +
            '"abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }", ' +
            'then sudo apparmor_parser -r /etc/apparmor.d/bwrap), or lift it for every program: ' +
            'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0');
    if (sysctl('kernel.unprivileged_userns_clone') === '0')
        return 'sudo sysctl -w kernel.unprivileged_userns_clone=1 (Debian before 11)';
    if (sysctl('user.max_user_namespaces') === '0')
        return 'sudo sysctl -w user.max_user_namespaces=15000';
    return ('this process may be in a container or namespace that allows no more ' +
        '(user.max_user_namespaces, a seccomp filter); run vault-cli outside it, or allow them there');
}
/** Whether --max-procs finds a pids cgroup (shell/linux/pids.ts makes one under this process's). */
export function probePidsCgroup() {
    const name = 'pids cgroup';
    let lines;
    try {
        lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    }
    catch {
        return {
            name,
            verdict: 'warn',
            said: 'no /proc/self/cgroup',
            fix: 'run --max-procs needs cgroups',
        };
    }
    for (const line of lines) {
        const [, controllers, path] = line.split(':');
        if (controllers?.split(',').includes('pids') && existsSync('/sys/fs/cgroup/pids'))
            return { name, verdict: 'ok', said: `cgroup v1 /sys/fs/cgroup/pids${path ?? ''}` };
        if (controllers === '' && path !== undefined) {
            const dir = join('/sys/fs/cgroup', path);
            let enabled = '';
            try {
                enabled = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8');
            }
            catch {
                // not readable: treated as not delegated
            }
            if (enabled.split(/\s+/).includes('pids'))
                return { name, verdict: 'ok', said: `cgroup v2, delegated at ${dir}` };
            return {
                name,
                verdict: 'warn',
                said: `cgroup v2 ${dir} does not delegate pids to its children`,
                fix: 'run --max-procs needs it: start vault-cli in a delegated scope (systemd-run --user --scope -p Delegate=yes bash)',
            };
        }
    }
    return { name, verdict: 'warn', said: 'no pids controller', fix: 'run --max-procs needs one' };
}
/** node-pty, which `run` uses when it has a terminal; an optional dependency compiled at install. */
export async function probePty() {
    try {
        await import('node-pty');
        return { name: 'node-pty', verdict: 'ok', said: 'loads' };
    }
    catch (err) {
        return {
            name: 'node-pty',
            verdict: 'warn',
            said: `does not load (${String(err.message).split('\n')[0] ?? ''})`,
            fix: 'run from a terminal needs it (run with pipes does not): install a C++ toolchain (make, g++) and python3, then install vault-cli again (npm drops an optional dependency whose build failed)',
        };
    }
}
