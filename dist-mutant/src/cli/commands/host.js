/**
 * `vault-cli host install|uninstall|status`: hardened mode, where the vault
 * host runs as a system user of its own. The agent's OS user then cannot read
 * the store (the state directory is the host user's, 0700), trace or signal
 * the host (another uid), or replace its socket (the socket directory is the
 * host user's, 0750; its group may connect, not write). Clients of group
 * members find it through the root-owned record /etc/vault-cli/host.json.
 * See docs/hardened-host.md.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync, } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { formatTime } from '../../core/audit.js';
import { VaultError } from '../../core/errors.js';
import { LOCK_NAME, STORE_FILE } from '../../core/protocol.js';
import { flag, flagList, flagString } from '../context.js';
import { readSystemHost } from '../paths.js';
const DEFAULTS = {
    user: 'vault-cli',
    group: 'vault-cli',
    stateDir: '/var/lib/vault-cli',
    socketDir: '/run/vault-cli',
};
const UNIT = 'vault-cli-host.service';
const UNIT_FILE = `/etc/systemd/system/${UNIT}`;
function needRoot(what) {
    if (process.getuid?.() !== 0) {
        throw new VaultError('VLT-1007', `\`vault-cli host ${what}\` needs root: run it with sudo.`);
    }
}
/** Runs a system tool; its failure is one error line naming the tool, never its input. */
function tool(cmd, args) {
    try {
        return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    }
    catch (err) {
        const status = err.status;
        throw new VaultError('VLT-3011', `\`${cmd} ${args[0] ?? ''}\` failed (status ${status}).`, {
            cause: err,
        });
    }
}
function exists(cmd, args) {
    try {
        execFileSync(cmd, args, { stdio: 'ignore' });
        return true;
    }
    catch {
        return false;
    }
}
function systemName(kind, name) {
    if (!/^[a-z_][a-z0-9_-]{0,30}$/.test(name)) {
        throw new VaultError('VLT-1002', `Not a usable ${kind} name: ${JSON.stringify(name)}.`);
    }
    return name;
}
function absolute(kind, path) {
    if (!path.startsWith('/'))
        throw new VaultError('VLT-1002', `The ${kind} must be absolute.`);
    return resolve(path);
}
const systemdRuns = () => existsSync('/run/systemd/system');
function unitText(h, node, script) {
    const runtime = dirname(h.socketDir) === '/run' ? h.socketDir.slice('/run/'.length) : null;
    return [
        '[Unit]',
        'Description=vault-cli host (hardened mode: its own user)',
        'After=local-fs.target',
        '',
        '[Service]',
        `User=${h.user}`,
        `Group=${h.group}`,
        `Environment=VAULT_DIR=${h.stateDir} VAULT_SOCKET_DIR=${h.socketDir} VAULT_HOST_IDLE_MS=0`,
        `ExecStart=${node} ${script} daemon`,
        ...(runtime === null ? [] : [`RuntimeDirectory=${runtime}`, 'RuntimeDirectoryMode=0750']),
        'UMask=0077',
        'LimitCORE=0',
        'NoNewPrivileges=yes',
        'ProtectSystem=strict',
        'ProtectHome=read-only',
        'PrivateTmp=yes',
        `ReadWritePaths=${h.stateDir} ${h.socketDir}`,
        'Restart=on-failure',
        '',
        '[Install]',
        'WantedBy=multi-user.target',
        '',
    ].join('\n');
}
/** The command that starts the host as its user where no systemd runs. */
function startCommand(h, node, script) {
    return (`install -d -o ${h.user} -g ${h.group} -m 0750 ${h.socketDir} && ` +
        `setsid runuser -u ${h.user} -- env -i PATH=/usr/bin:/bin VAULT_DIR=${h.stateDir} ` +
        `VAULT_SOCKET_DIR=${h.socketDir} VAULT_HOST_IDLE_MS=0 ` +
        `sh -c 'ulimit -c 0; exec "$0" "$@"' ${node} ${script} daemon ` +
        `>>${h.stateDir}/host.log 2>&1 < /dev/null &`);
}
async function install(ctx) {
    needRoot('install');
    const user = systemName('user', flagString(ctx, 'user') ?? DEFAULTS.user);
    const group = systemName('group', flagString(ctx, 'group') ?? DEFAULTS.group);
    const stateDir = absolute('state directory', flagString(ctx, 'state-dir') ?? DEFAULTS.stateDir);
    const socketDir = absolute('socket directory', flagString(ctx, 'socket-dir') ?? DEFAULTS.socketDir);
    const members = flagList(ctx, 'member').map((m) => systemName('user', m));
    const from = flagString(ctx, 'move');
    const node = process.execPath;
    const script = ctx.script;
    if (existsSync(join(stateDir, STORE_FILE)) && from !== undefined) {
        throw new VaultError('VLT-3006', `A vault already exists in ${stateDir}; nothing was moved.`);
    }
    const source = from === undefined ? null : resolve(from);
    if (source !== null && !existsSync(join(source, STORE_FILE))) {
        throw new VaultError('VLT-3001', `No vault in ${source}; nothing was installed.`);
    }
    if (!exists('getent', ['group', group]))
        tool('groupadd', ['--system', group]);
    if (!exists('id', ['-u', user])) {
        const shell = existsSync('/usr/sbin/nologin') ? '/usr/sbin/nologin' : '/bin/false';
        tool('useradd', [
            '--system',
            '--gid',
            group,
            '--no-create-home',
            '--home-dir',
            stateDir,
            '--shell',
            shell,
            user,
        ]);
    }
    const uid = Number(tool('id', ['-u', user]).trim());
    const gid = Number((tool('getent', ['group', group]).split(':')[2] ?? '').trim());
    const host = { user, group, uid, gid, stateDir, socketDir };
    for (const [dir, mode] of [
        [stateDir, 0o700],
        [socketDir, 0o750],
    ]) {
        mkdirSync(dir, { recursive: true, mode });
        chownSync(dir, uid, gid);
        chmodSync(dir, mode);
    }
    if (!exists('runuser', ['-u', user, '--', 'test', '-x', node, '-a', '-r', script])) {
        ctx.stderr.write(`vault-cli: warning: user ${user} cannot run ${node} ${script}; install vault-cli where every user can read it (npm install -g)\n`);
    }
    if (source !== null)
        await moveIn(ctx, source, host);
    for (const m of members)
        tool('usermod', ['-aG', group, m]);
    mkdirSync(dirname(ctx.paths.hostConfig), { recursive: true, mode: 0o755 });
    const tmp = `${ctx.paths.hostConfig}.tmp`;
    writeFileSync(tmp, JSON.stringify(host, null, 2) + '\n', { mode: 0o644 });
    chmodSync(tmp, 0o644);
    renameSync(tmp, ctx.paths.hostConfig);
    ctx.stderr.write(`vault-cli: hardened host installed: user ${user} (uid ${uid}), group ${group}, store ${stateDir}, socket ${socketDir}/host.sock; recorded in ${ctx.paths.hostConfig}\n` +
        `vault-cli: members of ${group} reach it; add one with \`usermod -aG ${group} <user>\` (effective at their next login)\n`);
    if (!flag(ctx, 'no-systemd') && systemdRuns()) {
        writeFileSync(UNIT_FILE, unitText(host, node, script), { mode: 0o644 });
        tool('systemctl', ['daemon-reload']);
        tool('systemctl', ['enable', '--now', UNIT]);
        ctx.stderr.write(`vault-cli: started ${UNIT}\n`);
    }
    else {
        ctx.stderr.write(`vault-cli: no systemd here: start the host as ${user} with\n`);
        ctx.stdout.write(startCommand(host, node, script) + '\n');
    }
    return 0;
}
/** Moves a same-user vault's store into the hardened host's state directory. */
async function moveIn(ctx, source, host) {
    const { tryLock } = await import('../../kernel/unix.js');
    const { openSync, closeSync } = await import('node:fs');
    // No host may serve the vault while its store moves: hold its host lock.
    const lock = openSync(join(source, LOCK_NAME), 'a', 0o600);
    try {
        if (!tryLock(lock)) {
            throw new VaultError('VLT-1009', `A vault host still serves ${source}: stop it first (vault-cli daemon stop).`);
        }
        const to = join(host.stateDir, STORE_FILE);
        copyFileSync(join(source, STORE_FILE), `${to}.tmp`);
        chownSync(`${to}.tmp`, host.uid, host.gid);
        chmodSync(`${to}.tmp`, 0o600);
        renameSync(`${to}.tmp`, to);
        // The copy left behind would stay readable by the owner's user, and so by its agents.
        rmSync(join(source, STORE_FILE), { force: true });
        rmSync(join(source, `${STORE_FILE}-lock`), { force: true });
        ctx.stderr.write(`vault-cli: moved the vault of ${source} into ${host.stateDir}\n`);
    }
    finally {
        closeSync(lock);
    }
}
async function stopHost(ctx, h) {
    if (existsSync(UNIT_FILE) && systemdRuns()) {
        exists('systemctl', ['disable', '--now', UNIT]);
        rmSync(UNIT_FILE, { force: true });
        exists('systemctl', ['daemon-reload']);
    }
    const { lockHolders } = await import('../../client/host-check.js');
    for (const pid of lockHolders(join(h.stateDir, LOCK_NAME))) {
        try {
            process.kill(pid, 'SIGTERM');
        }
        catch {
            continue;
        }
        for (let i = 0; i < 100 && lockHolders(join(h.stateDir, LOCK_NAME)).includes(pid); i++) {
            await new Promise((r) => setTimeout(r, 50));
        }
        ctx.stderr.write(`vault-cli: stopped the hardened host (pid ${pid})\n`);
    }
}
async function uninstall(ctx) {
    needRoot('uninstall');
    const h = readSystemHost(ctx.paths.hostConfig);
    if (h === null) {
        throw new VaultError('VLT-3011', `No hardened host is recorded in ${ctx.paths.hostConfig}.`);
    }
    const moveTo = flagString(ctx, 'move-to');
    const owner = flagString(ctx, 'owner');
    const store = join(h.stateDir, STORE_FILE);
    const hasVault = existsSync(store);
    if (hasVault && moveTo === undefined && !flag(ctx, 'purge')) {
        throw new VaultError('VLT-1008', `${h.stateDir} holds a vault: --move-to <dir> --owner <user> takes it back, --purge deletes it. Nothing was changed.`);
    }
    if (moveTo !== undefined && owner === undefined) {
        throw new VaultError('VLT-1001', '--move-to needs --owner <user>.');
    }
    await stopHost(ctx, h);
    if (hasVault && moveTo !== undefined && owner !== undefined) {
        const dir = resolve(moveTo);
        const uid = Number(tool('id', ['-u', owner]).trim());
        const gid = Number(tool('id', ['-g', owner]).trim());
        if (existsSync(join(dir, STORE_FILE))) {
            throw new VaultError('VLT-3006', `A vault already exists in ${dir}; nothing was moved.`);
        }
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        chownSync(dir, uid, gid);
        copyFileSync(store, join(dir, STORE_FILE));
        chownSync(join(dir, STORE_FILE), uid, gid);
        chmodSync(join(dir, STORE_FILE), 0o600);
        ctx.stderr.write(`vault-cli: moved the vault to ${dir} (owner ${owner})\n`);
    }
    rmSync(h.socketDir, { recursive: true, force: true });
    rmSync(h.stateDir, { recursive: true, force: true });
    rmSync(ctx.paths.hostConfig, { force: true });
    if (exists('id', ['-u', h.user]))
        tool('userdel', [h.user]);
    if (exists('getent', ['group', h.group]) && !exists('groupdel', [h.group])) {
        ctx.stderr.write(`vault-cli: warning: group ${h.group} is still in use; left in place\n`);
    }
    ctx.stderr.write(`vault-cli: hardened host uninstalled\n`);
    return 0;
}
async function status(ctx) {
    const h = ctx.paths.systemHost;
    const mode = h === null ? 'same-user' : 'hardened';
    let running = null;
    try {
        running = await ctx.call('status', {}, { autoStart: false });
    }
    catch (err) {
        if (!(err instanceof VaultError && err.code === 'VLT-3005'))
            throw err;
    }
    const socket = join(ctx.paths.socketDir, 'host.sock');
    if (flag(ctx, 'json')) {
        ctx.stdout.write(JSON.stringify({
            mode,
            socket,
            vaultDir: ctx.paths.vaultDir,
            ...(h === null ? {} : { user: h.user, uid: h.uid, group: h.group }),
            running: running !== null,
            ...(running === null ? {} : { pid: running.pid }),
        }) + '\n');
    }
    else {
        const who = h === null
            ? `same-user: the host runs as you; vault ${ctx.paths.vaultDir}`
            : `hardened: the host runs as ${h.user} (uid ${h.uid}), group ${h.group}; store ${h.stateDir}`;
        const state = running === null
            ? h === null
                ? 'not running (the next command starts it)'
                : `not running (systemctl start ${UNIT}, or \`sudo vault-cli host install\` prints how)`
            : `running: pid ${running.pid}, since ${formatTime(running.startedAt)}`;
        ctx.stdout.write(`${who}\nsocket ${socket}\n${state}\n`);
    }
    return running === null ? 3 : 0;
}
export const run = async (ctx) => {
    const sub = ctx.inv.command?.path[1];
    if (sub === 'install')
        return install(ctx);
    if (sub === 'uninstall')
        return uninstall(ctx);
    return status(ctx);
};
