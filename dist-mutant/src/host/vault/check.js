/**
 * `vault check`: reads every record and verifies every checksum, seal, MAC,
 * index binding and the audit chain, and reports each problem with the code of
 * its kind of damage and the record it affects.
 *
 * LMDB keeps no checksums of its pages: a damaged page can make a reader
 * crash (SIGSEGV, SIGBUS) or loop, and a page that reads survive can still
 * crash a write into it. So the store is first read whole, and a copy of it
 * written into page by page, by a child process (src/store/lmdb/scan.ts); only when
 * that survives does the host read it.
 */
import { scanStoreFile } from '../../store/open.js';
import { VaultError } from '../../core/errors.js';
import { KEY_BYTES, open, unwrapKey, wipe } from '../../crypto/aead.js';
import { equal } from '../../crypto/hash.js';
import { anchorVerdict, brokenLink, rememberedAnchorProblem, } from '../audit/log.js';
import { unopenedNames } from '../audit/names.js';
import { auditShape, damageCode } from '../damage.js';
import { agentMac, fieldHash, openMeta, openName, sessionMac, } from '../keys/grants.js';
import { slots } from '../keys/slots.js';
/** The store key prefix of the agent name rows (src/store/schema.ts). */
const AGENT_NAME_ROW = 'agent-name/';
export class Problems {
    list = [];
    add(code, where, message) {
        this.list.push({ code, where, message });
    }
}
const obj = (v) => typeof v === 'object' && v !== null;
const buf = (v) => Buffer.isBuffer(v);
const int = (v) => typeof v === 'number' && Number.isInteger(v);
/** The single records that issue 15 added, each of its own shape. */
const SHAPES = {
    // Failed owner passphrases: how many in a row, and the last one's time.
    'owner-failures': (v) => obj(v) && int(v.count) && v.count >= 0 && typeof v.last === 'number',
    // Entries an ended session held, queued for rotation at the owner's next command.
    'rotate-pending': (v) => Array.isArray(v) && v.every((id) => typeof id === 'string'),
    // The owner's MAC of the chain head (its MAC is checked with the owner's keys, below).
    'audit-anchor': (v) => obj(v) && int(v.seq) && v.seq > 0 && buf(v.hash) && typeof v.at === 'number' && buf(v.mac),
};
/** The store key prefix of the agents' rate records (src/store/schema.ts). */
const RATE_RECORD = 'rate/';
/** An agent's rate state: its reads, violations and lock (core/policy.ts RateState). */
function rateShape(v) {
    return (obj(v) &&
        obj(v.reads) &&
        Array.isArray(v.violations) &&
        (v.lock === null || (obj(v.lock) && typeof v.lock.at === 'number')));
}
function headerShape(h) {
    return (obj(h) &&
        int(h.schema) &&
        buf(h.vaultId) &&
        obj(h.kdf) &&
        buf(h.rootByOwner) &&
        buf(h.rootByRecovery) &&
        buf(h.indexKey) &&
        buf(h.auditPublicKey) &&
        buf(h.auditSecretKey) &&
        obj(h.tiers));
}
function entryShape(e) {
    return (obj(e) &&
        typeof e.id === 'string' &&
        typeof e.tier === 'string' &&
        int(e.gen) &&
        buf(e.dataKey) &&
        buf(e.name) &&
        buf(e.meta));
}
/** Where a store key is, in words a report can show. */
function whereOf(key) {
    const [kind, ...rest] = key.split('/');
    return rest.length === 0 ? key : `${kind} ${rest.join('/')}`;
}
/**
 * The structural part, without keys: every record decodes, every checksum
 * holds, the header is there, the audit chain links. Returns the records read.
 */
