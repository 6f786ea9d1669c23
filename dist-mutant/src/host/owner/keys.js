/**
 * The owner's side of the key hierarchy: creating a vault, and unlocking it
 * with the passphrase (Argon2id -> owner key -> root key) or the recovery key,
 * into an OwnerSession (owner-session.ts); rekeying.
 */
import { mkdirSync } from 'node:fs';
import { VaultError } from '../../core/errors.js';
import { DEFAULT_TIER } from '../../core/names.js';
import { newKey, randomBytes, seal, unwrapKey, wipe } from '../../crypto/aead.js';
import { newKeyPair, sealTo } from '../../crypto/box.js';
import { keyedHash } from '../../crypto/hash.js';
import { kdfParamsSane, newKdfParams, passphraseKey } from '../../crypto/kdf.js';
import { RECOVERY_PREFIX, decodeKeyString, encodeKeyString } from '../../crypto/token.js';
import { SCHEMA_VERSION, } from '../../store/schema.js';
import { ownerEvent } from '../audit/event.js';
import { anchorAudit, appendAudit } from '../audit/log.js';
import { addGrants, openName, recordIndexKey, agentMacHolds, sessionMacHolds, withAgentMac, withSessionMac, } from '../keys/grants.js';
import { migrate } from '../keys/migrate.js';
import { OwnerSession } from './session.js';
import { sessionLive } from '../agent/sessions.js';
import { slots } from '../keys/slots.js';
// Where they lived before they had modules of their own; server.ts and the
// maintenance operations import them from here.
export { ownerEvent } from '../audit/event.js';
export { OwnerSession } from './session.js';
export const MIN_PASSPHRASE_CHARS = 8;
/** Whether `passphrase` is acceptable for a new vault. @throws VaultError VLT-1002 */
export function checkNewPassphrase(passphrase) {
    if ([...passphrase.expose().toString('utf8')].length < MIN_PASSPHRASE_CHARS) {
        throw new VaultError('VLT-1002', `Passphrases are at least ${MIN_PASSPHRASE_CHARS} characters.`);
    }
}
/**
 * Creates the vault: header, default tier, audit key pair; returns the recovery key (shown once).
 * `testWeakKdf`: libsodium's minimum Argon2id costs, for the test suites only.
 * @throws VaultError VLT-3006 when a vault exists, VLT-1002 for a short passphrase.
 */
