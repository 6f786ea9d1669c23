/**
 * The associated data of every sealed blob, in one place. A blob opens only in
 * the slot it was sealed for: a field moved to another entry, version or vault,
 * or a data key moved to another tier, fails authentication.
 */
import { slot } from '../crypto/aead.js';

export const slots = {
  rootByOwner: (vaultId: Buffer) => slot('root', vaultId, 'owner'),
  rootByRecovery: (vaultId: Buffer) => slot('root', vaultId, 'recovery'),
  indexKey: (vaultId: Buffer) => slot('index', vaultId),
  auditSecretKey: (vaultId: Buffer) => slot('audit-sk', vaultId),
  tierKey: (vaultId: Buffer, tier: string) => slot('tier', vaultId, tier),
  dataKey: (vaultId: Buffer, entryId: string, tier: string) => slot('dek', vaultId, entryId, tier),
  name: (vaultId: Buffer, entryId: string) => slot('name', vaultId, entryId),
  meta: (vaultId: Buffer, entryId: string) => slot('meta', vaultId, entryId),
  field: (vaultId: Buffer, entryId: string, field: string, version: number) =>
    slot('field', vaultId, entryId, field, version),
  agentSecretKey: (vaultId: Buffer, agentId: string) => slot('agent-sk', vaultId, agentId),
  sessionSecretKey: (vaultId: Buffer, sessionId: string) => slot('session-sk', vaultId, sessionId),
};
