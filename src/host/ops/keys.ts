/** Hardware keys: enrolling and removing them, and lifting a lockdown with one. */
import {
  beginEnrol,
  beginUnlock,
  finishEnrol,
  finishUnlock,
  listKeys,
  removeKey,
} from '../hardware-keys.js';
import { owner, type OpArea } from './op.js';

type KeyOp = 'key.begin' | 'key.finish' | 'key.ls' | 'key.rm' | 'unlock.begin' | 'unlock.finish';

const ownerProves = owner<'key.finish', null>(() => null);

export const keyOps: OpArea<KeyOp> = {
  'key.begin': owner(async ({ ctx }, { body }) =>
    beginEnrol(ctx, { name: body.name, origin: body.origin }),
  ),
  // The owner's proof first; the enrolment is checked and recorded after it.
  'key.finish': async (env, req) => {
    await ownerProves(env, req);
    const { challengeId, result } = req.body;
    return finishEnrol(env.ctx, { challengeId, result }, req.source);
  },
  'key.ls': owner(async ({ ctx }) => ({ keys: listKeys(ctx) })),
  'key.rm': owner(async ({ ctx }, { body, source }) => {
    removeKey(ctx, body.name, source);
    return {};
  }),
  // The hardware key is the owner's proof here: no passphrase.
  'unlock.begin': async ({ ctx }, { body }) =>
    beginUnlock(ctx, { name: body.name, origin: body.origin }),
  'unlock.finish': async ({ ctx }, { body, source }) =>
    finishUnlock(ctx, { challengeId: body.challengeId, result: body.result }, source),
};