export async function createVault(ctx, passphrase, source, testWeakKdf = false) {
    checkNewPassphrase(passphrase);
    if (ctx.hasVault())
        throw new VaultError('VLT-3006');
    mkdirSync(ctx.dir, { recursive: true, mode: 0o700 });
    const vaultId = randomBytes(16);
    const kdf = newKdfParams(testWeakKdf);
    const ownerKey = await passphraseKey(passphrase.expose(), kdf);
    const root = newKey();
    const recovery = newKey();
    const indexKey = newKey();
    const tier = newKey();
    const audit = newKeyPair();
    const mac = newKey();
    try {
        const header = {
            schema: SCHEMA_VERSION,
            vaultId,
            kdf,
            rootByOwner: seal(ownerKey, root, slots.rootByOwner(vaultId)),
            rootByRecovery: seal(recovery, root, slots.rootByRecovery(vaultId)),
            indexKey: seal(root, indexKey, slots.indexKey(vaultId)),
            macKey: seal(root, mac, slots.macKey(vaultId)),
            auditPublicKey: audit.publicKey,
            auditSecretKey: seal(root, audit.secretKey, slots.auditSecretKey(vaultId)),
            tiers: { [DEFAULT_TIER]: seal(root, tier, slots.tierKey(vaultId, DEFAULT_TIER)) },
            created: ctx.now(),
        };
        ctx.createStore();
        ctx.commit((tx) => {
            // Two creates racing: the second finds the first's header inside its own transaction.
            if (tx.header() !== null)
                throw new VaultError('VLT-3006');
            tx.putHeader(header);
            appendAudit(tx, header, ownerEvent(ctx, 'vault_create', source));
            anchorAudit(tx, vaultId, keyedHash(mac, 'audit-anchor-key'), ctx.now());
        });
        return { recoveryKey: encodeKeyString(RECOVERY_PREFIX, recovery) };
    }
    finally {
        wipe(ownerKey, root, recovery, indexKey, tier, audit.secretKey, mac);
    }
}
/** @throws VaultError VLT-3023 for a vault of a newer format than this build reads. */
export function checkSchema(header) {
    if (header.schema > SCHEMA_VERSION)
        throw new VaultError('VLT-3023');
}
/** The owner session a root key opens. @throws VaultError VLT-3003 when the index key does not open. */
export function sessionFromRoot(header, root) {
    const indexKey = unwrapKey(root, header.indexKey, slots.indexKey(header.vaultId));
    if (indexKey === null)
        throw new VaultError('VLT-3003');
    return new OwnerSession(header, root, indexKey);
}
/** The wait before the first retry after a wrong passphrase; it doubles with each further one. */
export const FAILURE_BASE_MS = 250;
/** The longest wait a guessing process earns. */
export const FAILURE_MAX_MS = 30_000;
/** How long after the last refusal the next attempt waits, with `count` refusals since the last unlock. */
export function failureDelay(count) {
    return count <= 0 ? 0 : Math.min(FAILURE_BASE_MS * 2 ** (count - 1), FAILURE_MAX_MS);
}
const throttles = new WeakMap();
function throttleOf(ctx) {
    let t = throttles.get(ctx);
    if (t === undefined) {
        t = { guessers: new Map(), kdf: Promise.resolve() };
        throttles.set(ctx, t);
    }
    return t;
}
/** The guesser of `source`; guessers with nothing queued whose delay has run out are forgotten. */
function guesserOf(t, source, now) {
    for (const [k, g] of t.guessers) {
        if (g.waiting === 0 && now - g.last > FAILURE_MAX_MS)
            t.guessers.delete(k);
    }
    let g = t.guessers.get(source);
    if (g === undefined) {
        g = { count: 0, last: 0, queue: Promise.resolve(), waiting: 0 };
        t.guessers.set(source, g);
    }
    return g;
}
/** Runs `fn` after every key derivation asked for before it: many guessers cost the host CPU in turn, not at once. */
function inTurn(t, fn) {
    const next = t.kdf.then(fn, fn);
    t.kdf = next.catch(() => undefined);
    return next;
}
/**
 * Runs one unlock attempt after its guesser's earlier attempts and after the
 * delay that guesser's wrong answers ask for; then, with the other guessers'
 * attempts in turn, the check itself. A wrong answer is audited
 * (`passphrase_failed`, its ordinal since the last unlock in the subject) and
 * counted in the store in one transaction; the first success resets that
 * count. The delay is the guesser's: a process with 8 wrong guesses queued
 * waits up to 30 s for each, and the owner's command, from its own process,
 * does not wait for them.
 */
