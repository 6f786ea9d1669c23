/**
 * Hardware keys: enrolling and removing them, and lifting a lockdown with one.
 * Every one is an owner operation: the passphrase first, then the key (an
 * unlock started by anyone on the socket was an unlock the agent could start).
 */
import { beginEnrol, beginUnlock, finishEnrol, finishUnlock, listKeys, removeKey, vouchEnrol, } from '../owner/hardware-keys.js';
import { unlockWithRecovery } from '../owner/keys.js';
import { owner } from './op.js';
const ownerProves = owner(() => null);
/** A new key lifts locks from now on: its enrolment is proved by the passphrase itself. */
const ownerEnrols = owner(() => null, {
    releases: 'Enrolling a hardware key',
});
export const keyOps = {
    'key.begin': async (env, req) => {
        const { ctx } = env;
        await ownerEnrols(env, req);
        const { body } = req;
        const recoveryKey = req.secrets.get('recoveryKey', body.recoveryKey);
        if (recoveryKey !== undefined) {
            // Stands in for an enrolled key's vouch: checked (throttled, audited) like any recovery.
            const s = await unlockWithRecovery(ctx, recoveryKey, req.source);
            s.wipe();
            recoveryKey.wipe();
        }
        return beginEnrol(ctx, {
            name: body.name,
            origin: body.origin,
            recovery: recoveryKey !== undefined,
        });
    },
    // The owner's proof first; the assertion or enrolment is checked and recorded after it.
    'key.vouch': async (env, req) => {
        await ownerProves(env, req);
        const { challengeId, result } = req.body;
        return vouchEnrol(env.ctx, { challengeId, result }, req.source);
    },
    'key.finish': async (env, req) => {
        await ownerEnrols(env, req);
        const { challengeId, result } = req.body;
        return finishEnrol(env.ctx, { challengeId, result }, req.source);
    },
    'key.ls': owner(async ({ ctx }) => ({ keys: listKeys(ctx) })),
    // One key fewer to lift a lock with (the last one: none): asked again.
    'key.rm': owner(async ({ ctx }, { body, source }) => {
        removeKey(ctx, body.name, source);
        return {};
    }, { releases: 'Removing a hardware key' }),
    'unlock.begin': owner(async ({ ctx }, { body }) => beginUnlock(ctx, { name: body.name, origin: body.origin })),
    'unlock.finish': async (env, req) => {
        await ownerProves(env, req);
        const { challengeId, result } = req.body;
        return finishUnlock(env.ctx, { challengeId, result }, req.source);
    },
};
