/**
 * A transaction over the vault's records (schema.ts), whichever engine holds
 * them: the embedded LMDB file (lmdb/, one host) or a PostgreSQL database
 * (pg/, several hosts). The host code is written once against these rows,
 * synchronously: a transaction is a function of a `Tx` over them, and
 * whatever it returns leaves the host only after its commit is durable.
 */
import { VaultError } from '../core/errors.js';
import { LOST_RATE_STATE } from '../core/policy.js';
import { auditKeyMac, digestOf, rowTag, sealedKey, stateHolds, stateMac, STATE_KEY, xorInto, } from './seal.js';
import { K, recordSum, summed, SUM_PREFIX, SUMS_MARKER, } from './schema.js';
/**
 * Everything one transaction can read and write, over either engine's rows
 * (Rows above): the schema lives here once, whichever engine holds it.
 */
export class Tx {
    db;
    sealKey;
    undos;
    /** The state version this transaction writes, once it has written a sealed record. */
    bumped = null;
    /** The state as this transaction last checked or wrote it (its MAC checked once). */
    held = null;
    /**
     * `sealKey`: the state key (seal.ts) when the host holds it. `undos`: where
     * an engine that may run a transaction again (PostgreSQL's optimistic
     * commit, pg.ts) collects what to undo outside the records first.
     */
    constructor(db, sealKey = null, undos = null) {
        this.db = db;
        this.sealKey = sealKey;
        this.undos = undos;
    }
    /**
     * `undo` puts back what this transaction changed outside the store (a
     * count in the host's memory) if the engine runs it again instead of
     * committing it (PostgreSQL: another host committed first). LMDB runs a
     * transaction once: never called there.
     */
    onUndo(undo) {
        this.undos?.push(undo);
    }
    set(key, value) {
        if (sealedKey(key))
            this.touch(key, this.db.get(key), value);
        this.db.put(key, value);
        if (summed(key))
            this.db.put(SUM_PREFIX + key, recordSum(value));
    }
    del(key) {
        if (sealedKey(key))
            this.touch(key, this.db.get(key), undefined);
        this.db.remove(key);
        if (summed(key))
            this.db.remove(SUM_PREFIX + key);
    }
    /** The sealed state as stored, or undefined (a vault not sealed yet). */
    state() {
        return this.db.get(STATE_KEY);
    }
    /**
     * A host writes a sealed vault only with its state key (a write without it
     * would leave the state behind, and its audit records unkeyed).
     * @throws VaultError VLT-3046
     */
    requireStateKey() {
        if (this.sealKey === null && this.state() !== undefined)
            throw new VaultError('VLT-3046');
    }
    /**
     * The state a write extends, its MAC checked; undefined while the vault is
     * not sealed, or when this transaction has no key (whoever writes the store
     * without it, as a holder of the file or database may, leaves the state
     * behind: the digest no longer matches). @throws VaultError VLT-3045.
     */
    heldState() {
        if (this.held !== null)
            return this.held;
        const state = this.state();
        if (state === undefined || this.sealKey === null)
            return undefined;
        if (!stateHolds(this.sealKey, state)) {
            throw new VaultError('VLT-3045', 'Rollback detected: the sealed state is not the vault’s.');
        }
        this.held = state;
        return state;
    }
    /** The record under `key` changes from `before` to `after`: the digest follows. */
    touch(key, before, after) {
        const state = this.heldState();
        if (state === undefined || this.sealKey === null)
            return;
        const digest = Buffer.from(state.digest);
        if (before !== undefined)
            xorInto(digest, rowTag(this.sealKey, key, before));
        if (after !== undefined)
            xorInto(digest, rowTag(this.sealKey, key, after));
        this.bumped ??= state.version + 1;
        this.putState(this.sealKey, { version: this.bumped, digest, keyedFrom: state.keyedFrom });
    }
    putState(key, s) {
        const state = { ...s, mac: stateMac(key, s) };
        this.db.put(STATE_KEY, state);
        this.held = state;
    }
    /**
     * The version this transaction writes (the audit record names it), or
     * null while the vault is not sealed.
     */
    stateVersion() {
        const state = this.heldState();
        if (state === undefined || this.sealKey === null)
            return null;
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
    sealAll(key) {
        const head = this.auditHead();
        const s = { version: 1, digest: digestOf(key, this.db.getRange({})), keyedFrom: 0 };
        this.putState(key, { ...s, keyedFrom: (head?.seq ?? 0) + 1 });
    }
    /**
     * A host's check before it serves on these records: the state is the
     * vault's, and (where the engine keeps the digest) the records are the
     * ones it seals. @throws VaultError VLT-3045 (rollback detected), VLT-3046.
     */
    assertSealed() {
        const state = this.state();
        if (state === undefined) {
            if (this.sealKey === null)
                return;
            throw new VaultError('VLT-3045', 'Rollback detected: the sealed state was removed.');
        }
        this.requireStateKey();
        this.heldState();
        const held = this.sealKey === null ? undefined : this.db.sealedDigest?.(this.sealKey);
        if (held !== undefined && !held.equals(state.digest)) {
            throw new VaultError('VLT-3045', 'Rollback detected: a record that decides access is not the one the vault sealed.');
        }
    }
    /**
     * What is wrong with the sealed state, read whole (`vault check`, `audit
     * --verify`), or null: its MAC, the digest of the records, the version the
     * audit chain names, audit records not keyed.
     */
    stateProblem(key) {
        const state = this.state();
        const audit = this.audit();
        const named = audit.filter((r) => typeof r.state === 'number');
        if (state === undefined) {
            return named.length > 0 ? 'rollback detected: the sealed state was removed' : null;
        }
        if (!stateHolds(key, state))
            return 'rollback detected: the sealed state is not the vault’s';
        for (const r of audit) {
            if (r.seq < state.keyedFrom)
                continue;
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
    settle(at) {
        this.set('settled', { at });
    }
    /** Whether every record has its checksum; false for a vault from before them. */
    sumsKept() {
        return this.db.get(SUMS_MARKER) === 1;
    }
    /**
     * Gives every record a checksum, once, for a vault from before them. A store
     * that has some checksums but lost its marker is damaged: left as it is, so
     * `vault check` reports it instead of blessing the damage.
     */
    addMissingSums() {
        if (this.sumsKept())
            return false;
        for (const _ of this.db.getKeys({ start: SUM_PREFIX, end: 'sum0', limit: 1 }))
            return false;
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
    rawRecords() {
        const out = [];
        const sums = new Map();
        const keys = [];
        let previous = '';
        const disorder = [];
        for (const k of this.db.getKeys({})) {
            const key = typeof k === 'string' ? k : `<non-text key ${JSON.stringify(k)}>`;
            // Keys come in order unless a page is damaged; a range read would then miss records.
            if (typeof k === 'string') {
                if (k <= previous)
                    disorder.push(k);
                previous = k;
            }
            if (key.startsWith(SUM_PREFIX)) {
                try {
                    sums.set(key.slice(SUM_PREFIX.length), this.db.get(k));
                }
                catch {
                    sums.set(key.slice(SUM_PREFIX.length), null);
                }
            }
            else
                keys.push(key);
        }
        // Kept once the marker is there, or any checksum is (a lost marker is damage, not a licence).
        const kept = this.sumsKept() || sums.size > 0;
        for (const key of keys) {
            let value;
            let error;
            try {
                value = this.db.get(key);
            }
            catch (err) {
                error = err instanceof Error ? err.name : 'unreadable';
            }
            let sumOk = null;
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
    allRecords() {
        return [...this.db.getRange({})].map((r) => ({ key: String(r.key), value: r.value }));
    }
    /**
     * Makes the store hold exactly `records` (from allRecords of another store):
     * `vault migrate`, a PostgreSQL backup and restore. Checksums come with them.
     */
    replaceAll(records) {
        const keep = new Set(records.map((r) => r.key));
        for (const k of [...this.db.getKeys({})]) {
            if (!keep.has(String(k)))
                this.db.remove(String(k));
        }
        for (const r of records)
            this.db.put(r.key, r.value);
    }
    header() {
        return this.db.get(K.header) ?? null;
    }
    putHeader(h) {
        this.set(K.header, h);
    }
    entry(id) {
        return this.db.get(K.entry(id)) ?? null;
    }
    putEntry(e) {
        this.set(K.entry(e.id), e);
    }
    entries() {
        return [...this.db.getRange({ start: 'entry/', end: 'entry0' })].map((r) => r.value);
    }
    removeEntry(id) {
        this.del(K.entry(id));
        for (const { key } of this.db.getRange({ start: K.fieldPrefix(id), end: `field/${id}0` })) {
            this.del(String(key));
        }
    }
    field(entryId, fieldKey) {
        return this.db.get(K.field(entryId, fieldKey)) ?? null;
    }
    putField(entryId, fieldKey, f) {
        this.set(K.field(entryId, fieldKey), f);
    }
    /** Every field record of an entry with its store key (for checks and tests of what the store holds). */
    fieldRecords(entryId) {
        return [...this.db.getRange({ start: K.fieldPrefix(entryId), end: `field/${entryId}0` })].map((r) => ({
            key: String(r.key).slice(K.fieldPrefix(entryId).length),
            record: r.value,
        }));
    }
    removeField(entryId, fieldKey) {
        this.del(K.field(entryId, fieldKey));
    }
    entryIdByName(hash) {
        return this.db.get(K.name(hash)) ?? null;
    }
    /** Every row of the owner's name index. */
    nameRows() {
        return [...this.db.getRange({ start: 'name/', end: 'name0' })].map((r) => ({
            hash: String(r.key).slice('name/'.length),
            entryId: r.value,
        }));
    }
    putName(hash, entryId) {
        this.set(K.name(hash), entryId);
    }
    removeName(hash) {
        this.del(K.name(hash));
    }
    /** The agent record with its rate state (see AgentRecord.rate). */
    agent(id) {
        const stored = this.db.get(K.agent(id));
        return stored === undefined ? null : this.withRate(id, stored);
    }
    /**
     * Writes the agent record and its rate record, the rate taken out of the
     * first. A revoked agent keeps no rate state: its token opens nothing.
     */
    putAgent(a) {
        const { rate, ...stored } = a;
        this.set(K.agent(a.id), stored);
        if (a.revoked === null)
            this.set(K.rate(a.id), rate);
        else
            this.del(K.rate(a.id));
    }
    /**
     * Writes an agent's rate state alone (a charge, a violation, a lock): its
     * own small record, not the agent record. An agent record of an older
     * vault that still holds a rate state loses it here, once, so a rate
     * record lost later reads as lost (LOST_RATE_STATE), never as that old state.
     */
    putRate(agentId, rate) {
        this.set(K.rate(agentId), rate);
        const stored = this.db.get(K.agent(agentId));
        if (stored?.rate !== undefined) {
            this.set(K.agent(agentId), Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'rate')));
        }
    }
    agents() {
        return [...this.db.getRange({ start: 'agent/', end: 'agent0' })].map((r) => this.withRate(String(r.key).slice('agent/'.length), r.value));
    }
    /** The rate record, else (an older vault) the agent record's own, else lost. */
    withRate(id, stored) {
        const rate = this.db.get(K.rate(id));
        return { ...stored, rate: rate ?? stored.rate ?? LOST_RATE_STATE };
    }
    agentIdByName(name) {
        return this.db.get(K.agentName(name)) ?? null;
    }
    putAgentName(name, id) {
        this.set(K.agentName(name), id);
    }
    removeAgentName(name) {
        this.del(K.agentName(name));
    }
    session(id) {
        return this.db.get(K.session(id)) ?? null;
    }
    putSession(r) {
        this.set(K.session(r.id), r);
    }
    sessions() {
        return [...this.db.getRange({ start: 'session/', end: 'session0' })].map((r) => r.value);
    }
    removeSession(id) {
        this.del(K.session(id));
    }
    keys() {
        return [...this.db.getRange({ start: 'key/', end: 'key0' })].map((r) => r.value);
    }
    key(id) {
        return this.db.get(K.key(id)) ?? null;
    }
    putKey(k) {
        this.set(K.key(k.id), k);
    }
    removeKey(id) {
        this.del(K.key(id));
    }
    challenges() {
        return [...this.db.getRange({ start: 'challenge/', end: 'challenge0' })].map((r) => r.value);
    }
    challenge(id) {
        return this.db.get(K.challenge(id)) ?? null;
    }
    putChallenge(c) {
        this.set(K.challenge(c.id), c);
    }
    removeChallenge(id) {
        this.del(K.challenge(id));
    }
    ownerFailures() {
        return this.db.get(K.ownerFailures) ?? { count: 0, last: 0 };
    }
    putOwnerFailures(f) {
        this.set(K.ownerFailures, f);
    }
    /** Entries an ended session held, to rotate at the owner's next command (the host has no owner key). */
    pendingRotation() {
        return this.db.get(K.rotatePending) ?? [];
    }
    putPendingRotation(ids) {
        if (ids.length === 0)
            this.del(K.rotatePending);
        else
            this.set(K.rotatePending, [...ids]);
    }
    auditAnchor() {
        return this.db.get(K.auditAnchor) ?? null;
    }
    putAuditAnchor(a) {
        this.set(K.auditAnchor, a);
    }
    auditHead() {
        return this.db.get(K.auditHead) ?? null;
    }
    appendAudit(r) {
        // Audit records carry their own hash chain; the head carries a checksum.
        // Keyed under the state key when sealed: a record appended by SQL is not.
        const keyed = this.sealKey !== null && r.state !== undefined
            ? { ...r, mac: auditKeyMac(this.sealKey, r.seq, r.hash) }
            : r;
        this.set(K.audit(r.seq), keyed);
        this.set(K.auditHead, { seq: r.seq, hash: r.hash });
    }
    /** The last record moved to an archive (`audit archive`): the chain in the store starts after it. */
    auditBase() {
        return this.db.get(K.auditBase) ?? null;
    }
    /** Removes the records up to `base.seq` (archived) and says where the chain now starts. */
    pruneAudit(base) {
        for (const key of [...this.db.getKeys({ start: 'audit/', end: K.audit(base.seq + 1) })]) {
            this.db.remove(String(key));
        }
        this.set(K.auditBase, { seq: base.seq, hash: base.hash });
    }
    /** Rewrites one record in place: the schema migration's re-chaining only. */
    putAuditRecord(r) {
        this.db.put(K.audit(r.seq), r);
    }
    putAuditHeadOnly(h) {
        this.set(K.auditHead, h);
    }
    audit(fromSeq = 1) {
        return [...this.db.getRange({ start: K.audit(fromSeq), end: 'audit0' })].map((r) => r.value);
    }
}
