// The agent's environment under `run`.
import { PROXY_PORT } from '../../commands/table.js';
import { NO_PROXY, proxyEnv } from '../../proxy/env.js';
import { flagList, flagString } from '../context.js';
import { longLivedToken, tokenFiles } from './token-files.js';
/**
 * The agent's environment (shell/env.ts): the session token, and the proxy
 * block pointing at the session's proxy; inside the sandbox, at its loopback
 * end, with the allowed routes reached directly and VAULT_DIR at the session
 * directory, where the client finds the session's socket as it would the host's.
 */
export async function agentEnv(ctx, s) {
    const { files } = s.proxy;
    const url = s.proxy.url(s.token);
    // Inside, the proxy's loopback is the sandbox's own: always the documented port.
    const inside = s.box === null ? url : url.replace(/:[0-9]+$/, `:${PROXY_PORT}`);
    const noProxy = [...NO_PROXY, ...(s.box?.policy.routes.map((r) => r.host) ?? [])].filter((h) => h !== s.profile.throughProxy);
    const ca = { proxyCa: files.cert, proxyCaBundle: files.bundle, proxyCaDir: files.dir };
    // `--aws` names the entry; else the profile's `aws` setting, if any.
    const aws = flagString(ctx, 'aws') ?? s.profile.aws ?? undefined;
    // Bound to the session's token: another session's proxy refuses them (VLT-2058).
    const awsVars = aws === undefined ? [] : (await import('../../crypto/aws-surrogate.js')).awsEnv(s.token, aws);
    const { childEnv } = await import('../../../shell/env.js');
    return childEnv({
        parent: ctx.env,
        sessionToken: s.token,
        proxy: [
            ...proxyEnv(inside, ca, noProxy),
            ...(s.box === null ? [] : [['VAULT_DIR', s.dir]]),
            ...(s.sshAuthSock == null ? [] : [['SSH_AUTH_SOCK', s.sshAuthSock]]),
            ...s.profile.vars,
            ...awsVars,
        ],
        keep: flagList(ctx, 'keep-env'),
        forbiddenValues: [
            ...tokenFiles(ctx).flatMap(longLivedToken),
            ...(ctx.env.VAULT_TOKEN === undefined ? [] : [ctx.env.VAULT_TOKEN]),
        ],
    });
}
