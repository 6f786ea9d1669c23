// The session's proxy, with a CA made for the session.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROXY_PORT } from '../../commands/table.js';
import { upstreamRoots } from '../../proxy/env.js';
import { flagList } from '../context.js';
/**
 * The session's proxy: PROXY_PORT when free, any free port otherwise; its CA
 * is made for this session and its certificate lives in `dir` until the
 * session ends.
 */
export async function sessionProxy(ctx, dir, sessionToken, confine, onRefusal) {
    const [{ startProxy, proxyUrl }, { Authority }, { proxyHost }] = await Promise.all([
        import('../../proxy/server.js'),
        import('../../proxy/ca.js'),
        import('../proxy-host.js'),
    ]);
    // Every request acts for the session's token, and only for it.
    const { channel: host, hooks } = proxyHost(ctx.client, { session: sessionToken });
    const files = {
        cert: join(dir, 'ca.pem'),
        bundle: join(dir, 'ca-bundle.pem'),
        systemRoots: ctx.paths.systemRoots,
    };
    const authority = Authority.ephemeral(files);
    // SSL_CERT_DIR: a directory of the session CA alone (Go and rustls read every
    // file in it; OpenSSL, which wants hashed names, has SSL_CERT_FILE).
    const certDir = join(dir, 'certs');
    mkdirSync(certDir, { mode: 0o700 });
    copyFileSync(files.cert, join(certDir, 'vault-cli-session-ca.pem'));
    const options = {
        authority,
        upstreamCa: upstreamRoots(ctx.paths.systemRoots, flagList(ctx, 'upstream-ca')),
        ...(confine === undefined ? {} : { confine }),
        onRefusal,
        ...hooks,
    };
    const proxy = await startProxy({ ...options, port: PROXY_PORT }).catch((err) => {
        if (err.code !== 'EADDRINUSE')
            throw err;
        return startProxy({ ...options, port: 0 });
    });
    return {
        proxy,
        host,
        files: { ...files, dir: certDir },
        url: (token) => proxyUrl(proxy.port, token),
    };
}
