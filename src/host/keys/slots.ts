/**
 * The associated data of every sealed blob, in one place. A blob opens only in
 * the slot it was sealed for: a field moved to another entry, version or vault,
 * or a data key moved to another tier, fails authentication.
 */
import { slot } from '../../crypto/aead.js';

export const slots = {
  rootByOwner: (vaultId: Buffer) => slot('root', vaultId, 'owner'),
  rootByRecovery: (vaultId: Buffer) => slot('root', vaultId, 'recovery'),
  indexKey: (vaultId: Buffer) => slot('index', vaultId),
  auditSecretKey: (vaultId: Buffer) => slot('audit-sk', vaultId),
  tierKey: (vaultId: Buffer, tier: string) => slot('tier', vaultId, tier),
  macKey: (vaultId: Buffer) => slot('mac', vaultId),
  /** The state key (store/seal.ts): by the root key, and by each agent's or session's token key. */
  stateKey: (vaultId: Buffer) => slot('state', vaultId),
  stateKeyByToken: (vaultId: Buffer, id: string) => slot('state-by-token', vaultId, id),
  /** Schema 2: every slot sealed by or around a data key names its generation. */
  dataKey: (vaultId: Buffer, entryId: string, tier: string, gen: number) =>
    slot('dek2', vaultId, entryId, tier, gen),
  name: (vaultId: Buffer, entryId: string, gen: number) => slot('name2', vaultId, entryId, gen),
  meta: (vaultId: Buffer, entryId: string, gen: number) => slot('meta2', vaultId, entryId, gen),
  field: (vaultId: Buffer, entryId: string, field: string, version: number, gen: number) =>
    slot('field2', vaultId, entryId, field, version, gen),
  agentSecretKey: (vaultId: Buffer, agentId: string) => slot('agent-sk', vaultId, agentId),
  sessionSecretKey: (vaultId: Buffer, sessionId: string) => slot('session-sk', vaultId, sessionId),
};

/** Schema 1's slots, for the migration only. */
export const slotsV1 = {
  dataKey: (vaultId: Buffer, entryId: string, tier: string) => slot('dek', vaultId, entryId, tier),
  name: (vaultId: Buffer, entryId: string) => slot('name', vaultId, entryId),
  meta: (vaultId: Buffer, entryId: string) => slot('meta', vaultId, entryId),
  field: (vaultId: Buffer, entryId: string, field: string, version: number) =>
    slot('field', vaultId, entryId, field, version),
};
