/**
 * The associated data of every sealed blob, in one place. A blob opens only in
 * the slot it was sealed for: a field moved to another entry, version or vault,
 * or a data key moved to another tier, fails authentication.
 */
import { slot } from '../../crypto/aead.js';
export const slots = {
    rootByOwner: (vaultId) => slot('root', vaultId, 'owner'),
    rootByRecovery: (vaultId) => slot('root', vaultId, 'recovery'),
    indexKey: (vaultId) => slot('index', vaultId),
    auditSecretKey: (vaultId) => slot('audit-sk', vaultId),
    tierKey: (vaultId, tier) => slot('tier', vaultId, tier),
    macKey: (vaultId) => slot('mac', vaultId),
    /** The state key (store/seal.ts): by the root key, and by each agent's or session's token key. */
    stateKey: (vaultId) => slot('state', vaultId),
    stateKeyByToken: (vaultId, id) => slot('state-by-token', vaultId, id),
    /** Schema 2: every slot sealed by or around a data key names its generation. */
    dataKey: (vaultId, entryId, tier, gen) => slot('dek2', vaultId, entryId, tier, gen),
    name: (vaultId, entryId, gen) => slot('name2', vaultId, entryId, gen),
    meta: (vaultId, entryId, gen) => slot('meta2', vaultId, entryId, gen),
    field: (vaultId, entryId, field, version, gen) => slot('field2', vaultId, entryId, field, version, gen),
    agentSecretKey: (vaultId, agentId) => slot('agent-sk', vaultId, agentId),
    sessionSecretKey: (vaultId, sessionId) => slot('session-sk', vaultId, sessionId),
};
/** Schema 1's slots, for the migration only. */
export const slotsV1 = {
    dataKey: (vaultId, entryId, tier) => slot('dek', vaultId, entryId, tier),
    name: (vaultId, entryId) => slot('name', vaultId, entryId),
    meta: (vaultId, entryId) => slot('meta', vaultId, entryId),
    field: (vaultId, entryId, field, version) => slot('field', vaultId, entryId, field, version),
};
