/**
 * A transaction over the vault's records (schema.ts), whichever engine holds
 * them: the embedded LMDB file (lmdb/, one host) or a PostgreSQL database
 * (pg/, several hosts). The host code is written once against these rows,
 * synchronously: a transaction is a function of a `Tx` over them, and
 * whatever it returns leaves the host only after its commit is durable.
 */
import { VaultError } from '../core/errors.js';
import { LOST_RATE_STATE, type RateState } from '../core/policy.js';
import {
  auditKeyMac,
  digestOf,
  sealedKey,
  stateHolds,
  stateMac,
  STATE_KEY,
  xorRowTag,
  xorRowTagOfSum,
  type StateRecord,
} from './seal.js';
import {
  K,
  recordSum,
  summed,
  SUM_PREFIX,
  SUMS_MARKER,
  type AgentRecord,
  type AuditAnchor,
  type AuditHead,
  type AuditRecord,
  type ChallengeRecord,
  type EntryRecord,
  type FieldRecord,
  type KeyRecord,
  type OwnerFailures,
  type RawRecord,
  type SessionRecord,
  type StoredAgent,
  type VaultHeader,
} from './schema.js';

/** A half-open key range [start, end); both optional; `limit` caps the count. */
export interface KeyRange {
  readonly start?: string;
  readonly end?: string;
  readonly limit?: number;
}

/**
 * The rows one transaction sees: a sorted map of string keys to records.
 * `get` throws when a record does not decode (damage), so `vault check` can
 * tell it from one that is absent (undefined).
 */
export interface Rows {
  get(key: string): unknown;
  getRange(range: KeyRange): Iterable<{ key: unknown; value: unknown }>;
  getKeys(range: KeyRange): Iterable<unknown>;
  put(key: string, value: unknown): void;
  remove(key: string): void;
  /**
   * The digest (seal.ts) of the sealed records as held, kept as they change,
   * where the engine keeps its rows in memory (PostgreSQL's copy); absent
   * where computing it would mean reading the whole store (LMDB).
   */
  sealedDigest?(key: Buffer): Buffer;
}

/**
 * Everything one transaction can read and write, over either engine's rows
 * (Rows above): the schema lives here once, whichever engine holds it.
 */
export class Tx {
  /** The state version this transaction writes, once it has written a sealed record. */
  private bumped: number | null = null;
  /** The state as this transaction last checked or wrote it (its MAC checked once). */
  private held: StateRecord | null = null;

  /**
   * `sealKey`: the state key (seal.ts) when the host holds it. `undos`: where
   * an engine that may run a transaction again (PostgreSQL's optimistic
   * commit, pg.ts) collects what to undo outside the records first.
   */
  constructor(
    private readonly db: Rows,
    private readonly sealKey: Buffer | null = null,
    private readonly undos: (() => void)[] | null = null,
  ) {}

  /**
   * `undo` puts back what this transaction changed outside the store (a
   * count in the host's memory) if the engine runs it again instead of
   * committing it (PostgreSQL: another host committed first). LMDB runs a
   * transaction once: never called there.
   */
  onUndo(undo: () => void): void {
    this.undos?.push(undo);
  }

  private set(key: string, value: unknown): void {
    // The checksum, computed once: the digest's tag of the new record is made from it too.
    const sum = summed(key) ? recordSum(value) : null;
    if (sealedKey(key)) this.touch(key, this.db.get(key), value === undefined ? null : sum);
    this.db.put(key, value);
    if (sum !== null) this.db.put(SUM_PREFIX + key, sum);
  }

  private del(key: string): void {
    if (sealedKey(key)) this.touch(key, this.db.get(key), null);
    this.db.remove(key);
    if (summed(key)) this.db.remove(SUM_PREFIX + key);
  }

  /** The sealed state as stored, or undefined (a vault not sealed yet). */
  state(): StateRecord | undefined {
    return this.db.get(STATE_KEY) as StateRecord | undefined;
  }

  /**
   * A host writes a sealed vault only with its state key (a write without it
   * would leave the state behind, and its audit records unkeyed).
   * @throws VaultError VLT-3046
   */
  requireStateKey(): void {
    if (this.sealKey === null && this.state() !== undefined) throw new VaultError('VLT-3046');
  }