function gated(ctx, source, attempt) {
    const t = throttleOf(ctx);
    const g = guesserOf(t, source, ctx.now());
    const run = async () => {
        const wait = g.last + failureDelay(g.count) - ctx.now();
        if (wait > 0)
            await new Promise((r) => setTimeout(r, Math.min(wait, FAILURE_MAX_MS)));
        return inTurn(t, async () => {
            const { header, failures } = ctx
                .store()
                .read((tx) => ({ header: ctx.header(tx), failures: tx.ownerFailures() }));
            checkSchema(header);
            try {
                let s = await attempt(header);
                g.count = 0;
                if (failures.count > 0)
                    ctx.commit((tx) => tx.putOwnerFailures({ count: 0, last: 0 }));
                if (header.schema < SCHEMA_VERSION)
                    s = migrate(ctx, s, source);
                return s;
            }
            catch (err) {
                if (err instanceof VaultError && err.code === 'VLT-3002') {
                    g.count++;
                    g.last = ctx.now();
                    ctx.commit((tx) => {
                        const count = tx.ownerFailures().count + 1;
                        tx.putOwnerFailures({ count, last: ctx.now() });
                        appendAudit(tx, ctx.header(tx), {
                            ...ownerEvent(ctx, 'passphrase_failed', source, { subject: `attempt ${count}` }),
                            outcome: 'VLT-3002',
                        });
                    });
                }
                throw err;
            }
        });
    };
    g.waiting++;
    const next = g.queue.then(run, run).finally(() => g.waiting--);
    g.queue = next.catch(() => undefined);
    return next;
}
/**
 * Unlocks with the passphrase, after the delay earlier wrong ones ask for.
 * @throws VaultError VLT-3001 no vault, VLT-3002 wrong passphrase (audited), VLT-3003 a doctored header.
 */
export function unlockOwner(ctx, passphrase, source = 'local') {
    return gated(ctx, source, async (header) => {
        if (!kdfParamsSane(header.kdf))
            throw new VaultError('VLT-3003');
        const ownerKey = await passphraseKey(passphrase.expose(), header.kdf);
        try {
            const root = unwrapKey(ownerKey, header.rootByOwner, slots.rootByOwner(header.vaultId));
            if (root === null)
                throw new VaultError('VLT-3002');
            return sessionFromRoot(header, root);
        }
        finally {
            wipe(ownerKey);
        }
    });
}
/** Unlocks with the recovery key printed at `vault create`. @throws VaultError VLT-3002 (audited) */
export function unlockWithRecovery(ctx, recoveryKey, source = 'local') {
    return gated(ctx, source, async (header) => {
        const text = recoveryKey.expose().toString('utf8').trim();
        const key = decodeKeyString(RECOVERY_PREFIX, text, 32);
        if (key === null)
            throw new VaultError('VLT-3002', 'Wrong recovery key.');
        const root = unwrapKey(key, header.rootByRecovery, slots.rootByRecovery(header.vaultId));
        wipe(key);
        if (root === null)
            throw new VaultError('VLT-3002', 'Wrong recovery key.');
        return sessionFromRoot(header, root);
    });
}
/**
 * `vault rekey`: a new root key, recovery key, tier keys, owner index key and
 * MAC key, in one write transaction. Every data key is re-wrapped under its
 * tier's new key, the owner's name rows re-keyed, every live agent and session
 * checked against the old MAC, then given a new index and MAC; the audit key
 * pair is kept (old records stay readable), its secret key re-wrapped. The
 * old passphrase header, recovery key and root key open nothing after.
 * Returns the new recovery key (shown once).
 */
