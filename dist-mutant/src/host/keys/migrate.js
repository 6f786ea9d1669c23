/**
 * Schema 1 -> 2, on the owner's first unlock by this build, in one write
 * transaction (all or nothing): every entry keeps its data key, now at
 * generation 1, with its name, meta (now with each field's version) and
 * fields re-sealed in schema 2's slots and the fields moved to keyed hashes
 * under the data key; every agent's tier keys and vault index key are
 * replaced by grants of its scope and an index of its own, MACed; sessions
 * (none can be live: each ended with the host that held it) are erased; the
 * audit records' entry ids move into their sealed part and the chain is
 * re-hashed (then anchored by the owner's command), so no record keeps an
 * entry id in clear.
 */
import { VaultError } from '../../core/errors.js';
import { newKey, open, seal, unwrapKey, wipe } from '../../crypto/aead.js';
import { openSealed, sealTo } from '../../crypto/box.js';
import { keyedHash } from '../../crypto/hash.js';
import { SCHEMA_VERSION, } from '../../store/schema.js';
import { appendAudit, recordHash } from '../audit/log.js';
import { addGrants, fieldHash, omit, recordIndexKey, sealMeta, withAgentMac, withSessionMac, } from './grants.js';
import { ownerEvent } from '../audit/event.js';
import { slots, slotsV1 } from './slots.js';
/** Schema 1's audit records with their entry ids sealed with the names, the chain re-hashed. */
function rechainAudit(tx, s, header) {
    const keys = s.auditKeys();
    let prev = Buffer.alloc(32);
    let last = null;
    for (const r of tx.audit()) {
        let sealed = r.sealed;
        if (r.entryId !== null) {
            const opened = r.sealed === null ? null : openSealed(keys, r.sealed);
            const names = opened === null ? { entry: null, field: null } : JSON.parse(opened.toString('utf8'));
            sealed = sealTo(header.auditPublicKey, Buffer.from(JSON.stringify({ ...names, entryId: r.entryId })));
        }
        const base = { ...r, entryId: null, sealed, prev };
        const { hash: _h, ...rest } = base;
        void _h;
        last = { ...rest, hash: recordHash(rest) };
        tx.putAuditRecord(last);
        prev = last.hash;
    }
    if (last !== null)
        tx.putAuditHeadOnly({ seq: last.seq, hash: last.hash });
}
function openV1(key, blob, ad) {
    const out = open(key, blob, ad, true);
    if (out === null)
        throw new VaultError('VLT-3003');
    return out;
}
/** Migrates the vault `s` unlocked, if it is still schema 1; returns `s`, now on the new header. */
export function migrate(ctx, s, source) {
    const mac = newKey();
    try {
        ctx.commit((tx) => {
            const h1 = ctx.header(tx);
            if (h1.schema >= SCHEMA_VERSION) {
                s.adopt(h1);
                return;
            }
            const h2 = {
                ...h1,
                schema: SCHEMA_VERSION,
                macKey: seal(s.rootKey(), mac, slots.macKey(h1.vaultId)),
            };
            s.adopt(h2);
            tx.putHeader(h2);
            const entries = new Map();
            for (const e of tx.entries())
                entries.set(e.id, migrateEntry(tx, s, h1, h2, e));
            migrateAgents(tx, s, h2, entries);
            endSessions(tx, s, ctx.now());
            rechainAudit(tx, s, h2);
            appendAudit(tx, h2, ownerEvent(ctx, 'vault_migrate', source, { subject: `schema ${SCHEMA_VERSION}` }));
        });
        return s;
    }
    finally {
        wipe(mac);
    }
}
/**
 * Entry `e` at generation 1: its data key re-sealed, its name and meta (now
 * with each field's version) re-sealed in schema 2's slots, its fields moved
 * to keyed hashes under the data key. Returns the entry as stored.
 * @throws VaultError VLT-3003 when a schema 1 seal does not open.
 */
function migrateEntry(tx, s, h1, h2, e) {
    const v = h1.vaultId;
    const tierKey = s.tierKey(h1, e.tier);
    const dk = tierKey && unwrapKey(tierKey, e.dataKey, slotsV1.dataKey(v, e.id, e.tier));
    if (!tierKey || !dk)
        throw new VaultError('VLT-3003');
    try {
        const name = openV1(dk, e.name, slotsV1.name(v, e.id));
        const old = JSON.parse(openV1(dk, e.meta, slotsV1.meta(v, e.id)).toString('utf8'));
        const versions = {};
        for (const f of old.fields) {
            const version = migrateField(tx, s, v, e, dk, f);
            if (version !== null)
                versions[f] = version;
        }
        const next = {
            ...e,
            gen: 1,
            dataKey: seal(tierKey, dk, slots.dataKey(v, e.id, e.tier, 1)),
            name: seal(dk, name, slots.name(v, e.id, 1)),
            meta: sealMeta(h2, dk, e.id, 1, { fields: old.fields, versions, hosts: old.hosts }),
        };
        tx.putEntry(next);
        return next;
    }
    finally {
        wipe(dk);
    }
}
/**
 * Field `f` of entry `e` moved from the vault index key's hash to the data
 * key's, re-sealed at generation 1. Returns its version, or null when the
 * entry has no such field record.
 */
function migrateField(tx, s, v, e, dk, f) {
    const oldKey = keyedHash(s.indexKey, 'field', e.id, f).toString('hex');
    const rec = tx.field(e.id, oldKey);
    if (rec === null)
        return null;
    const value = openV1(dk, rec.value, slotsV1.field(v, e.id, f, rec.version));
    tx.removeField(e.id, oldKey);
    tx.putField(e.id, fieldHash(dk, e.id, f), {
        version: rec.version,
        gen: 1,
        value: seal(dk, value, slots.field(v, e.id, f, rec.version, 1)),
        updated: rec.updated,
    });
    wipe(value);
    return rec.version;
}
/**
 * Every agent's tier keys replaced by grants of its scope (the `entries` now
 * stored) and an index of its own, MACed; a revoked agent keeps no grant.
 */
function migrateAgents(tx, s, h2, entries) {
    for (const a of tx.agents()) {
        const rest = omit(a, ['tierKeys']);
        if (a.revoked !== null) {
            tx.putAgent(withAgentMac(s, {
                ...rest,
                grants: {},
                index: {},
                indexKey: Buffer.alloc(0),
                mac: Buffer.alloc(0),
            }));
            continue;
        }
        const ik = recordIndexKey(s, 'agent', a.id);
        const scope = a.scope.flatMap((id) => entries.get(id) ?? []);
        const g = addGrants(s, h2, a.publicKey, ik, { grants: {}, index: {} }, scope);
        tx.putAgent(withAgentMac(s, {
            ...rest,
            scope: scope.map((e) => e.id),
            ...g,
            indexKey: sealTo(a.publicKey, ik),
            mac: Buffer.alloc(0),
        }));
    }
}
/** Every session erased and ended (none can be live: each ended with the host that held it). */
function endSessions(tx, s, now) {
    for (const r of tx.sessions()) {
        const rest = omit(r, ['tierKeys']);
        tx.putSession(withSessionMac(s, {
            ...rest,
            scope: [],
            grants: {},
            index: {},
            indexKey: Buffer.alloc(0),
            verifier: Buffer.alloc(0),
            secretKey: Buffer.alloc(0),
            revoked: r.revoked ?? now,
            mac: Buffer.alloc(0),
        }));
    }
}
