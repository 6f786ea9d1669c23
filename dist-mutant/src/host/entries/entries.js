/**
 * The owner's entry operations: set (create or rotate a field), remove, show
 * and list. Each change and its audit record are one write transaction.
 */
import { VaultError, quote } from '../../core/errors.js';
import { DEFAULT_TIER, SSH_FORWARD_BINDING, TOTP_FIELD, checkEntryName, checkFieldName, checkSimpleName, } from '../../core/names.js';
import { FINGERPRINT } from '../../core/ssh-wire.js';
import { newKey, open, randomBytes, seal, wipe } from '../../crypto/aead.js';
import { appendAudit } from '../audit/log.js';
import { RECORD_BYTES } from '../../store/engine.js';
import { dropGrants, fieldHash, openMeta, openName, rotateEntry, sealMeta, agentMacHolds, sessionMacHolds, withAgentMac, withSessionMac, } from '../keys/grants.js';
import { ownerEvent } from '../audit/event.js';
import { slots } from '../keys/slots.js';
import { didYouMean } from '../../core/suggest.js';
import { parseSeed } from './totp.js';
export const MAX_VALUE_BYTES = 1024 * 1024;
/**
 * The entry the owner's index gives for `name`, checked against its sealed
 * name: a row swapped in the store leads to an entry of another name, VLT-3022.
 */
function findEntry(tx, s, name) {
    const id = tx.entryIdByName(s.nameHash(name));
    const e = id === null ? null : tx.entry(id);
    if (e === null)
        return null;
    const header = headerOf(tx, s);
    const dataKey = s.dataKey(header, e);
    try {
        const sealed = openName(header, dataKey, e);
        if (sealed === null)
            throw new VaultError('VLT-3003');
        if (sealed !== name)
            throw new VaultError('VLT-3022');
    }
    finally {
        wipe(dataKey);
    }
    return e;
}
function headerOf(tx, s) {
    return tx.header() ?? s.header;
}
function mustFindEntry(tx, s, name) {
    const e = findEntry(tx, s, name);
    if (e === null) {
        throw new VaultError('VLT-4001', `No such entry: ${quote(name)}${didYouMean(name, ownNames(tx, s))}.`);
    }
    return e;
}
/** Every entry's name, as the owner may see them: only on a miss, for "did you mean". */
function ownNames(tx, s) {
    const header = headerOf(tx, s);
    return tx.entries().flatMap((e) => {
        const dataKey = s.dataKey(header, e);
        try {
            return [openName(header, dataKey, e) ?? []].flat();
        }
        catch {
            return [];
        }
        finally {
            wipe(dataKey);
        }
    });
}
function readMeta(header, dataKey, e) {
    const meta = openMeta(header, dataKey, e);
    if (meta === null)
        throw new VaultError('VLT-3003');
    return meta;
}
/** A host name as bindings compare them: lower case, no trailing dot. */
export function normalHost(host) {
    return host.trim().toLowerCase().replace(/\.$/, '');
}
/** An SSH server's host-key fingerprint (case kept), `+forward`, or a host name (normalHost). */
function bindingOf(h) {
    const t = h.trim();
    return isSshBinding(t) ? t : normalHost(h);
}
function isSshBinding(h) {
    return FINGERPRINT.test(h) || h === SSH_FORWARD_BINDING;
}
const HOST_NAME = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*)$/;
/**
 * Binds an entry to the hosts the proxy may send it to, or (`hosts` empty)
 * lifts the binding. Names are compared exactly, lower case: `github.com` does
 * not cover `api.github.com`.
 * @throws VaultError VLT-4001 for an unknown entry, VLT-1002 for a bad host name.
 */
export function setHosts(ctx, s, req, source) {
    const hosts = [...new Set(req.hosts.map(bindingOf))];
    for (const h of hosts) {
        if (isSshBinding(h))
            continue;
        if (!HOST_NAME.test(h) || h.length > 253) {
            throw new VaultError('VLT-1002', `Not a host name: ${quote(h)}.`);
        }
    }
    ctx.commit((tx) => {
        const header = ctx.header(tx);
        const entry = mustFindEntry(tx, s, req.entry);
        const dataKey = s.dataKey(header, entry);
        try {
            const before = readMeta(header, dataKey, entry);
            // No hosts is any host: binding an unbound entry, or dropping hosts, only
            // tightens; adding a host to a binding, or clearing it, needs the passphrase.
            const had = before.hosts ?? [];
            if (had.length > 0 && (hosts.length === 0 || hosts.some((h) => !had.includes(h)))) {
                s.requireProof('Widening the hosts an entry may go to');
            }
            const meta = { ...before, hosts };
            tx.putEntry({
                ...entry,
                meta: sealMeta(header, dataKey, entry.id, entry.gen, meta),
                updated: ctx.now(),
            });
            appendAudit(tx, header, ownerEvent(ctx, 'entry_hosts', source, { entryId: entry.id, entry: req.entry }));
        }
        finally {
            wipe(dataKey);
        }
    });
    return showEntry(ctx, s, req.entry);
}
/**
 * `req` if setEntry would take it: checked before any transaction, so a
 * batch (`import`) refuses before it writes anything.
 * @throws VaultError VLT-1002 for a bad name, field, tier, empty value or totp seed.
 */