export async function rekeyVault(ctx, s, passphrase, source) {
    const kdf = newKdfParams();
    const ownerKey = await passphraseKey(passphrase.expose(), kdf);
    const root = newKey();
    const recovery = newKey();
    const indexKey = newKey();
    const mac = newKey();
    const fresh = [];
    const s2 = new OwnerSession(s.header, root, indexKey);
    try {
        ctx.commit((tx) => {
            const h = ctx.header(tx);
            const v = h.vaultId;
            // Records whose MAC fails keep their old grants and stay unvouched for
            // (they fail under the new MAC key too); the rest are re-granted below.
            const altered = new Set();
            for (const a of tx.agents())
                if (!agentMacHolds(s, a))
                    altered.add(a.id);
            for (const r of tx.sessions())
                if (!sessionMacHolds(s, r))
                    altered.add(r.id);
            const { tierKeys, tiers } = newTierKeys(h, root, fresh);
            const h2 = {
                ...h,
                kdf,
                rootByOwner: seal(ownerKey, root, slots.rootByOwner(v)),
                rootByRecovery: seal(recovery, root, slots.rootByRecovery(v)),
                indexKey: seal(root, indexKey, slots.indexKey(v)),
                macKey: seal(root, mac, slots.macKey(v)),
                auditSecretKey: seal(root, s.auditKeys().secretKey, slots.auditSecretKey(v)),
                tiers,
                // The state key stays (hosts and tokens hold it); only its wrap is new.
                ...rewrappedStateKey(s, root, v),
            };
            tx.putHeader(h2);
            s2.adopt(h2);
            const entries = rewrapEntries(tx, s, s2, h, tierKeys);
            regrantRecords(tx, s2, h2, entries, altered, ctx.now());
            appendAudit(tx, h2, ownerEvent(ctx, 'vault_rekey', source));
            anchorAudit(tx, v, s2.anchorKey(), ctx.now(), s.anchorKey());
        });
        return { recoveryKey: encodeKeyString(RECOVERY_PREFIX, recovery) };
    }
    finally {
        s2.wipe();
        wipe(ownerKey, recovery, mac, ...fresh);
    }
}
/** A new key for each of header `h`'s tiers, and each sealed by `root`; the keys are also pushed on `fresh`, to be wiped. */
function newTierKeys(h, root, fresh) {
    const tierKeys = new Map();
    const tiers = {};
    for (const t of Object.keys(h.tiers)) {
        const k = newKey();
        fresh.push(k);
        tierKeys.set(t, k);
        tiers[t] = seal(root, k, slots.tierKey(h.vaultId, t));
    }
    return { tierKeys, tiers };
}
/**
 * Every entry's data key re-wrapped under its tier's new key, and the owner's
 * name row moved from `s`'s index key to `s2`'s. Returns the entries as stored.
 * @throws VaultError VLT-3003 when a name does not open or a tier has no key.
 */
function rewrapEntries(tx, s, s2, h, tierKeys) {
    const entries = new Map();
    for (const e of tx.entries()) {
        const dk = s.dataKey(h, e);
        try {
            const name = openName(h, dk, e);
            const tk = tierKeys.get(e.tier);
            if (name === null || tk === undefined)
                throw new VaultError('VLT-3003');
            const next = { ...e, dataKey: seal(tk, dk, slots.dataKey(h.vaultId, e.id, e.tier, e.gen)) };
            tx.putEntry(next);
            entries.set(e.id, next);
            tx.removeName(s.nameHash(name));
            tx.putName(s2.nameHash(name), e.id);
        }
        finally {
            wipe(dk);
        }
    }
    return entries;
}
/**
 * Every agent and live session whose MAC held (not in `altered`) given a new
 * index and grants of the `entries` it held, MACed under `s2`; a revoked agent
 * keeps no grant but its new MAC.
 */
function regrantRecords(tx, s2, h2, entries, altered, now) {
    const regrant = (r, kind) => {
        const ik = recordIndexKey(s2, kind, r.id);
        const held = Object.keys(r.grants ?? {}).flatMap((id) => entries.get(id) ?? []);
        const g = addGrants(s2, h2, r.publicKey, ik, { grants: {}, index: {} }, held);
        return { ...r, ...g, indexKey: sealTo(r.publicKey, ik) };
    };
    for (const a of tx.agents()) {
        if (altered.has(a.id))
            continue;
        tx.putAgent(withAgentMac(s2, a.revoked === null ? regrant(a, 'agent') : a));
    }
    for (const r of tx.sessions()) {
        if (altered.has(r.id) || !sessionLive(r, now))
            continue;
        tx.putSession(withSessionMac(s2, regrant(r, 'session')));
    }
}
/** The state key (store/seal.ts) wrapped by a new root key, when the vault is sealed. */
function rewrappedStateKey(s, root, v) {
    const key = s.stateKey();
    return key === null ? {} : { stateKey: seal(root, key, slots.stateKey(v)) };
}
