/**
 * Per-entry grants (schema 2): the key hierarchy says what the policy says.
 *
 * Each entry has a data key of its own, with a generation. An agent, and each
 * `run` session, holds the data keys of the entries in its scope, each sealed
 * to its own key pair (a grant), and a name index of those entries only, keyed
 * by an index key of its own; it holds nothing that opens another entry or
 * answers for another name. A rotation makes a new data key and re-grants it
 * to the records that still hold the entry; a record that loses an entry
 * loses its grant, and the entry is rotated so saved keys open nothing new.
 *
 * The owner MACs every agent and session record (all but the host-written
 * rate state) with the vault's MAC key, which only the root key unwraps, and
 * checks the MAC before trusting a record: before `run` mints a session from
 * an agent's scope and before any change to an agent.
 */
import { canon } from '../../core/canon.js';
import { VaultError } from '../../core/errors.js';
import { newKey, open, seal, wipe } from '../../crypto/aead.js';
import { sealTo } from '../../crypto/box.js';
import { equal, keyedHash } from '../../crypto/hash.js';
import { slots } from './slots.js';
/** The store key of a field: a keyed hash under the entry's data key, so only a holder of the key finds it. */
export function fieldHash(dataKey, entryId, field) {
    return keyedHash(dataKey, 'field', entryId, field).toString('hex');
}
/** The row of an entry name in an index keyed by `indexKey`. */
export function nameHash(indexKey, name) {
    return keyedHash(indexKey, 'entry', name).toString('hex');
}
/** The entry's meta, or null when it does not open with this data key and generation. */
export function openMeta(header, dataKey, e) {
    const raw = open(dataKey, e.meta, slots.meta(header.vaultId, e.id, e.gen));
    if (raw === null)
        return null;
    const m = JSON.parse(raw.toString('utf8'));
    return {
        fields: m.fields ?? [],
        versions: m.versions ?? {},
        hosts: m.hosts ?? [],
        ...(m.exposed === undefined ? {} : { exposed: m.exposed }),
    };
}
export function sealMeta(header, dataKey, id, gen, meta) {
    return seal(dataKey, Buffer.from(JSON.stringify(meta)), slots.meta(header.vaultId, id, gen));
}
/** The entry's display name, or null when it does not open with this data key and generation. */
export function openName(header, dataKey, e) {
    const raw = open(dataKey, e.name, slots.name(header.vaultId, e.id, e.gen));
    return raw === null ? null : raw.toString('utf8');
}
/** The MAC of an agent record: everything but `rate` (the host writes it without the owner) and the MAC. */
export function agentMac(macKey, a) {
    return keyedHash(macKey, 'agent-v2', canon(omit(a, ['rate', 'mac', 'tierKeys'])));
}
/** The MAC of a session record (of a live one: ending it erases its keys without the owner). */
export function sessionMac(macKey, r) {
    return keyedHash(macKey, 'session-v2', canon(omit(r, ['mac', 'tierKeys'])));
}
/** A copy of `o` without `keys`. */
export function omit(o, keys) {
    return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}
export function withAgentMac(s, a) {
    return { ...a, mac: agentMac(s.macKey(), a) };
}
export function withSessionMac(s, r) {
    return { ...r, mac: sessionMac(s.macKey(), r) };
}
/** Whether an agent record's owner MAC holds. */
export function agentMacHolds(s, a) {
    return Buffer.isBuffer(a.mac) && equal(a.mac, agentMac(s.macKey(), a));
}
/** Whether a session record's owner MAC holds. */
export function sessionMacHolds(s, r) {
    return Buffer.isBuffer(r.mac) && equal(r.mac, sessionMac(s.macKey(), r));
}
/** @throws VaultError VLT-3021 when the agent record was changed outside the host. */
export function verifyAgent(s, a) {
    if (!agentMacHolds(s, a)) {
        throw new VaultError('VLT-3021', `The record of agent ${JSON.stringify(a.name)} failed authentication (changed outside vault-cli); refused.`);
    }
    return a;
}
/** The index key of an agent or session record, derived from the MAC key (the owner needs no other copy). */
export function recordIndexKey(s, kind, id) {
    return keyedHash(s.macKey(), 'index-key', kind, id);
}
/**
 * `base` with grants of `entries` added for a record's public key and index key.
 * Each data key is opened by the owner (root -> tier -> data key) and sealed to `publicKey`.
 */