  /**
   * The state a write extends, its MAC checked; undefined while the vault is
   * not sealed, or when this transaction has no key (whoever writes the store
   * without it, as a holder of the file or database may, leaves the state
   * behind: the digest no longer matches). @throws VaultError VLT-3045.
   */
  private heldState(read?: StateRecord): StateRecord | undefined {
    if (this.held !== null) return this.held;
    // `read`: the state as the caller just read it in this transaction (one read less a fill).
    const state = read ?? this.state();
    if (state === undefined || this.sealKey === null) return undefined;
    if (!stateHolds(this.sealKey, state)) {
      throw new VaultError('VLT-3045', 'Rollback detected: the sealed state is not the vault’s.');
    }
    this.held = state;
    return state;
  }

  /**
   * The record under `key` changes from `before` to the record whose checksum
   * is `afterSum` (null: removed): the digest follows.
   */
  private touch(key: string, before: unknown, afterSum: Buffer | null): void {
    const state = this.heldState();
    if (state === undefined || this.sealKey === null) return;
    const digest = Buffer.from(state.digest);
    if (before !== undefined) xorRowTag(digest, this.sealKey, key, before);
    if (afterSum !== null) xorRowTagOfSum(digest, this.sealKey, key, afterSum);
    this.bumped ??= state.version + 1;
    this.putState(this.sealKey, { version: this.bumped, digest, keyedFrom: state.keyedFrom });
  }

  private putState(key: Buffer, s: Omit<StateRecord, 'mac'>): void {
    const state = { ...s, mac: stateMac(key, s) };
    this.db.put(STATE_KEY, state);
    this.held = state;
  }

  /**
   * The version this transaction writes (the audit record names it), or
   * null while the vault is not sealed.
   */
  stateVersion(): number | null {
    const state = this.heldState();
    if (state === undefined || this.sealKey === null) return null;
    if (this.bumped === null) {
      // The version the record names is the state's from this transaction on.
      this.bumped = state.version + 1;
      this.putState(this.sealKey, { ...state, version: this.bumped });
    }
    return this.bumped;
  }

  /**
   * Seals the vault as it is (the owner's first unlock by this build): the
   * digest of every sealed record, audit records keyed from the next one.
   */
  sealAll(key: Buffer): void {
    const head = this.auditHead();
    const s = { version: 1, digest: digestOf(key, this.db.getRange({})), keyedFrom: 0 };
    this.putState(key, { ...s, keyedFrom: (head?.seq ?? 0) + 1 });
  }

  /**
   * A host's check before it serves on these records: the state is the
   * vault's, and (where the engine keeps the digest) the records are the
   * ones it seals. @throws VaultError VLT-3045 (rollback detected), VLT-3046.
   */
  assertSealed(): void {
    const state = this.state();
    if (state === undefined) {
      if (this.sealKey === null) return;
      throw new VaultError('VLT-3045', 'Rollback detected: the sealed state was removed.');
    }
    this.requireStateKey();
    this.heldState(state);
    const held = this.sealKey === null ? undefined : this.db.sealedDigest?.(this.sealKey);
    if (held !== undefined && !held.equals(state.digest)) {
      throw new VaultError(
        'VLT-3045',
        'Rollback detected: a record that decides access is not the one the vault sealed.',
      );
    }
  }

  /**
   * What is wrong with the sealed state, read whole (`vault check`, `audit
   * --verify`), or null: its MAC, the digest of the records, the version the
   * audit chain names, audit records not keyed.
   */
  stateProblem(key: Buffer): string | null {
    const state = this.state();
    const audit = this.audit();
    const named = audit.filter((r) => typeof r.state === 'number');
    if (state === undefined) {
      return named.length > 0 ? 'rollback detected: the sealed state was removed' : null;
    }
    if (!stateHolds(key, state)) return 'rollback detected: the sealed state is not the vault’s';
    for (const r of audit) {
      if (r.seq < state.keyedFrom) continue;
      if (!Buffer.isBuffer(r.mac) || !auditKeyMac(key, r.seq, r.hash).equals(r.mac)) {
        return `audit record ${r.seq} was not written by a vault host (not keyed)`;
      }
    }
    if (!digestOf(key, this.db.getRange({})).equals(state.digest)) {
      return 'rollback detected: records that decide access are not the ones the vault sealed';
    }
    const last = named.at(-1)?.state ?? 0;
    if (last > state.version) {
      return `rollback detected: the audit chain vouches for version ${last}, the state is at ${state.version}`;
    }
    return null;
  }

