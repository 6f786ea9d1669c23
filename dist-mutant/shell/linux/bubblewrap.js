/**
 * The agent sandbox of `vault-cli run` (docs/sandbox.md): bubblewrap, run as
 * the owner without root or a setuid helper of ours, in new user, mount, PID,
 * network, IPC and UTS namespaces, with every capability dropped and no
 * further user namespaces.
 *
 * What the agent gets, in mount order (a later mount covers an earlier one):
 * the whole file system read-only; a private /tmp, /dev and /proc (its own
 * processes only); its working directory and the owner's --allow-write
 * directories and files writable, and the profile's private copies of state
 * files bound at their places; then the project controls in them (git's config
 * and hooks, .envrc, editor tasks: what the owner's tools would run later) kept
 * read-only, or made as empty read-only placeholders where they do not exist
 * yet; the installation of vault-cli and the shell's start-up files
 * read-only again, and last the protected paths hidden (which
 * ones: shell/sandbox-policy.ts). Its only network is its own loopback, where
 * socat relays 127.0.0.1:PROXY_PORT to the session's proxy and each
 * --allow-net destination to its relay in `run` (`openRelays`, the outside
 * ends); the host is reached through the session's own socket, never the
 * host's.
 *
 * `bubblewrapPlan` and `sandboxArgs` are pure: the policy has decided,
 * checked and sorted the paths; the plan adds bubblewrap's means (the relay
 * sockets, loopback addresses and hosts file, the socket placeholder).
 * shell/linux/engine.ts offers them to `run` as a SandboxEngine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmdirSync, unlinkSync, writeFileSync, } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { PROXY_PORT } from '../../src/commands/table.js';
import { which } from '../which.js';
/**
 * The policy in bubblewrap's terms: a relay socket per route in the session
 * directory, a loopback address per host name inside (named in the hosts
 * file), and the sockets for the proxy and the session's host.
 */
