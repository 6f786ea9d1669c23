/** The host itself: its status, and stopping it. */
import { VaultError } from '../../core/errors.js';
import { owner } from './op.js';
/**
 * Whether a vault exists, for `status`. A store the host cannot open for
 * writing (read-only file system, permission error) is still a vault: status
 * must answer then, or `daemon stop`, which asks it first, could not stop the host.
 */
function vaultHere(ctx) {
    try {
        return ctx.hasVault();
    }
    catch (err) {
        if (err instanceof VaultError && (err.code === 'VLT-3004' || err.code === 'VLT-3034')) {
            return true;
        }
        throw err;
    }
}
const ownerStops = owner(() => null);
export const hostOps = {
    status: async ({ ctx, startedAt, mode }) => ({
        pid: process.pid,
        vaultDir: ctx.dir,
        startedAt,
        vault: vaultHere(ctx),
        mode,
    }),
    // The owner's proof from any caller: an agent that could stop the host could
    // put its own process on the socket and take the owner's next passphrase.
    shutdown: async (env, req) => {
        // A host with no vault yet, or with a store it cannot open, guards nothing
        // and cannot check a passphrase: it stops for anyone (docs/threat-model.md).
        let guards;
        try {
            guards = env.ctx.hasVault();
        }
        catch {
            guards = false;
        }
        if (guards) {
            try {
                await ownerStops(env, req);
            }
            catch (err) {
                // A team vault whose database does not answer: the passphrase cannot be
                // checked (the header is there), and the host guards nothing meanwhile
                // (every request is refused), as a host with a store it cannot open.
                if (!(err instanceof VaultError && err.code === 'VLT-3040'))
                    throw err;
                env.log(`stopping without the owner's proof: the database does not answer`);
            }
        }
        setImmediate(env.stop);
        return {};
    },
};