  /**
   * Records that the host closed the store cleanly at `at`. Written twice in
   * a row (two transactions of the same content), so both of LMDB's meta
   * pages point at the same data: a damaged transaction id that made LMDB
   * pick the older meta page then loses nothing, where it would otherwise
   * roll the store back one transaction without a trace.
   */
  settle(at: number): void {
    this.set('settled', { at });
  }

  /** Whether every record has its checksum; false for a vault from before them. */
  sumsKept(): boolean {
    return this.db.get(SUMS_MARKER) === 1;
  }

  /**
   * Gives every record a checksum, once, for a vault from before them. A store
   * that has some checksums but lost its marker is damaged: left as it is, so
   * `vault check` reports it instead of blessing the damage.
   */
  addMissingSums(): boolean {
    if (this.sumsKept()) return false;
    for (const _ of this.db.getKeys({ start: SUM_PREFIX, end: 'sum0', limit: 1 })) return false;
    for (const { key, value } of this.db.getRange({})) {
      if (typeof key === 'string' && summed(key)) {
        this.db.put(SUM_PREFIX + key, recordSum(value));
      }
    }
    this.set(SUMS_MARKER, 1);
    return true;
  }

  /**
   * Every record, each read on its own so one that does not decode does not
   * hide the rest; with whether its checksum holds. For `vault check`.
   */
  rawRecords(): RawRecord[] {
    const out: RawRecord[] = [];
    const sums = new Map<string, unknown>();
    const keys: string[] = [];
    let previous = '';
    const disorder: string[] = [];
    for (const k of this.db.getKeys({})) {
      const key = typeof k === 'string' ? k : `<non-text key ${JSON.stringify(k)}>`;
      // Keys come in order unless a page is damaged; a range read would then miss records.
      if (typeof k === 'string') {
        if (k <= previous) disorder.push(k);
        previous = k;
      }
      if (key.startsWith(SUM_PREFIX)) {
        try {
          sums.set(key.slice(SUM_PREFIX.length), this.db.get(k as string));
        } catch {
          sums.set(key.slice(SUM_PREFIX.length), null);
        }
      } else keys.push(key);
    }
    // Kept once the marker is there, or any checksum is (a lost marker is damage, not a licence).
    const kept = this.sumsKept() || sums.size > 0;
    for (const key of keys) {
      let value: unknown;
      let error: string | undefined;
      try {
        value = this.db.get(key);
      } catch (err) {
        error = err instanceof Error ? err.name : 'unreadable';
      }
      let sumOk: boolean | null = null;
      if (summed(key) && kept) {
        const sum = sums.get(key);
        sumOk = error === undefined && Buffer.isBuffer(sum) && recordSum(value).equals(sum);
      }
      sums.delete(key);
      out.push({ key, value, sumOk, ...(error === undefined ? {} : { error }) });
    }
    for (const key of disorder) {
      out.push({ key, value: undefined, sumOk: null, error: 'out of order' });
    }
    // A checksum whose record is gone: a record lost (or its key damaged).
    for (const key of sums.keys())
      out.push({ key: SUM_PREFIX + key, value: undefined, sumOk: false, error: 'orphan' });
    return out;
  }

  /** Every record as stored, checksums included, in key order: a copy between engines. */
  allRecords(): { key: string; value: unknown }[] {
    return [...this.db.getRange({})].map((r) => ({ key: String(r.key), value: r.value }));
  }

  /**
   * Makes the store hold exactly `records` (from allRecords of another store):
   * `vault migrate`, a PostgreSQL backup and restore. Checksums come with them.
   */
  replaceAll(records: readonly { key: string; value: unknown }[]): void {
    const keep = new Set(records.map((r) => r.key));
    for (const k of [...this.db.getKeys({})]) {
      if (!keep.has(String(k))) this.db.remove(String(k));
    }
    for (const r of records) this.db.put(r.key, r.value);
  }