export function checkSet(req) {
    const entry = checkEntryName(req.entry);
    const field = checkFieldName(req.field);
    const tier = req.tier === undefined ? undefined : checkSimpleName('tier', req.tier);
    if (req.value.length === 0)
        throw new VaultError('VLT-1002', 'Empty value: nothing stored.');
    if (req.value.length > MAX_VALUE_BYTES) {
        throw new VaultError('VLT-1002', `Values are at most ${MAX_VALUE_BYTES} bytes.`);
    }
    if (field === TOTP_FIELD)
        parseSeed(req.value.expose().toString('utf8'));
    return { entry, field, tier, value: req.value };
}
/** Whether the owner's index has an entry of this name (checked against its sealed name). */
export function entryExists(tx, s, name) {
    return findEntry(tx, s, name) !== null;
}
/**
 * Creates the entry, or sets one field of it under a new data key: every
 * value set gets a fresh key (the entry is rotated, its other fields
 * re-sealed), re-granted to the agents and sessions that hold the entry, so
 * keys saved before open nothing set after. A rotation is what every agent
 * gets on its next read.
 * @throws VaultError VLT-1002 for a bad name, field, tier, empty value or totp seed.
 */
export function setEntry(ctx, s, req, source) {
    const checked = checkSet(req);
    // The value itself, and a page each for the field, entry, name and audit
    // records: the reserve must still hold after it (src/store/lmdb/room.ts).
    return ctx.commit((tx) => setEntryIn(tx, ctx, s, checked, source), checked.value.length + 4 * RECORD_BYTES);
}
/**
 * setEntry inside the caller's transaction, for a request checked by checkSet:
 * the field and its audit record go in with whatever else the transaction does.
 */
export function setEntryIn(tx, ctx, s, req, source) {
    const { entry: name, field } = req;
    const now = ctx.now();
    const existing = findEntry(tx, s, name);
    const current = ctx.header(tx);
    const { header, entry, dataKey, meta } = existing === null
        ? newEntry(tx, s, name, req.tier ?? DEFAULT_TIER, now)
        : rotateForSet(tx, s, current, existing, req);
    try {
        const fieldKey = fieldHash(dataKey, entry.id, field);
        const previous = tx.field(entry.id, fieldKey);
        const version = Math.max(previous?.version ?? 0, meta.versions[field] ?? 0) + 1;
        const had = previous !== null || meta.versions[field] !== undefined;
        tx.putField(entry.id, fieldKey, {
            version,
            gen: entry.gen,
            value: seal(dataKey, req.value.expose(), slots.field(header.vaultId, entry.id, field, version, entry.gen)),
            updated: now,
        });
        fieldSet(meta, field, version);
        tx.putEntry({
            ...entry,
            meta: sealMeta(header, dataKey, entry.id, entry.gen, meta),
            updated: now,
        });
        const action = existing === null ? 'entry_add' : had ? 'rotate' : 'field_add';
        appendAudit(tx, header, ownerEvent(ctx, action, source, { entryId: entry.id, entry: name, field }));
        return { created: existing === null, version };
    }
    finally {
        wipe(dataKey);
    }
}
/** Notes in `meta` that `field` is now at `version`, and off the rotation checklist. */
function fieldSet(meta, field, version) {
    if (!meta.fields.includes(field))
        meta.fields.push(field);
    meta.versions[field] = version;
    // Set anew: off the rotation checklist (a sweep's exposed mark, exposure.ts).
    if (meta.exposed?.[field] !== undefined) {
        meta.exposed = Object.fromEntries(Object.entries(meta.exposed).filter(([f]) => f !== field));
    }
}
/** A new entry named `name` in `tier` (made if need be), with its name row; its record is the caller's to put. */
function newEntry(tx, s, name, tier, now) {
    const t = s.ensureTier(tx, tier);
    const header = t.header;
    const id = randomBytes(16).toString('hex');
    const dataKey = newKey();
    const entry = {
        id,
        tier,
        gen: 1,
        dataKey: seal(t.key, dataKey, slots.dataKey(header.vaultId, id, tier, 1)),
        name: seal(dataKey, Buffer.from(name), slots.name(header.vaultId, id, 1)),
        meta: Buffer.alloc(0),
        created: now,
        updated: now,
    };
    tx.putName(s.nameHash(name), id);
    return { header, entry, dataKey, meta: { fields: [], versions: {}, hosts: [] } };
}
/**
 * Entry `existing` under a new data key, the field `req` sets left out of the
 * re-seal; moved to `req.tier` too when asked (the new key wrapped by that tier's key).
 */