export function checkRecords(records, problems) {
    let header = null;
    let headerSound = false;
    const audit = [];
    let head = null;
    let base = null;
    for (const r of records) {
        if (r.error === 'orphan') {
            problems.add('VLT-3036', whereOf(r.key.slice('sum/'.length)), 'The record is missing; its checksum remains.');
            continue;
        }
        if (r.error === 'out of order') {
            problems.add('VLT-3034', whereOf(r.key), 'The record is out of order in its page (damaged): lookups can miss records.');
            continue;
        }
        if (r.error !== undefined) {
            problems.add('VLT-3034', whereOf(r.key), 'The record cannot be read.');
            continue;
        }
        if (r.sumOk === false) {
            problems.add(r.key === 'header' ? 'VLT-3030' : 'VLT-3035', whereOf(r.key), 'The record does not match its checksum (damaged).');
        }
        if (r.key === 'header') {
            if (headerShape(r.value)) {
                header = r.value;
                headerSound = r.sumOk !== false;
            }
            else
                problems.add('VLT-3030', 'header', 'The header is not a vault header.');
        }
        else if (r.key === 'audit-head')
            head = r.value;
        else if (r.key === 'audit-base')
            base = r.value;
        else if (r.key.startsWith('audit/'))
            audit.push(r.value);
        else if (r.key.startsWith(RATE_RECORD) && !rateShape(r.value)) {
            problems.add('VLT-3035', whereOf(r.key), 'The record is not the kind of record its key says.');
        }
        else {
            const shaped = SHAPES[r.key];
            if (shaped !== undefined && !shaped(r.value)) {
                problems.add('VLT-3035', r.key, 'The record is not the kind of record its key says.');
            }
        }
    }
    if (header === null && !problems.list.some((p) => p.where === 'header')) {
        problems.add('VLT-3030', 'header', 'The vault has no header.');
    }
    const headHash = obj(head) && buf(head.hash) ? head.hash : null;
    const shaped = audit.every(auditShape);
    const chainStart = obj(base) && int(base.seq) && buf(base.hash) ? { seq: base.seq, hash: base.hash } : null;
    const broken = shaped ? brokenLink(audit, headHash, chainStart) : (chainStart?.seq ?? 0) + 1;
    if (broken !== null) {
        problems.add('VLT-3033', `audit ${broken}`, `The audit chain breaks at record ${broken} of ${audit.length}: a record was changed, removed or reordered.`);
    }
    return { header, headerSound };
}
/**
 * The part that needs the owner's keys: every seal opens, every field the meta
 * names is there at its version and generation, every index row leads to the
 * entry of its name and every entry has its row, every agent and live session
 * record holds its MAC and grants of the entries' current generations.
 */