  header(): VaultHeader | null {
    return (this.db.get(K.header) as VaultHeader | undefined) ?? null;
  }
  putHeader(h: VaultHeader): void {
    this.set(K.header, h);
  }

  entry(id: string): EntryRecord | null {
    return (this.db.get(K.entry(id)) as EntryRecord | undefined) ?? null;
  }
  putEntry(e: EntryRecord): void {
    this.set(K.entry(e.id), e);
  }
  entries(): EntryRecord[] {
    return [...this.db.getRange({ start: 'entry/', end: 'entry0' })].map(
      (r) => r.value as EntryRecord,
    );
  }
  removeEntry(id: string): void {
    this.del(K.entry(id));
    for (const { key } of this.db.getRange({ start: K.fieldPrefix(id), end: `field/${id}0` })) {
      this.del(String(key));
    }
  }

  field(entryId: string, fieldKey: string): FieldRecord | null {
    return (this.db.get(K.field(entryId, fieldKey)) as FieldRecord | undefined) ?? null;
  }
  putField(entryId: string, fieldKey: string, f: FieldRecord): void {
    this.set(K.field(entryId, fieldKey), f);
  }
  /** Every field record of an entry with its store key (for checks and tests of what the store holds). */
  fieldRecords(entryId: string): { key: string; record: FieldRecord }[] {
    return [...this.db.getRange({ start: K.fieldPrefix(entryId), end: `field/${entryId}0` })].map(
      (r) => ({
        key: String(r.key).slice(K.fieldPrefix(entryId).length),
        record: r.value as FieldRecord,
      }),
    );
  }
  removeField(entryId: string, fieldKey: string): void {
    this.del(K.field(entryId, fieldKey));
  }

  entryIdByName(hash: string): string | null {
    return (this.db.get(K.name(hash)) as string | undefined) ?? null;
  }
  /** Every row of the owner's name index. */
  nameRows(): { hash: string; entryId: string }[] {
    return [...this.db.getRange({ start: 'name/', end: 'name0' })].map((r) => ({
      hash: String(r.key).slice('name/'.length),
      entryId: r.value as string,
    }));
  }
  putName(hash: string, entryId: string): void {
    this.set(K.name(hash), entryId);
  }
  removeName(hash: string): void {
    this.del(K.name(hash));
  }