function rotateForSet(tx, s, header, existing, req) {
    const { tier, field } = req;
    const t = tier !== undefined && tier !== existing.tier ? s.ensureTier(tx, tier) : undefined;
    const h = t === undefined ? header : t.header;
    const opts = t === undefined ? { replacing: field } : { tier, tierKey: t.key, replacing: field };
    return { header: h, ...rotateEntry(tx, s, h, existing, opts) };
}
/** Removes an entry, its fields, its name and every agent's and session's grant of it. */
export function removeEntry(ctx, s, name, source) {
    ctx.commit((tx) => {
        const header = ctx.header(tx);
        const e = mustFindEntry(tx, s, name);
        tx.removeEntry(e.id);
        tx.removeName(s.nameHash(name));
        const gone = new Set([e.id]);
        for (const a of tx.agents()) {
            if (a.revoked !== null || !a.scope.includes(e.id))
                continue;
            const scope = a.scope.filter((id) => id !== e.id);
            const next = { ...a, scope, ...dropGrants(a, gone) };
            // An altered record loses the entry too, but is not vouched for.
            tx.putAgent(agentMacHolds(s, a) ? withAgentMac(s, next) : next);
        }
        for (const r of tx.sessions()) {
            if (r.revoked !== null || !r.scope.includes(e.id))
                continue;
            const scope = r.scope.filter((id) => id !== e.id);
            const next = { ...r, scope, ...dropGrants(r, gone) };
            tx.putSession(sessionMacHolds(s, r) ? withSessionMac(s, next) : next);
        }
        appendAudit(tx, header, ownerEvent(ctx, 'entry_rm', source, { entryId: e.id, entry: name }));
    });
}
function summary(tx, s, header, e) {
    const dataKey = s.dataKey(header, e);
    try {
        const name = openName(header, dataKey, e);
        if (name === null)
            throw new VaultError('VLT-3003');
        const meta = readMeta(header, dataKey, e);
        const fields = meta.fields.map((f) => {
            const rec = tx.field(e.id, fieldHash(dataKey, e.id, f));
            const exposed = meta.exposed?.[f];
            return {
                name: f,
                version: rec?.version ?? 0,
                updated: rec?.updated ?? 0,
                ...(exposed === undefined ? {} : { exposed }),
            };
        });
        return { name, tier: e.tier, fields, hosts: meta.hosts, created: e.created };
    }
    finally {
        wipe(dataKey);
    }
}
export function showEntry(ctx, s, name) {
    return ctx.store().read((tx) => summary(tx, s, ctx.header(tx), mustFindEntry(tx, s, name)));
}
/**
 * The owner's own look at one value: the `reveal` audit record is committed
 * before the value leaves the host, as an agent's read is.
 * @throws VaultError VLT-4001 for an unknown entry, VLT-2044 for a field it does not have.
 */
export function revealField(ctx, s, req, source) {
    const field = checkFieldName(req.field);
    return ctx.commit((tx) => {
        const header = ctx.header(tx);
        const e = mustFindEntry(tx, s, req.entry);
        const dataKey = s.dataKey(header, e);
        try {
            const meta = readMeta(header, dataKey, e);
            const rec = tx.field(e.id, fieldHash(dataKey, e.id, field));
            if (rec === null || !meta.fields.includes(field)) {
                throw new VaultError('VLT-2044', `${quote(req.entry)} has no field ${quote(field)}.`);
            }
            // As an agent's read: a field put back from before a rotation is refused.
            if (rec.gen !== e.gen || rec.version < (meta.versions[field] ?? 0)) {
                throw new VaultError('VLT-3020');
            }
            const value = open(dataKey, rec.value, slots.field(header.vaultId, e.id, field, rec.version, rec.gen));
            if (value === null)
                throw new VaultError('VLT-3003');
            appendAudit(tx, header, ownerEvent(ctx, 'reveal', source, { entryId: e.id, entry: req.entry, field }));
            try {
                return { value: value.toString('base64'), version: rec.version };
            }
            finally {
                wipe(value);
            }
        }
        finally {
            wipe(dataKey);
        }
    });
}
export function listEntries(ctx, s) {
    return ctx
        .store()
        .read((tx) => {
        const header = ctx.header(tx);
        return tx.entries().map((e) => summary(tx, s, header, e));
    })
        .sort((a, b) => a.name.localeCompare(b.name));
}
/** Entry ids for names, for scopes. @throws VaultError VLT-4001 naming the first unknown entry. */
export function entryIds(tx, s, names) {
    return names.map((n) => mustFindEntry(tx, s, n));
}