export function checkSealed(store, s, problems, now) {
    return store.read((tx) => {
        const c = { tx, s, header: tx.header() ?? s.header, problems };
        const { entries, named } = checkEntries(c);
        checkNameIndex(c, entries, named);
        // Agents and sessions: MACs, scopes, grants.
        const mac = s.macKey();
        const agents = checkAgents(c, entries, mac);
        checkSessions(c, entries, mac, now);
        checkAuditSeals(c);
        return { entries: entries.size, agents: agents.length };
    });
}
/** Every entry record: its shape and seals. Returns them by id, and the names that opened. */
function checkEntries(c) {
    const entries = new Map();
    const named = new Map();
    for (const e of c.tx.entries()) {
        if (!entryShape(e)) {
            c.problems.add('VLT-3035', 'entry', 'An entry record is not an entry.');
            continue;
        }
        entries.set(e.id, e);
        const name = checkEntry(c, e);
        if (name !== null)
            named.set(e.id, name);
    }
    return { entries, named };
}
/** Entry `e`'s data key, unwrapped with its tier's key, or null when either does not open. */
function entryDataKey(c, e) {
    let tierKey;
    try {
        tierKey = c.s.tierKey(c.header, e.tier);
    }
    catch {
        tierKey = null;
    }
    const slot = slots.dataKey(c.header.vaultId, e.id, e.tier, e.gen);
    return tierKey && unwrapKey(tierKey, e.dataKey, slot);
}
/** One entry's seals: data key, name, field list and fields. Returns its name when it opens. */
function checkEntry(c, e) {
    const where = `entry ${e.id}`;
    const dk = entryDataKey(c, e);
    if (dk === null || dk.length !== KEY_BYTES) {
        c.problems.add('VLT-3031', where, 'Its data key does not open.');
        return null;
    }
    try {
        const name = openName(c.header, dk, e);
        if (name === null)
            c.problems.add('VLT-3031', where, 'Its name does not open.');
        const meta = openMeta(c.header, dk, e);
        if (meta === null)
            c.problems.add('VLT-3031', where, 'Its field list does not open.');
        else
            checkFields(c, e, dk, meta, name === null ? where : `entry ${JSON.stringify(name)}`);
        return name;
    }
    finally {
        wipe(dk);
    }
}
/** Each field the entry's meta names (there, current, opens), and no field record beyond them. */
function checkFields(c, e, dk, meta, label) {
    const expected = new Set();
    for (const field of meta.fields) {
        const key = fieldHash(dk, e.id, field);
        expected.add(key);
        const where = `${label} field ${field}`;
        const f = c.tx.field(e.id, key);
        if (f === null || !obj(f)) {
            c.problems.add('VLT-3036', where, 'The field is missing.');
            continue;
        }
        if (f.gen !== e.gen || f.version !== (meta.versions[field] ?? f.version)) {
            c.problems.add('VLT-3020', where, 'The field is older than its entry says.');
            continue;
        }
        const value = buf(f.value)
            ? open(dk, f.value, slots.field(c.header.vaultId, e.id, field, f.version, e.gen))
            : null;
        if (value === null)
            c.problems.add('VLT-3031', where, 'Its value does not open.');
        else
            wipe(value);
    }
    for (const { key } of c.tx.fieldRecords(e.id)) {
        if (!expected.has(key)) {
            c.problems.add('VLT-3036', `${label}`, 'A field record belongs to no field of the entry.');
        }
    }
}
/** The owner's name index, both ways: each row leads to the entry of its name, each entry has its row. */
function checkNameIndex(c, entries, named) {
    const rows = new Set();
    for (const row of c.tx.nameRows()) {
        const e = entries.get(row.entryId);
        if (e === undefined) {
            const where = `name ${row.hash.slice(0, 16)}`;
            c.problems.add('VLT-3032', where, 'The index row leads to no entry.');
            continue;
        }
        const name = named.get(e.id);
        if (name === undefined)
            continue;
        if (c.s.nameHash(name) !== row.hash) {
            const where = `entry ${JSON.stringify(name)}`;
            c.problems.add('VLT-3022', where, 'An index row of another name leads to this entry.');
            continue;
        }
        rows.add(e.id);
    }
    for (const [id, name] of named) {
        if (!rows.has(id)) {
            const where = `entry ${JSON.stringify(name)}`;
            c.problems.add('VLT-3032', where, 'No index row leads to the entry.');
        }
    }
}
/** Every agent record: its MAC, rate state, name rows and grants. Returns the records. */
function checkAgents(c, entries, mac) {
    const { tx, problems } = c;
    const agents = tx.agents();
    for (const a of agents) {
        if (!obj(a) || typeof a.name !== 'string') {
            problems.add('VLT-3035', 'agent', 'An agent record is not an agent.');
            continue;
        }
        const where = `agent ${JSON.stringify(a.name)}`;
        if (!buf(a.mac) || !equal(a.mac, agentMac(mac, a))) {
            problems.add('VLT-3021', where, 'The record failed its owner MAC.');
            continue;
        }
        // Its rate record gone (the agent reads as locked until the owner unlocks it).
        if (a.revoked === null && a.rate.lock?.reason === 'lost') {
            problems.add('VLT-3036', where, 'Its rate state (limits, lock) is missing.');
        }
        if (a.revoked === null && tx.agentIdByName(a.name) !== a.id) {
            problems.add('VLT-3032', where, 'The agent name index does not lead to this agent.');
        }
        if (a.revoked === null)
            grantsOf(a, where, entries, problems);
    }
    agentNameRows(tx, agents, problems);
    return agents;
}
/** Every live session record: its MAC and grants (an ended or expired one is not read). */
function checkSessions(c, entries, mac, now) {
    for (const r of c.tx.sessions()) {
        if (!obj(r) || typeof r.id !== 'string') {
            c.problems.add('VLT-3035', 'session', 'A session record is not a session.');
            continue;
        }
        if (r.revoked !== null || r.expires <= now)
            continue;
        const where = `session ${r.id}`;
        if (!buf(r.mac) || !equal(r.mac, sessionMac(mac, r))) {
            c.problems.add('VLT-3021', where, 'The record failed its owner MAC.');
            continue;
        }
        grantsOf(r, where, entries, c.problems);
    }
}
/** The owner's seals over the audit and the state: sealed names, the state seal, the anchor. */
function checkAuditSeals(c) {
    const { tx, s, problems } = c;
    // Every audit record's sealed names open with the owner's audit key.
    const audit = tx.audit();
    for (const seq of unopenedNames(audit, s.auditKeys())) {
        problems.add('VLT-3031', `audit ${seq}`, 'Its sealed entry name does not open.');
    }
    // The sealed state (store/seal.ts): a record rolled back, changed or removed.
    const stateKey = s.stateKey();
    const sealProblem = stateKey === null ? null : tx.stateProblem(stateKey);
    if (sealProblem !== null)
        problems.add('VLT-3045', 'state', `${sealProblem}.`);
    // The owner's anchor: its MAC holds and the record it names is the one in
    // the chain. A vault with no anchor yet (migrated, no owner command since)
    // is not damaged; `audit --verify` says it is unanchored. A removed
    // anchor leaves its checksum behind, reported above.
    const anchor = tx.auditAnchor();
    if (anchor === null || SHAPES['audit-anchor']?.(anchor) !== true || !audit.every(auditShape)) {
        return;
    }
    const base = tx.auditBase();
    const key = s.anchorKey();
    try {
        const verdict = anchorVerdict(audit, anchor, key, c.header.vaultId, base);
        if (verdict.anchorProblem !== null) {
            const message = `The owner's anchor does not hold: ${verdict.anchorProblem}.`;
            problems.add('VLT-3033', 'audit-anchor', message);
        }
    }
    finally {
        wipe(key);
    }
}
/**
 * The agent name rows, the other way: each leads to a live agent of its own
 * name. A row is under no MAC, so a same-user agent can point `claude` at
 * `admin`'s record; lookups refuse that (agent-names.ts), and this says where.
 */
