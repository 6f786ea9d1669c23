/**
 * Appends audit events as hash-chained records and reads them back for the
 * owner. Entry names are sealed to the owner's audit key: the host can write a
 * record it cannot read back, and the store file shows no name.
 */
import type { AuditEvent, AuditView } from '../core/audit.js';
import { openSealed, sealTo, type KeyPair } from '../crypto/box.js';
import { equal, keyedHash } from '../crypto/hash.js';
import type { AuditRecord, Tx, VaultHeader } from '../store/store.js';

const GENESIS: Buffer = Buffer.alloc(32);

function recordHash(r: Omit<AuditRecord, 'hash'>): Buffer {
  return keyedHash(
    null,
    'audit-v1',
    r.seq,
    r.at,
    r.action,
    r.actor,
    r.source,
    r.outcome,
    r.entryId ?? '',
    r.sealed ?? Buffer.alloc(0),
    r.host ?? '',
    r.subject ?? '',
    r.prev,
  );
}

/** Appends one event inside the caller's write transaction. */
export function appendAudit(tx: Tx, header: VaultHeader, e: AuditEvent): AuditRecord {
  const head = tx.auditHead();
  const sealed =
    e.entry === null && e.field === null
      ? null
      : sealTo(
          header.auditPublicKey,
          Buffer.from(JSON.stringify({ entry: e.entry, field: e.field })),
        );
  const base = {
    seq: (head?.seq ?? 0) + 1,
    at: e.at,
    action: e.action,
    actor: e.actor,
    source: e.source,
    outcome: e.outcome,
    entryId: e.entryId,
    sealed,
    host: e.host,
    subject: e.subject,
    prev: head?.hash ?? GENESIS,
  };
  const record: AuditRecord = { ...base, hash: recordHash(base) };
  tx.appendAudit(record);
  return record;
}

/** The records with their names opened by the owner's audit key. */
export function viewAudit(records: readonly AuditRecord[], keys: KeyPair): AuditView[] {
  return records.map((r) => {
    let entry: string | null = null;
    let field: string | null = null;
    if (r.sealed !== null) {
      const opened = openSealed(keys, r.sealed);
      if (opened !== null) {
        const parsed = JSON.parse(opened.toString('utf8')) as {
          entry: string | null;
          field: string | null;
        };
        entry = parsed.entry;
        field = parsed.field;
      }
    }
    return {
      seq: r.seq,
      at: r.at,
      action: r.action,
      actor: r.actor,
      source: r.source,
      outcome: r.outcome,
      entry,
      field,
      host: r.host,
      subject: r.subject,
    };
  });
}

/** Whether a record links to `prev` and hashes to its hash; false for one not shaped like a record. */
function linkHolds(r: AuditRecord, prev: Buffer): boolean {
  try {
    return equal(r.prev, prev) && equal(r.hash, recordHash(r));
  } catch {
    return false;
  }
}

/** Where a chain starts: the genesis, or the last record moved to an archive (`audit archive`). */
export interface ChainStart {
  readonly seq: number;
  readonly hash: Buffer;
}

/**
 * The sequence number of the first record whose chain link does not hold, or
 * null when the whole chain verifies: from `start` (the record before the
 * first one, archived) or from the genesis.
 */
export function brokenLink(
  records: readonly AuditRecord[],
  headHash: Buffer | null,
  start: ChainStart | null = null,
): number | null {
  let prev: Buffer = start?.hash ?? GENESIS;
  let seq = start?.seq ?? 0;
  for (const r of records) {
    seq++;
    if (r.seq !== seq || !linkHolds(r, prev)) return seq;
    prev = r.hash;
  }
  if (headHash !== null && !equal(prev, headHash)) return seq + 1;
  return null;
}
