/**
 * `vault-cli doctor`: one line for each thing vault-cli needs on this machine,
 * with its fix when it is not well. Exit 0 only when `run` can start its
 * sandbox (bubblewrap, socat, user namespaces); the rest (host, vault
 * directory, proxy port, completion) says what else would fail, and warns.
 * The sandbox's probes are shell/doctor-probes.ts; these are the CLI's own.
 */
import { closeSync, existsSync, openSync, readFileSync, readlinkSync, rmSync, statSync, } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { SHELLS, PROXY_PORT } from '../../commands/table.js';
import { VaultError } from '../../core/errors.js';
import { keepBlocks } from '../../kernel/unix.js';
import { completionPlace } from '../completion-install.js';
import { MIN_NODE, nodeFits } from '../node-check.js';
export const run = async (ctx) => {
    const probes = await import('../../../shell/doctor-probes.js');
    const path = ctx.env.PATH;
    const linux = process.platform === 'linux';
    const bwrap = probes.probeProgram('bwrap', 'bubblewrap', path);
    const findings = [
        nodeFinding(),
        linux
            ? bwrap
            : {
                name: 'bwrap',
                verdict: 'fail',
                said: `run's sandbox needs Linux; this is ${process.platform}`,
            },
        probes.probeProgram('socat', 'socat', path),
        probes.probeUserNamespaces(bwrap.verdict === 'ok' ? bwrap.said : null, path),
        probes.probePidsCgroup(),
        await probes.probePty(),
        fallocateFinding(ctx.paths.vaultDir),
        vaultDirFinding(ctx.paths.vaultDir),
        await hostFinding(ctx),
        await proxyPortFinding(),
        completionFinding(ctx.env),
    ];
    for (const f of findings)
        ctx.stdout.write(line(f));
    const fails = findings.filter((f) => f.verdict === 'fail');
    ctx.stdout.write(fails.length === 0
        ? 'run can start its sandbox here.\n'
        : `run cannot start its sandbox here: fix ${fails.map((f) => f.name).join(', ')} (or run --no-sandbox, docs/sandbox.md).\n`);
    return fails.length === 0 ? 0 : 1;
};
const LABEL = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };
function line(f) {
    const fix = f.fix === undefined || f.verdict === 'ok' ? '' : `; fix: ${f.fix}`;
    return `${LABEL[f.verdict]}  ${f.name}: ${f.said}${fix}\n`;
}
function nodeFinding() {
    const min = `${MIN_NODE.major}.${MIN_NODE.minor}`;
    return nodeFits(process.versions.node)
        ? { name: 'node', verdict: 'ok', said: `${process.version} (${process.execPath})` }
        : {
            name: 'node',
            verdict: 'fail',
            said: `${process.version} is older than Node ${min}`,
            fix: `put Node ${min} or later first on PATH`,
        };
}
/** The vault directory, or the nearest directory above it that exists (where it will be made). */
function existingDir(dir) {
    let d = dir;
    while (!existsSync(d) && dirname(d) !== d)
        d = dirname(d);
    return d;
}
/** Whether the vault's file system keeps blocks ahead (src/kernel/unix.ts keepBlocks). */
function fallocateFinding(vaultDir) {
    const name = 'fallocate';
    const dir = existingDir(vaultDir);
    const probe = join(dir, `.vault-cli-doctor-${process.pid}`);
    let fd;
    try {
        fd = openSync(probe, 'wx', 0o600);
    }
    catch (err) {
        const code = err.code ?? 'error';
        return {
            name,
            verdict: 'warn',
            said: `cannot write in ${dir} (${code})`,
            fix: `make ${dir} writable`,
        };
    }
    try {
        return keepBlocks(fd, 0, 4096)
            ? { name, verdict: 'ok', said: `the file system of ${dir} supports it` }
            : {
                name,
                verdict: 'warn',
                said: `the file system of ${dir} does not support it`,
                fix: 'put VAULT_DIR on ext4, xfs or btrfs: a full disk can then fail a write half-way',
            };
    }
    finally {
        closeSync(fd);
        rmSync(probe, { force: true });
    }
}
function vaultDirFinding(vaultDir) {
    const name = 'vault directory';
    let st;
    try {
        st = statSync(vaultDir);
    }
    catch {
        return {
            name,
            verdict: 'ok',
            said: `${vaultDir}: no vault yet (vault create makes it, mode 700)`,
        };
    }
    const uid = process.getuid?.() ?? st.uid;
    if (st.uid !== uid)
        return {
            name,
            verdict: 'warn',
            said: `${vaultDir} belongs to uid ${st.uid}, not you (${uid})`,
            fix: `chown -R ${uid} ${vaultDir}, or set VAULT_DIR to a vault of yours`,
        };
    if ((st.mode & 0o077) !== 0)
        return {
            name,
            verdict: 'warn',
            said: `${vaultDir} is mode ${(st.mode & 0o777).toString(8)}: others can enter it`,
            fix: `chmod 700 ${vaultDir}`,
        };
    return { name, verdict: 'ok', said: `${vaultDir}, mode 700, yours` };
}
/** The running host, its Node and its uid (read from /proc: the status answer names neither). */
async function hostFinding(ctx) {
    const name = 'host';
    let status;
    try {
        status = await ctx.call('status', {}, { autoStart: false });
    }
    catch (err) {
        if (err instanceof VaultError && err.code === 'VLT-3005')
            return {
                name,
                verdict: 'ok',
                said: 'not running (the first command that needs it starts it)',
            };
        return {
            name,
            verdict: 'warn',
            said: `does not answer (${err instanceof VaultError ? err.code : 'error'})`,
            fix: 'vault-cli daemon stop, then any command starts it again',
        };
    }
    let node = '?';
    let uid = '?';
    try {
        node = readlinkSync(`/proc/${status.pid}/exe`);
        uid = /^Uid:\s+([0-9]+)/m.exec(readFileSync(`/proc/${status.pid}/status`, 'utf8'))?.[1] ?? '?';
    }
    catch {
        // another user's host (hardened mode): its /proc is not ours to read
    }
    const said = `running, pid ${status.pid}, node ${node}, uid ${uid}`;
    if (node !== '?' && node !== process.execPath)
        return {
            name,
            verdict: 'warn',
            said: `${said}; this command runs on ${process.execPath}`,
            fix: 'vault-cli daemon stop (clients refuse a host on another node, VLT-3010)',
        };
    return { name, verdict: 'ok', said };
}
/** Whether the proxy's default port on 127.0.0.1 is free (a running proxy holds it too). */
function proxyPortFinding() {
    const name = 'proxy port';
    return new Promise((resolve) => {
        const s = createServer();
        s.once('error', (err) => resolve({
            name,
            verdict: 'warn',
            said: `127.0.0.1:${PROXY_PORT} is taken (${err.code ?? 'error'}): a vault-cli proxy, or another program`,
            fix: `vault-cli proxy --port N picks another (ss -ltnp 'sport = :${PROXY_PORT}' names the holder)`,
        }));
        s.listen(PROXY_PORT, '127.0.0.1', () => s.close(() => resolve({ name, verdict: 'ok', said: `127.0.0.1:${PROXY_PORT} is free` })));
    });
}
function completionFinding(env) {
    const name = 'completion';
    const installed = SHELLS
        .map((s) => completionPlace(s, env))
        .filter((p) => existsSync(p.file));
    if (installed.length > 0)
        return { name, verdict: 'ok', said: installed.map((p) => `${p.shell} ${p.file}`).join(', ') };
    return {
        name,
        verdict: 'warn',
        said: 'not installed for bash, zsh or fish',
        fix: 'vault-cli completion install (for $SHELL)',
    };
}