export function bubblewrapPlan(policy) {
    const { sessionDir } = policy;
    // One address per host name, whatever its ports: the hosts file can name only one.
    const addresses = new Map();
    const routes = policy.routes.map((r, i) => {
        // Clients resolve localhost themselves (RFC 6761), never through the hosts file.
        const address = r.host === 'localhost'
            ? '127.0.0.1'
            : (addresses.get(r.host) ?? `127.0.0.${addresses.size + 2}`);
        if (r.host !== 'localhost')
            addresses.set(r.host, address);
        return { host: r.host, port: r.port, address, socket: join(sessionDir, `net-${i}.sock`) };
    });
    return {
        ...policy,
        hostSocket: join(sessionDir, 'host.sock'),
        proxySocket: join(sessionDir, 'proxy.sock'),
        routes,
        hostsFile: routes.length === 0
            ? null
            : { path: join(sessionDir, 'hosts'), lines: [...addresses].map(([h, a]) => `${a}\t${h}`) },
    };
}
/** Single-quoted for sh. */
function q(s) {
    return `'${s.replace(/'/g, `'\\''`)}'`;
}
/**
 * The script the sandbox starts with: the loopback relays, a wait until they
 * listen (so the agent's first request finds them), then the agent as a
 * foreground job of its own. `set -m` gives the agent's process group the
 * terminal, so Ctrl-C reaches the agent and not bubblewrap (which would die
 * of it and take the agent with it).
 */
function innerScript(s) {
    const relays = [
        { listen: `127.0.0.1`, port: PROXY_PORT, to: s.policy.proxySocket },
        ...s.policy.routes.map((r) => ({ listen: r.address, port: r.port, to: r.socket })),
    ];
    // Set inside the user namespace, where the kernel counts the sandbox's tasks
    // only; an owner's hard limit lower than this one stays.
    const lines = [`ulimit -u ${s.maxProcs} 2>/dev/null`];
    lines.push(...relays.map((r) => `${q(s.socat)} TCP-LISTEN:${r.port},bind=${r.listen},fork,reuseaddr UNIX-CONNECT:${q(r.to)} </dev/null >/dev/null 2>&1 &`));
    // /proc/net/tcp lists this namespace's sockets; state 0A is LISTEN.
    lines.push(`i=0; while [ "$(grep -c ' 0A ' /proc/net/tcp)" -lt ${relays.length} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done`, 'set -m', '"$@"', 'exit $?');
    return lines.join('\n');
}
/** bubblewrap's arguments for `spec`: the command is `spec.bwrap` with these. */
export function sandboxArgs(s) {
    const a = [
        '--unshare-user',
        '--disable-userns',
        '--unshare-pid',
        '--unshare-net',
        '--unshare-ipc',
        '--unshare-uts',
        '--unshare-cgroup-try',
        '--cap-drop',
        'ALL',
        '--die-with-parent',
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
    ];
    const p = s.policy;
    for (const dir of [p.cwd, ...p.writable])
        a.push('--bind', dir, dir);
    for (const f of p.privateFiles)
        a.push('--bind', f.copy, f.path);
    a.push('--ro-bind', p.sessionDir, p.sessionDir, '--bind', s.hostSocket, p.hostSocket);
    if (p.hostsFile !== null)
        a.push('--ro-bind', p.hostsFile.path, '/etc/hosts');
    // Pinned first: a mount point cannot be renamed, so the read-only ones inside stay where they are.
    for (const d of p.controls.pinned)
        a.push('--bind', d, d);
    for (const c of p.controls.kept)
        a.push('--ro-bind', c, c);
    for (const c of p.controls.absent) {
        if (c.dir)
            a.push('--tmpfs', c.path, '--remount-ro', c.path);
        else
            a.push('--ro-bind', '/dev/null', c.path);
    }
    for (const r of p.readOnly)
        a.push('--ro-bind', r, r);
    for (const h of p.hidden) {
        if (h.dir)
            a.push('--tmpfs', h.path, '--remount-ro', h.path);
        else
            a.push('--ro-bind', '/dev/null', h.path);
    }
    a.push('--chdir', p.cwd, '--', '/bin/bash', '-c', innerScript(s), 'vault-cli-sandbox');
    a.push(...s.command);
    return a;
}
/**
 * What `run` starts: bubblewrap, or, with a pids cgroup, a shell that moves
 * itself into the cgroup and then becomes bubblewrap, so that every process
 * of the sandbox is counted from its first fork.
 */
export function sandboxLaunch(s, cgroupProcs) {
    const args = sandboxArgs(s);
    if (cgroupProcs === null)
        return { file: s.bwrap, args };
    return {
        file: '/bin/sh',
        args: [
            '-c',
            'echo $$ 2>/dev/null > "$0" || { echo "vault-cli: the sandbox could not join its pids cgroup $0" >&2; exit 126; }; exec "$@"',
            cgroupProcs,
            s.bwrap,
            ...args,
        ],
    };
}
/** A Unix-socket server at `path` whose connections `onConnection` takes. */
async function listenUnix(path, onConnection) {
    const server = createServer(onConnection);
    await new Promise((res, rej) => {
        server.once('error', rej);
        server.listen(path, () => res());
    });
    return server;
}
/**
 * The outside ends of the sandbox's network, in the session directory: the
 * proxy's socket (its connections go to `proxy`), a relay to each allowed
 * route, the placeholder the host socket is bound over, and the hosts file.
 * `close` stops the relays; the files go with the session directory.
 */
export async function openRelays(policy, proxy) {
    const servers = [];
    const close = () => {
        for (const s of servers)
            s.close();
    };
    try {
        servers.push(await listenUnix(policy.proxySocket, (s) => proxy.accept(s)));
        writeFileSync(policy.hostSocket, '');
        for (const r of policy.routes)
            servers.push(await listenUnix(r.socket, (inner) => {
                const outer = connect(r.port, r.host);
                inner.on('error', () => outer.destroy());
                outer.on('error', () => inner.destroy());
                inner.pipe(outer).pipe(inner);
            }));
        if (policy.hostsFile !== null) {
            const system = existsSync('/etc/hosts') ? readFileSync('/etc/hosts', 'utf8') : '';
            writeFileSync(policy.hostsFile.path, [...policy.hostsFile.lines, system].join('\n'));
        }
    }
    catch (err) {
        close();
        throw err;
    }
    return { close };
}
/**
 * Whether `p` looks like a placeholder bubblewrap made as a mount point: an
 * empty file of mode 0444, or an empty directory. One found before a session
 * starts was left by a `run` that was killed (SIGKILL leaves no time to clean
 * up), or belongs to a session still running in the same directory.
 */
export function looksLikePlaceholder(p) {
    try {
        const st = lstatSync(p);
        if (st.isFile())
            return st.size === 0 && (st.mode & 0o777) === 0o444;
        return st.isDirectory() && readdirSync(p).length === 0;
    }
    catch {
        return false;
    }
}
/** Whether a bubblewrap process runs with `cwd` as its working directory: another session's sandbox. */
function sandboxIn(cwd) {
    for (const pid of readdirSync('/proc')) {
        if (!/^[0-9]+$/.test(pid))
            continue;
        try {
            if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap' &&
                readlinkSync(`/proc/${pid}/cwd`) === cwd)
                return true;
        }
        catch {
            // Gone, or not ours to look at.
        }
    }
    return false;
}
/**
 * Whether no sandbox runs in `cwd` any more, waiting a second at most: this
 * session's own takes a moment to go after its first process. False while
 * another session's runs there.
 */
export async function sandboxGone(cwd) {
    for (let i = 0; i < 20 && sandboxIn(cwd); i++)
        await new Promise((r) => setTimeout(r, 50));
    return !sandboxIn(cwd);
}
/**
 * Removes the mount points bubblewrap made in the owner's directory for the
 * project controls that did not exist (`policy.controls.absent`), once the
 * sandbox is gone: each only while it still looks as bubblewrap made it, so
 * nothing the owner wrote there meanwhile goes, and none while another
 * session's sandbox runs in the same directory (removing a file another
 * mount namespace has a mount on detaches that mount: its agent could then
 * create the path). That session removes them when it ends.
 */
export async function removePlaceholders(policy) {
    if (policy.controls.absent.length === 0)
        return;
    if (!(await sandboxGone(policy.cwd)))
        return;
    for (const c of policy.controls.absent) {
        if (!looksLikePlaceholder(c.path))
            continue;
        try {
            if (c.dir)
                rmdirSync(c.path);
            else
                unlinkSync(c.path);
        }
        catch {
            // Gone already, or taken over: the owner's now.
        }
    }
}
/**
 * Whether bubblewrap can start here, checked before any session is minted:
 * the programs it needs, or what is missing and how to fix it.
 */
export function probeBubblewrap(path) {
    const missing = (why) => ({ ok: false, why });
    const bwrap = which('bwrap', path);
    if (bwrap === null)
        return missing('bubblewrap is not installed (Debian, Ubuntu: apt install bubblewrap)');
    const socat = which('socat', path);
    if (socat === null)
        return missing('socat is not installed (Debian, Ubuntu: apt install socat)');
    const r = spawnSync(bwrap, [
        '--unshare-user',
        '--disable-userns',
        '--unshare-pid',
        '--unshare-net',
        '--ro-bind',
        '/',
        '/',
        '--',
        '/bin/true',
    ], { encoding: 'utf8', timeout: 10_000 });
    if (r.status !== 0) {
        // bubblewrap's own words say which namespace or option failed; they hold no secret.
        const said = (r.stderr ?? '')
            .trim()
            .split('\n')[0]
            ?.replace(/^bwrap: /, '') ?? '';
        return missing(`bubblewrap could not make its namespaces (${said || `exit ${String(r.status ?? r.signal)}`}); ` +
            'user namespaces may be off (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu ' +
            'kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), ' +
            'or this bubblewrap is older than 0.8 (--disable-userns)');
    }
    return { ok: true, tools: { bwrap, socat } };
}
