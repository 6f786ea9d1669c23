/**
 * Every operation's request body, defined once: the host decodes each body
 * with its entry here before any handler runs (src/host/ops), and the client's
 * request types (`Ops[op]['req']`, protocol.ts) are derived from the same
 * entries, so the two cannot drift. Fields are decoded in the order written;
 * the first bad one is the one reported. The client imports this file for
 * types only.
 */
import { anything, bad, finite, flag, list, object, oneOf, optCount, optWhole, optional, str, strList, } from './decode.js';
import { VaultError } from './errors.js';
import { DEFAULT_LIMITS } from './policy.js';
/**
 * References one `resolve` may name (a render's distinct references, a proxy
 * request's): more is refused whole (VLT-1006) before any lookup, so a
 * request's cost and what it adds to the store stay bounded.
 */
export const MAX_REFS = 1000;
/** Fields one `sweep.mark` may name: a sweep sends its findings in batches of at most this many. */
export const MAX_SWEEP_MARKS = 1000;
/** A field the client may leave out, though the host reads it the same way (a default). */
function absentOk(d) {
    return d;
}
/** A whole number of at least 1. */
const seqNumber = (v, key) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
        throw bad(`${key} must be a count`);
    return v;
};
/** The anchor the owner's client remembers from its last command (protocol.ts AnchorRef). */
const seenAnchor = optional(object({ vault: str, seq: seqNumber, hash: str }));
/**
 * The owner's proof: taken out of the raw bytes on the host (owner-secrets.ts);
 * absent: the caller's terminal's owner session stands for it (owner-unlock.ts);
 * with it, the audit anchor the owner's client last saw.
 */
/**
 * `keyProof`: an enrolled key's assertion over a challenge bound to this very
 * request (`owner.confirm`), for what an owner session with a key enrolled
 * does not stand for alone (src/host/owner/confirm.ts finishConfirm).
 */
const keyProof = optional(object({ challengeId: str, result: anything }));
const owner = { passphrase: optional(str), seenAnchor, keyProof };
/** An agent's or a session's token. */
const agent = { token: str };
const auditFilter = { agent: optional(str), since: optWhole, afterSeq: optWhole };
const limits = (v, key) => {
    // Anything but an object reads as no limits given: the defaults (values a minute: absent).
    const given = object({ perMinute: optCount, perHour: optCount, valuesPerMinute: optCount }, { loose: true })(v, key);
    return {
        perMinute: given.perMinute ?? DEFAULT_LIMITS.perMinute,
        perHour: given.perHour ?? DEFAULT_LIMITS.perHour,
        ...(given.valuesPerMinute === undefined ? {} : { valuesPerMinute: given.valuesPerMinute }),
    };
};
const refs = list(object({ entry: str, field: str }, { loose: true }), {
    what: 'refs must be a list of references',
    min: 1,
    max: MAX_REFS,
    tooMany: (n) => new VaultError('VLT-1006', `One request names at most ${MAX_REFS} references; this one names ${n}. Nothing was resolved.`),
});
/**
 * Entries one `entry.import` may carry; the host's 4 MiB body limit bounds
 * their values, this their count (and the transaction's records).
 */
