/**
 * The check step of the access path (access.ts) for one entry and one
 * reference: the caller's grant opened, the entry's sealed name and meta
 * against what was asked, the field's record, its version and generation,
 * the TOTP seed rule and the host binding. What it opens of an entry is kept
 * against the record object the store handed out, for the next request.
 */
import { requestAllowed } from '../../core/caveats.js';
import { SSH_FORWARD_BINDING, SSH_KEY_FIELD, SSH_PUBLIC_FIELD, TOTP_FIELD, } from '../../core/names.js';
import { KEY_BYTES } from '../../crypto/aead.js';
import { normalHost } from '../entries/entries.js';
import { oauthRecords, oauthRole } from '../entries/oauth.js';
import { fieldHash, openMeta, openName } from '../keys/grants.js';
/** Field keys kept per opened entry: a caller naming many fields that do not exist keeps none of them. */
const FIELD_KEYS_KEPT = 16;
const openedEntries = new WeakMap();
function openEntry(header, dataKey, entry) {
    const kept = openedEntries.get(entry);
    if (kept !== undefined && kept.dataKey === dataKey && kept.header === header)
        return kept;
    const name = openName(header, dataKey, entry);
    const meta = name === null ? null : openMeta(header, dataKey, entry);
    const opened = {
        dataKey,
        header,
        name,
        meta: meta === null ? null : frozenMeta(meta),
        fields: new Map(),
    };
    openedEntries.set(entry, opened);
    return opened;
}
function frozenMeta(m) {
    Object.freeze(m.fields);
    Object.freeze(m.versions);
    Object.freeze(m.hosts);
    if (m.exposed !== undefined)
        Object.freeze(m.exposed);
    return Object.freeze(m);
}
/**
 * The entry half of check(): the grant opened, its generation, the sealed name
 * equal to the name asked for, the meta opened. Once per entry and name in a
 * request, however many of its fields are asked for.
 */
export function checkEntry(session, header, entry, grant, name) {
    if (entry.gen !== grant.gen)
        return { code: 'VLT-3020' };
    const dataKey = session.unseal(grant.box);
    if (dataKey === null || dataKey.length !== KEY_BYTES)
        return { code: 'VLT-3003' };
    const opened = openEntry(header, dataKey, entry);
    if (opened.name === null)
        return { code: 'VLT-3003' };
    if (opened.name !== name)
        return { code: 'VLT-3022' };
    if (opened.meta === null)
        return { code: 'VLT-3003' };
    return { dataKey, meta: opened.meta, fields: opened.fields };
}
/** The store key of `field` under the entry's data key, kept with the opened entry. */
function fieldKey(checked, entryId, field) {
    const kept = checked.fields.get(field);
    if (kept !== undefined)
        return kept;
    const key = fieldHash(checked.dataKey, entryId, field);
    if (checked.fields.size < FIELD_KEYS_KEPT)
        checked.fields.set(field, key);
    return key;
}
/**
 * One reference checked against the caller's grant, inside the transaction:
 * its data key opened from the grant, the entry's sealed name equal to the name
 * asked for (a swapped index row leads elsewhere: VLT-3022), the generations
 * and the field's version as the sealed meta says (an older record: VLT-3020),
 * a totp seed refused (VLT-2052), and for a fill the host binding.
 */
export function check(tx, entry, checked, ref, 
/** For a fill, its host and request; `caveats`: the agent's for this entry, if any. */
on) {
    if ('code' in checked)
        return checked;
    const { dataKey, meta } = checked;
    const { purpose, host } = on;
    // An OAuth entry's refresh token and client secret never leave the host; its
    // access token is obtained with them (oauth.ts): checked as its refresh token.
    const role = oauthRole(meta, ref.field);
    if (role === 'held')
        return { code: 'VLT-2064' };
    const stored = role === 'access' ? 'refresh_token' : ref.field;
    const record = tx.field(entry.id, fieldKey(checked, entry.id, stored));
    if (record === null)
        return { code: 'VLT-2044' };
    if (record.gen !== entry.gen || record.version < (meta.versions[stored] ?? 0))
        return { code: 'VLT-3020' };
    // A one-time-password seed never leaves the host: only `totp` uses it, for a code.
    if (ref.field === TOTP_FIELD && purpose.kind !== 'totp')
        return { code: 'VLT-2052' };
    // An SSH private key never leaves the host either: only a signature made with it does.
    if ((ref.field === SSH_KEY_FIELD) !== (purpose.kind === 'ssh'))
        return { code: 'VLT-2065' };
    if (purpose.kind === 'ssh_public' && ref.field !== SSH_PUBLIC_FIELD)
        return { code: 'VLT-2065' };
    if (purpose.kind === 'ssh') {
        const code = sshRefusal(meta.hosts, purpose);
        return code === null ? { record, dataKey } : { code };
    }
    if (host !== null && meta.hosts.length > 0 && !meta.hosts.includes(normalHost(host)))
        return { code: 'VLT-2045' };
    const caveat = caveatRefusal(on.caveats, purpose);
    if (caveat !== null)
        return { code: caveat };
    if (role !== 'access')
        return { record, dataKey };
    const oauth = oauthRecords(tx, entry, (f) => fieldKey(checked, entry.id, f));
    for (const [f, r] of Object.entries(oauth))
        if (r.gen !== entry.gen || r.version < (meta.versions[f] ?? 0))
            return { code: 'VLT-3020' };
    return { record, dataKey, oauth };
}
/**
 * Check, the agent's request caveats for the entry (core/caveats.ts), if it
 * has any: released only into a proxy request they allow (VLT-2060, counted
 * as a violation), never to `get` or a render (VLT-2061).
 */
export function caveatRefusal(rules, purpose) {
    if (rules === undefined)
        return null;
    if (purpose.kind !== 'fill' || purpose.request === undefined)
        return 'VLT-2061';
    const { method, target } = purpose.request;
    return requestAllowed(rules, method, target) ? null : 'VLT-2060';
}
/**
 * An SSH signature against the entry's binding: a session-bind that failed
 * (VLT-2068), a forwarded agent where the binding does not allow one
 * (VLT-2066), a bound entry asked to sign for a server whose host key is not
 * bound, or for no server shown (VLT-2045, counted as a violation).
 */
function sshRefusal(hosts, p) {
    if (p.problem !== null)
        return p.problem;
    if (p.forwarded && !hosts.includes(SSH_FORWARD_BINDING))
        return 'VLT-2066';
    const keys = hosts.filter((h) => h !== SSH_FORWARD_BINDING);
    if (keys.length > 0 && (p.server === null || !keys.includes(p.server)))
        return 'VLT-2045';
    return null;
}
