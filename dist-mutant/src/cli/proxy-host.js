/**
 * The proxy's hooks into the vault host (`vault-cli proxy` and `run`'s
 * session proxy): fills resolved, callers admitted and refused attempts
 * reported, all on one kept-alive channel, since the proxy calls the host on
 * every fill (not ctx.call: a new connection per call). The two proxies
 * differ only in whom a request acts for, which each states as its `Callers`.
 */
import { VaultError } from '../core/errors.js';
import { HostChannel } from '../client/channel.js';
/** The hooks of a proxy whose requests act for `callers`, through the host `client` reaches. */
export function proxyHost(client, callers) {
    const channel = new HostChannel(client);
    const token = (caller) => {
        if (caller != null)
            return caller;
        if ('fallback' in callers)
            return callers.fallback;
        throw new VaultError('VLT-2040');
    };
    const rules = 'session' in callers ? { requireCaller: true, sessionToken: callers.session } : {};
    return {
        channel,
        hooks: {
            ...rules,
            resolve: async (refs, host, caller, request) => {
                const { values } = await channel.call('resolve', {
                    token: token(caller),
                    refs: [...refs],
                    host,
                    request,
                });
                return values.map((v) => Buffer.from(v, 'base64'));
            },
            // A tunnel opens only for a token the host knows: an ended session's gets 403 at CONNECT.
            admit: async (caller) => {
                await channel.call('whoami', { token: caller });
            },
            // An attempt it refused that counts against the caller: the host decides and records.
            // A surrogate-signed AWS request: the host signs it with the key it never lets out.
            sign: async (pieces, host, caller) => channel.call('sign', {
                token: token(caller),
                host,
                ...pieces,
                headers: [...pieces.headers],
            }),
            report: async (signal, caller) => channel.call('report', { token: token(caller), ...signal, refs: [...signal.refs] }),
        },
    };
}
