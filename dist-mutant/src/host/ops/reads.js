/**
 * The agents' own operations: who a token is, and reading values with it
 * (`get`/`totp`, and `render`'s and the proxy's references); the only ones a
 * sandboxed session's socket serves. And the proxy's report of an attempt it
 * refused, counted against the token's own agent (a session's socket does
 * not serve it: the session's proxy runs outside the sandbox).
 */
import { VaultError } from '../../core/errors.js';
import { release, reportSignal } from '../agent/access.js';
import { readField, whoami } from '../agent/reads.js';
import { signForProxy } from '../agent/sigv4.js';
import { publicKeys, signFor } from '../agent/ssh.js';
import { normalHost } from '../entries/entries.js';
import { agentToken, asAgent } from './op.js';
/** A destination as the proxy names one (a DNS name or an IP address): it is audited in clear. */
const DESTINATION = /^[a-z0-9_.:-]{1,253}$/;
export const readOps = {
    whoami: async ({ ctx }, req) => whoami(ctx, agentToken(req), req.source),
    read: async (env, req) => asAgent(env, req, async (session) => {
        const { entry, field, mode } = req.body;
        const value = await readField(env.ctx, session, { entry, field, mode }, req.source);
        const out = value.expose().toString('base64');
        value.wipe();
        return { value: out };
    }),
    resolve: async (env, req) => asAgent(env, req, async (session) => {
        const refs = req.body.refs.map(({ entry, field }) => ({ entry, field }));
        const { host, request } = req.body;
        const purpose = {
            kind: 'fill',
            host: host ?? null,
            ...(request === undefined ? {} : { request }),
        };
        const values = await release(env.ctx, session, refs, purpose, req.source);
        const out = values.map((v) => v.expose().toString('base64'));
        for (const v of values)
            v.wipe();
        return { values: out };
    }),
    'ssh.keys': async (env, req) => asAgent(env, req, async (session) => ({
        keys: await publicKeys(env.ctx, session, req.body.entries, req.source),
    })),
    'ssh.sign': async (env, req) => asAgent(env, req, async (session) => {
        const { entry, key, data, flags, binds } = req.body;
        const b64 = (s) => Buffer.from(s, 'base64');
        const signed = {
            entry,
            key: b64(key),
            data: b64(data),
            flags: flags ?? 0,
            binds: binds.map(b64),
        };
        const sig = await signFor(env.ctx, session, signed, req.source);
        return { signature: sig.toString('base64') };
    }),
    report: async (env, req) => {
        const host = normalHost(req.body.host);
        if (!DESTINATION.test(host))
            throw new VaultError('VLT-1002', 'Not a destination host.');
        const refs = req.body.refs.map(({ entry, field }) => ({ entry, field }));
        const signal = { kind: req.body.kind, host, refs };
        return asAgent(env, req, (session) => reportSignal(env.ctx, session, signal, req.source));
    },
    sign: async (env, req) => {
        const host = normalHost(req.body.host);
        if (!DESTINATION.test(host))
            throw new VaultError('VLT-1002', 'Not a destination host.');
        return asAgent(env, req, (session) => signForProxy(env.ctx, session, req.body.token, req.body, host, req.source));
    },
};
