/** `run`'s sessions: start one, hold it for as long as `run` lives, end it. */
import { bad } from '../../core/decode.js';
import { mintSession, revokeSession } from '../agent/sessions.js';
import { asAgent, owner } from './op.js';
const mint = owner(({ ctx }, { body, source }, s) => mintSession(ctx, s, { agent: body.agent, scope: body.scope, ttlMs: body.ttlMs, sandboxed: body.sandbox }, source), 
// A session token acts for the agent, in its whole scope: a new token, as agent add is.
{ releases: 'A run session token' });
export const sessionOps = {
    'session.start': async (env, req) => {
        const minted = await mint(env, req);
        if (!req.body.sandbox)
            return { token: minted.token, expires: minted.expires };
        const socket = await env.sockets.open(minted.id);
        return { token: minted.token, expires: minted.expires, socket };
    },
    'session.end': async (env, req) => asAgent(env, req, (session) => {
        if (session.sessionId !== undefined) {
            revokeSession(env.ctx, session.sessionId, req.source);
            env.sockets.close(session.sessionId);
        }
        return {};
    }),
    /**
     * `run` holds its session on this connection. One line says the hold is in
     * place; when the connection ends, for whatever reason (`run` exited, was
     * killed, or the host is stopping), the session is revoked and its socket
     * closed, so a process the agent left behind has nothing left to use.
     */
    'session.hold': {
        stream: async (env, req, res) => {
            const id = await asAgent(env, req, (session) => {
                if (session.sessionId === undefined)
                    throw bad('only a session token can be held');
                return session.sessionId;
            });
            const { ctx, sockets } = env;
            sockets.held(id);
            res.useChunkedEncodingByDefault = false;
            res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
            res.write('{"held":true}\n');
            env.followers.count++;
            res.on('close', () => {
                env.followers.count--;
                sockets.close(id);
                ctx.callers.clear();
                try {
                    revokeSession(ctx, id, req.source);
                }
                catch {
                    // The store is closing with the host; the next host ends the session at start.
                }
            });
        },
    },
};