export const MAX_IMPORT_ENTRIES = 5000;
const importEntries = list(object({
    name: str,
    fields: list(object({ field: str, value: str }), {
        what: 'fields must be a list of fields',
        min: 1,
        max: 256,
        tooMany: () => new VaultError('VLT-1002', 'An imported entry has at most 256 fields.'),
    }),
}), {
    what: 'entries must be a list of entries',
    min: 1,
    max: MAX_IMPORT_ENTRIES,
    tooMany: () => new VaultError('VLT-1002', `One import request carries at most ${MAX_IMPORT_ENTRIES} entries; nothing was imported.`),
});
const agentKind = (v, key) => {
    const kind = str(v, key);
    if (kind !== 'ai' && kind !== 'script') {
        throw new VaultError('VLT-1002', 'Agent kinds are ai and script.');
    }
    return kind;
};
export const REQUESTS = {
    status: object({}),
    // Optional: a host with no vault stops for anyone (ops/host.ts).
    shutdown: object({ passphrase: optional(str) }),
    whoami: object({ ...agent }),
    read: object({ mode: oneOf(['get', 'totp']), ...agent, entry: str, field: str }),
    /**
     * `request`: the proxy request the values go into (its method and target),
     * for the agent's request caveats (core/caveats.ts); absent for a render.
     */
    resolve: object({
        refs,
        ...agent,
        host: optional(str),
        request: optional(object({ method: str, target: str })),
    }),
    /**
     * The proxy reports what it refused that counts against the agent whose
     * token it carries (access.ts reportSignal); it names no other agent.
     */
    report: object({ ...agent, kind: oneOf(['host_mismatch']), host: str, refs }),
    /**
     * The proxy's AWS SigV4 re-sign (host/agent/sigv4.ts): the pieces a request
     * signed with a surrogate key id covers; the host signs with the real key.
     */
    sign: object({
        ...agent,
        host: str,
        surrogate: str,
        method: str,
        path: str,
        query: str,
        headers: strList,
        date: str,
        region: str,
        service: str,
        payloadHash: str,
    }),
    /**
     * An SSH signature made in the host with an entry's key (docs/ssh.md):
     * base64 key blob and data, the agent protocol's flags, and the
     * session-binds the caller's connection carried (at most 16).
     */
    /** The public keys of the entries named (`vault-cli ssh-agent`), at most 16. */
    'ssh.keys': object({
        ...agent,
        entries: list(str, {
            what: 'entries must be a list of names',
            min: 1,
            max: 16,
            tooMany: () => bad('entries: at most 16'),
        }),
    }),
    'ssh.sign': object({
        ...agent,
        entry: str,
        key: str,
        data: str,
        flags: optWhole,
        binds: list(str, {
            what: 'binds must be a list',
            min: 0,
            max: 16,
            tooMany: () => bad('binds: at most 16'),
        }),
    }),
    /** `testWeakKdf`: the test-only switch (VAULT_TEST_WEAK_KDF=1), libsodium's minimum Argon2id costs. */
    'vault.create': object({ ...owner, testWeakKdf: flag, store: optional(str) }),
    'vault.rekey': object({ ...owner }),
    'vault.passwd': object({
        newPassphrase: str,
        recoveryKey: optional(str),
        passphrase: optional(str),
    }),
    'vault.backup': object({ ...owner, path: str }),
    'vault.check': object({ ...owner }),
    'vault.restore': object({ ...owner, path: str, confirm: flag }),
    'vault.migrate': object({ ...owner, to: str }),
    'entry.set': object({ ...owner, entry: str, field: str, tier: optional(str), value: str }),
    'entry.rm': object({ ...owner, entry: str }),
    'entry.show': object({ ...owner, entry: str }),
    'entry.reveal': object({ ...owner, entry: str, field: str }),
    'entry.ls': object({ ...owner }),
    'entry.hosts': object({ ...owner, entry: str, hosts: strList }),
    /** `also`: names the rest of a chunked import will bring, checked for collisions with this chunk. */
    'entry.import': object({
        ...owner,
        entries: importEntries,
        existing: oneOf(['refuse', 'skip', 'overwrite']),
        also: absentOk(strList),
        tier: optional(str),
    }),
    'agent.add': object({ ...owner, kind: agentKind, name: str, scope: strList, limits }),
    'agent.ls': object({ ...owner }),
    'agent.show': object({ ...owner, name: str }),
    'agent.scope': object({ ...owner, name: str, add: strList, rm: strList }),
    'agent.limits': object({
        ...owner,
        name: str,
        perMinute: optCount,
        perHour: optCount,
        valuesPerMinute: optCount,
    }),
    'agent.lock': object({ ...owner, name: str }),
    /** Request caveats for one entry: `rules` replaces the agent's rules for it; `clear` lifts them. */
    'agent.caveats': object({ ...owner, name: str, entry: str, rules: strList, clear: flag }),
    // Entries counted as one credential in the minute window; none: the group removed.
    'agent.group': object({ ...owner, name: str, group: str, entries: strList }),
    // By name, or by id when the name no longer finds the agent (its name row altered).
    'agent.revoke': object({ ...owner, name: optional(str), id: optional(str) }),
    'session.start': object({
        ...owner,
        agent: str,
        scope: strList,
        ttlMs: optCount,
        sandbox: absentOk(flag),
    }),
    'session.hold': object({ ...agent }),
    'session.end': object({ ...agent }),
    /** `render --watch`: the entry names its template uses (src/host/entries/watch.ts). */
    watch: object({ ...agent, entries: strList }),
    // `recoveryKey`: stands in for an enrolled key's vouch (the passphrase is still asked).
    'key.begin': object({ ...owner, name: optional(str), origin: str, recoveryKey: optional(str) }),
    'key.vouch': object({ ...owner, challengeId: str, result: anything }),
    'key.finish': object({ ...owner, challengeId: str, result: anything }),
    'key.ls': object({ ...owner }),
    'key.rm': object({ ...owner, name: str }),
    'unlock.begin': object({ ...owner, name: str, origin: str }),
    'unlock.finish': object({ ...owner, challengeId: str, result: anything }),
    /** `last`: only the latest that many records (the dashboard's feed), not the whole log. */
    'audit.list': object({ ...owner, ...auditFilter, last: optCount }),
    'audit.follow': object({ ...auditFilter, ...owner }),
    'audit.archive': object({ ...owner, before: finite, path: str }),
    'owner.session': object({}),
    'owner.unlock': object({ passphrase: str, ttlMs: optCount, idleMs: optCount }),
    'owner.lock': object({}),
    /** A challenge for an enrolled key to confirm request `op` with `body` (the same body sent after). */
    'owner.confirm': object({ ...owner, origin: str, op: str, body: anything }),
    'audit.verify': object({ ...owner, archives: absentOk(strList) }),
    // `hold`: with the passphrase, keep the owner key for this process (owner-unlock.ts).
    'sweep.values': object({ ...owner, hold: flag, since: optWhole, stored: flag }),
    'sweep.unseal': object({ ...owner, sealedKey: str }),
    'sweep.mark': object({
        ...owner,
        hold: flag,
        found: list(object({ entry: str, field: str }), {
            what: 'found must be a list of entry fields',
            min: 0,
            max: MAX_SWEEP_MARKS,
            tooMany: () => bad(`found names at most ${MAX_SWEEP_MARKS} fields`),
        }),
    }),
};
