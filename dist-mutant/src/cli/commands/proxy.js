/**
 * `vault-cli proxy [--port N]`, `proxy env [--no-local-bypass]`, `proxy ca`. The proxy acts for
 * the agent that ran `init` (its token from VAULT_TOKEN or the token file) and
 * reaches the vault host through the client, like every other command. A
 * request whose proxy URL carries a token as user-info acts for that token
 * instead (docs/decisions.md: Proxy).
 */
import { existsSync } from 'node:fs';
import { PROXY_PORT } from '../../commands/table.js';
import { VaultError } from '../../core/errors.js';
import { NO_PROXY, proxyEnv, upstreamRoots } from '../../proxy/env.js';
import { flag, flagCount, flagList, flagString, } from '../context.js';
import { loadToken } from '../token.js';
function port(ctx) {
    const p = flagCount(ctx, 'port') ?? PROXY_PORT;
    if (p > 65535)
        throw new VaultError('VLT-1001', 'Ports are 1 to 65535.');
    return p;
}
async function authority(ctx, token) {
    const { Authority } = await import('../../proxy/ca.js');
    const p = ctx.paths;
    return Authority.loadOrCreate({ config: p.proxyConfig, cert: p.proxyCa, bundle: p.proxyCaBundle, systemRoots: p.systemRoots }, token);
}
/** Whether something accepts connections on 127.0.0.1:`p` (a proxy, we assume). */
async function listening(p) {
    const { connect } = await import('node:net');
    return new Promise((resolve) => {
        const s = connect({ host: '127.0.0.1', port: p });
        const done = (yes) => {
            s.destroy();
            resolve(yes);
        };
        s.once('connect', () => done(true));
        s.once('error', () => done(false));
        s.setTimeout(2000, () => done(false));
    });
}
/** A value for a POSIX shell: single-quoted unless plainly safe. */
const shq = (v) => /^[A-Za-z0-9_./:,=@+-]+$/.test(v) ? v : `'${v.replaceAll("'", `'\\''`)}'`;
export const run = async (ctx) => {
    const sub = ctx.inv.command?.path[1];
    // A public path: printed without a token once the CA exists (a token makes it).
    if (sub === 'ca' && existsSync(ctx.paths.proxyCa)) {
        ctx.stdout.write(ctx.paths.proxyCa + '\n');
        return 0;
    }
    const token = loadToken(ctx);
    if (sub === 'ca') {
        await authority(ctx, token);
        ctx.stdout.write(ctx.paths.proxyCa + '\n');
        return 0;
    }
    if (sub === 'env') {
        // Only made when missing: the CA files are the running proxy's, perhaps
        // under another agent's token, and a new CA written under it would make
        // every client refuse it (one CA per proxy; issue 38).
        const p = ctx.paths;
        if (!existsSync(p.proxyCa) || !existsSync(p.proxyCaBundle))
            await authority(ctx, token);
        // Without the bypass a local test service is reached directly, and gets the literal reference.
        const direct = flag(ctx, 'no-local-bypass') ? [] : NO_PROXY;
        const vars = proxyEnv(`http://127.0.0.1:${port(ctx)}`, ctx.paths, direct);
        const aws = flagString(ctx, 'aws');
        // Requests without a caller in the proxy URL act for this token: the surrogate is bound to it.
        if (aws !== undefined)
            vars.push(...(await import('../../crypto/aws-surrogate.js')).awsEnv(token, aws));
        ctx.stdout.write(vars.map(([k, v]) => `export ${k}=${shq(v)}\n`).join(''));
        if (!(await listening(port(ctx)))) {
            const flagText = port(ctx) === PROXY_PORT ? '' : ` --port ${port(ctx)}`;
            ctx.stderr.write(`vault-cli: no proxy listens on 127.0.0.1:${port(ctx)}: tools given these variables cannot connect (curl exits 7); start one with \`vault-cli proxy${flagText}\`.\n`);
        }
        return 0;
    }
    // A second proxy on a port in use would fail to listen only after it had
    // replaced the CA files the running one serves with: refused first.
    if (await listening(port(ctx))) {
        throw new VaultError('VLT-1002', `Port ${port(ctx)} is in use: is a proxy already running?`);
    }
    // The token is checked before anything listens: a proxy that cannot resolve is no use.
    await ctx.call('whoami', { token });
    const [{ startProxy }, { proxyHost }] = await Promise.all([
        import('../../proxy/server.js'),
        import('../proxy-host.js'),
    ]);
    // A request acts for the caller token its proxy URL carries, else for the init agent.
    const { channel, hooks } = proxyHost({ ...ctx.client, autoStart: true }, { fallback: token });
    const proxy = await startProxy({
        port: port(ctx),
        authority: await authority(ctx, token),
        upstreamCa: upstreamRoots(ctx.paths.systemRoots, flagList(ctx, 'upstream-ca')),
        ...hooks,
    }).catch((err) => {
        if (err.code === 'EADDRINUSE') {
            throw new VaultError('VLT-1002', `Port ${port(ctx)} is in use: is a proxy already running?`);
        }
        throw err;
    });
    ctx.stderr.write(`vault-cli: proxy on http://127.0.0.1:${proxy.port} (CA ${ctx.paths.proxyCa})\n`);
    await new Promise((resolve) => {
        const stop = () => void proxy.close().then(() => {
            channel.close();
            resolve();
        });
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
    });
    return 0;
};