  /** The agent record with its rate state (see AgentRecord.rate). */
  agent(id: string): AgentRecord | null {
    const stored = this.db.get(K.agent(id)) as StoredAgent | undefined;
    return stored === undefined ? null : this.withRate(id, stored);
  }
  /**
   * Writes the agent record and its rate record, the rate taken out of the
   * first. A revoked agent keeps no rate state: its token opens nothing.
   */
  putAgent(a: AgentRecord): void {
    const { rate, ...stored } = a;
    this.set(K.agent(a.id), stored);
    if (a.revoked === null) this.set(K.rate(a.id), rate);
    else this.del(K.rate(a.id));
  }
  /**
   * Writes an agent's rate state alone (a charge, a violation, a lock): its
   * own small record, not the agent record. An agent record of an older
   * vault that still holds a rate state loses it here, once, so a rate
   * record lost later reads as lost (LOST_RATE_STATE), never as that old state.
   */
  putRate(agentId: string, rate: RateState): void {
    this.set(K.rate(agentId), rate);
    const stored = this.db.get(K.agent(agentId)) as StoredAgent | undefined;
    if (stored?.rate !== undefined) {
      this.set(
        K.agent(agentId),
        Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'rate')),
      );
    }
  }
  agents(): AgentRecord[] {
    return [...this.db.getRange({ start: 'agent/', end: 'agent0' })].map((r) =>
      this.withRate(String(r.key).slice('agent/'.length), r.value as StoredAgent),
    );
  }
  /** The rate record, else (an older vault) the agent record's own, else lost. */
  private withRate(id: string, stored: StoredAgent): AgentRecord {
    const rate = this.db.get(K.rate(id)) as RateState | undefined;
    return { ...stored, rate: rate ?? stored.rate ?? LOST_RATE_STATE };
  }
  agentIdByName(name: string): string | null {
    return (this.db.get(K.agentName(name)) as string | undefined) ?? null;
  }
  putAgentName(name: string, id: string): void {
    this.set(K.agentName(name), id);
  }
  removeAgentName(name: string): void {
    this.del(K.agentName(name));
  }

  session(id: string): SessionRecord | null {
    return (this.db.get(K.session(id)) as SessionRecord | undefined) ?? null;
  }
  putSession(r: SessionRecord): void {
    this.set(K.session(r.id), r);
  }
  sessions(): SessionRecord[] {
    return [...this.db.getRange({ start: 'session/', end: 'session0' })].map(
      (r) => r.value as SessionRecord,
    );
  }
  removeSession(id: string): void {
    this.del(K.session(id));
  }

  keys(): KeyRecord[] {
    return [...this.db.getRange({ start: 'key/', end: 'key0' })].map((r) => r.value as KeyRecord);
  }
  key(id: string): KeyRecord | null {
    return (this.db.get(K.key(id)) as KeyRecord | undefined) ?? null;
  }
  putKey(k: KeyRecord): void {
    this.set(K.key(k.id), k);
  }
  removeKey(id: string): void {
    this.del(K.key(id));
  }

  challenges(): ChallengeRecord[] {
    return [...this.db.getRange({ start: 'challenge/', end: 'challenge0' })].map(
      (r) => r.value as ChallengeRecord,
    );
  }
  challenge(id: string): ChallengeRecord | null {
    return (this.db.get(K.challenge(id)) as ChallengeRecord | undefined) ?? null;
  }
  putChallenge(c: ChallengeRecord): void {
    this.set(K.challenge(c.id), c);
  }
  removeChallenge(id: string): void {
    this.del(K.challenge(id));
  }

  ownerFailures(): OwnerFailures {
    return (this.db.get(K.ownerFailures) as OwnerFailures | undefined) ?? { count: 0, last: 0 };
  }
  putOwnerFailures(f: OwnerFailures): void {
    this.set(K.ownerFailures, f);
  }

  /** Entries an ended session held, to rotate at the owner's next command (the host has no owner key). */
  pendingRotation(): string[] {
    return (this.db.get(K.rotatePending) as string[] | undefined) ?? [];
  }
  putPendingRotation(ids: readonly string[]): void {
    if (ids.length === 0) this.del(K.rotatePending);
    else this.set(K.rotatePending, [...ids]);
  }

  auditAnchor(): AuditAnchor | null {
    return (this.db.get(K.auditAnchor) as AuditAnchor | undefined) ?? null;
  }
  putAuditAnchor(a: AuditAnchor): void {
    this.set(K.auditAnchor, a);
  }

  auditHead(): AuditHead | null {
    return (this.db.get(K.auditHead) as AuditHead | undefined) ?? null;
  }
  appendAudit(r: AuditRecord): void {
    // Audit records carry their own hash chain; the head carries a checksum.
    // Keyed under the state key when sealed: a record appended by SQL is not.
    const keyed =
      this.sealKey !== null && r.state !== undefined
        ? { ...r, mac: auditKeyMac(this.sealKey, r.seq, r.hash) }
        : r;
    this.set(K.audit(r.seq), keyed);
    this.set(K.auditHead, { seq: r.seq, hash: r.hash });
  }
  /** The last record moved to an archive (`audit archive`): the chain in the store starts after it. */
  auditBase(): AuditHead | null {
    return (this.db.get(K.auditBase) as AuditHead | undefined) ?? null;
  }
  /** Removes the records up to `base.seq` (archived) and says where the chain now starts. */
  pruneAudit(base: AuditHead): void {
    for (const key of [...this.db.getKeys({ start: 'audit/', end: K.audit(base.seq + 1) })]) {
      this.db.remove(String(key));
    }
    this.set(K.auditBase, { seq: base.seq, hash: base.hash });
  }
  /** Rewrites one record in place: the schema migration's re-chaining only. */
  putAuditRecord(r: AuditRecord): void {
    this.db.put(K.audit(r.seq), r);
  }
  putAuditHeadOnly(h: AuditHead): void {
    this.set(K.auditHead, h);
  }
  audit(fromSeq = 1): AuditRecord[] {
    return [...this.db.getRange({ start: K.audit(fromSeq), end: 'audit0' })].map(
      (r) => r.value as AuditRecord,
    );
  }
}