export function addGrants(s, header, publicKey, indexKey, base, entries) {
    const grants = { ...base.grants };
    const index = { ...base.index };
    for (const e of entries) {
        const dataKey = s.dataKey(header, e);
        try {
            const name = openName(header, dataKey, e);
            if (name === null)
                throw new VaultError('VLT-3003');
            grants[e.id] = { gen: e.gen, box: sealTo(publicKey, dataKey) };
            index[nameHash(indexKey, name)] = e.id;
        }
        finally {
            wipe(dataKey);
        }
    }
    return { grants, index };
}
/** `base` without the grants and index rows of `ids`. */
export function dropGrants(base, ids) {
    return {
        grants: Object.fromEntries(Object.entries(base.grants).filter(([id]) => !ids.has(id))),
        index: Object.fromEntries(Object.entries(base.index).filter(([, id]) => !ids.has(id))),
    };
}
/**
 * Rotates an entry's data key inside the caller's transaction: a new key and
 * generation, the name, meta and every field re-sealed under it (field records
 * move to their new keyed hashes), `change` applied to the meta and fields
 * first, and the new key granted to every agent and live session that still
 * holds a grant of the entry (each record's MAC checked, then renewed). A
 * record whose MAC fails gets no new key and is left as it is (still
 * failing): an altered agent must not stop the owner rotating a credential.
 * Returns the new entry and its data key (the caller wipes it).
 * @throws VaultError VLT-3003 when something does not open, VLT-3020 a rolled-back field.
 */
export function rotateEntry(tx, s, header, entry, opts = {}) {
    const old = s.dataKey(header, entry);
    const next = newKey();
    try {
        const gen = entry.gen + 1;
        const tier = opts.tier ?? entry.tier;
        const tierKey = opts.tierKey ?? s.tierKey(header, tier);
        if (tierKey === null)
            throw new VaultError('VLT-3003');
        const name = openName(header, old, entry);
        const meta = openMeta(header, old, entry);
        if (name === null || meta === null)
            throw new VaultError('VLT-3003');
        const v = header.vaultId;
        for (const f of meta.fields) {
            const key = fieldHash(old, entry.id, f);
            const rec = tx.field(entry.id, key);
            if (rec === null)
                continue;
            if (f === opts.replacing) {
                // About to be set anew: its old record is not carried over (nor checked),
                // so the owner can repair a rolled-back field by setting it.
                tx.removeField(entry.id, key);
                continue;
            }
            if (rec.gen !== entry.gen || rec.version < (meta.versions[f] ?? 0))
                throw new VaultError('VLT-3020');
            const value = open(old, rec.value, slots.field(v, entry.id, f, rec.version, rec.gen), true);
            if (value === null)
                throw new VaultError('VLT-3003');
            tx.removeField(entry.id, key);
            tx.putField(entry.id, fieldHash(next, entry.id, f), {
                version: rec.version,
                gen,
                value: seal(next, value, slots.field(v, entry.id, f, rec.version, gen)),
                updated: rec.updated,
            });
            wipe(value);
        }
        const rotated = {
            ...entry,
            tier,
            gen,
            dataKey: seal(tierKey, next, slots.dataKey(v, entry.id, tier, gen)),
            name: seal(next, Buffer.from(name), slots.name(v, entry.id, gen)),
            meta: sealMeta(header, next, entry.id, gen, meta),
        };
        tx.putEntry(rotated);
        const grant = (publicKey) => ({ gen, box: sealTo(publicKey, next) });
        for (const a of tx.agents()) {
            if (a.revoked !== null || a.grants?.[entry.id] === undefined)
                continue;
            if (!agentMacHolds(s, a))
                continue;
            tx.putAgent(withAgentMac(s, { ...a, grants: { ...a.grants, [entry.id]: grant(a.publicKey) } }));
        }
        for (const r of tx.sessions()) {
            if (r.revoked !== null || r.grants?.[entry.id] === undefined)
                continue;
            if (!sessionMacHolds(s, r))
                continue;
            tx.putSession(withSessionMac(s, { ...r, grants: { ...r.grants, [entry.id]: grant(r.publicKey) } }));
        }
        return { entry: rotated, dataKey: next, meta };
    }
    catch (err) {
        wipe(next);
        throw err;
    }
    finally {
        wipe(old);
    }
}
/**
 * The vault's state key (store/seal.ts) wrapped by a new token's key, for the
 * agent or session record `id`: how a host that never saw the owner learns
 * it, from a token, never from the database. Nothing before the vault is sealed.
 */
export function stateKeyBox(s, wrapKey, id) {
    const key = s.stateKey();
    return key === null ? {} : { stateKey: seal(wrapKey, key, slots.stateKeyByToken(s.vaultId, id)) };
}
