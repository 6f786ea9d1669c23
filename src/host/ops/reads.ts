/**
 * The agents' own operations: who a token is, and reading values with it
 * (`get`/`totp`, and `render`'s and the proxy's references). The only ones a
 * sandboxed session's socket serves.
 */
import { readField, release, whoami } from '../access.js';
import { agentToken, asAgent, type OpArea } from './op.js';

export const readOps: OpArea<'whoami' | 'read' | 'resolve'> = {
  whoami: async ({ ctx }, req) => whoami(ctx, agentToken(req), req.source),
  read: async (env, req) =>
    asAgent(env, req, async (session) => {
      const { entry, field, mode } = req.body;
      const value = await readField(env.ctx, session, { entry, field, mode }, req.source);
      const out = value.expose().toString('base64');
      value.wipe();
      return { value: out };
    }),
  resolve: async (env, req) =>
    asAgent(env, req, async (session) => {
      const refs = req.body.refs.map(({ entry, field }) => ({ entry, field }));
      const purpose = { kind: 'fill', host: req.body.host ?? null } as const;
      const values = await release(env.ctx, session, refs, purpose, req.source);
      const out = values.map((v) => v.expose().toString('base64'));
      for (const v of values) v.wipe();
      return { values: out };
    }),
};