function agentNameRows(tx, agents, problems) {
    const byId = new Map(agents.filter(obj).map((a) => [a.id, a]));
    for (const r of tx.rawRecords()) {
        if (!r.key.startsWith(AGENT_NAME_ROW) || r.error !== undefined)
            continue;
        const name = r.key.slice(AGENT_NAME_ROW.length);
        const where = `agent-name ${JSON.stringify(name)}`;
        const a = typeof r.value === 'string' ? byId.get(r.value) : undefined;
        if (a === undefined || a.revoked !== null) {
            problems.add('VLT-3032', where, 'The agent name row leads to no live agent.');
        }
        else if (a.name !== name) {
            problems.add('VLT-3022', where, `The agent name row leads to the record of agent ${JSON.stringify(a.name)}.`);
        }
    }
}
function grantsOf(r, where, entries, problems) {
    for (const id of r.scope) {
        const e = entries.get(id);
        const g = r.grants[id];
        if (e === undefined)
            problems.add('VLT-3036', where, `An entry of its scope (${id}) is missing.`);
        else if (g === undefined)
            problems.add('VLT-3036', where, `It holds no key for entry ${id}.`);
        else if (g.gen !== e.gen)
            problems.add('VLT-3020', where, `Its key for entry ${id} is older than the entry.`);
    }
    for (const [hash, id] of Object.entries(r.index)) {
        if (!r.scope.includes(id)) {
            problems.add('VLT-3022', where, `Its index row ${hash.slice(0, 16)} leads outside its scope.`);
        }
    }
}
/**
 * The whole check of `store`, with the owner's session when the header allowed
 * an unlock; `seen` is the audit anchor the owner's client remembers.
 */
export async function checkStore(
/** The LMDB store file, read whole in a child first; null for a PostgreSQL store. */
path, openStore, unlock, now, seen) {
    const problems = new Problems();
    // Before this process opens it: opening a store with a damaged meta page crashes.
    const scan = path === null ? null : await scanStoreFile(path);
    if (scan !== null) {
        problems.add('VLT-3034', 'store', `The store file cannot be read whole: ${scan}.`);
        return { records: 0, entries: 0, agents: 0, auditRecords: 0, problems: problems.list };
    }
    const store = openStore();
    const records = store.read((tx) => tx.rawRecords());
    const { header, headerSound } = checkRecords(records, problems);
    const auditRecords = records.filter((r) => r.key.startsWith('audit/')).length;
    let counts = { entries: 0, agents: 0 };
    if (header !== null && headerSound) {
        const s = await unlock();
        try {
            counts = checkSealed(store, s, problems, now);
            // The anchor the owner's client remembers: an older one put back is a cut log.
            const cut = seen === undefined
                ? null
                : store.read((tx) => rememberedAnchorProblem(tx, s.vaultId, seen));
            if (cut !== null)
                problems.add('VLT-3033', 'audit-anchor', `The audit log was cut back: ${cut}.`);
        }
        catch (err) {
            const code = err instanceof VaultError ? err.code : damageCode(err);
            if (code === null)
                throw err;
            problems.add(code, 'vault', err instanceof Error ? err.message : 'damaged');
        }
        finally {
            s.wipe();
        }
    }
    return {
        records: records.length,
        ...counts,
        auditRecords,
        problems: problems.list,
    };
}
