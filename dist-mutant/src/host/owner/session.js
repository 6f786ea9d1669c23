/**
 * The owner's keys for one request, opened from the root key: the index key
 * (names), tier keys, the data keys under them, the MAC key (agent and session
 * records) and the audit key pair. Wiped at the request's end.
 */
import { VaultError, needsHardwareKey, needsPassphraseItself } from '../../core/errors.js';
import { newKey, seal, unwrapKey, wipe } from '../../crypto/aead.js';
import { keyedHash } from '../../crypto/hash.js';
import { newKdfParams, passphraseKey } from '../../crypto/kdf.js';
import { slots } from '../keys/slots.js';
export class OwnerSession {
    current;
    root;
    indexKey;
    tierCache = new Map();
    /** Set by OwnerSessions.use when a hold or the terminal's session stands for the passphrase. */
    provedBy = 'passphrase';
    audit = null;
    mac = null;
    constructor(current, root, indexKey) {
        this.current = current;
        this.root = root;
        this.indexKey = indexKey;
    }
    /**
     * An owner session only tightens: what releases a value or loosens a rule
     * needs the passphrase with the request (or the hold of the process that
     * sent it); with a hardware key enrolled, a touch of the key bound to the
     * request instead (keyGate). A terminal's session alone could be any process on that
     * terminal: a git hook, a package script or a direnv `.envrc` the agent
     * wrote, run by the owner's next command.
     * @param what what is released or loosened, as the refusal names it ("Revealing a value").
     * @throws VaultError VLT-2055 naming `what`, when the terminal's session alone proved it;
     *   VLT-2070 when the key is needed and the request came without its confirmation.
     */
    requireProof(what) {
        if (this.keyGate) {
            if (this.keyConfirmed)
                return;
            throw needsHardwareKey(what);
        }
        if (this.provedBy !== 'terminal')
            return;
        throw needsPassphraseItself(what);
    }
    /**
     * Set by the owner gate (ops/op.ts) when a hardware key is enrolled and
     * the caller's terminal holds an open owner session (whether or not the
     * passphrase came with the request): what releases or loosens then needs
     * a touch of the key, confirmed for this very request (VLT-2070).
     */
    keyGate = false;
    /** Set when this request came with an enrolled key's assertion over its own op and arguments. */
    keyConfirmed = false;
    /** The header as this session last saw or wrote it. */
    get header() {
        return this.current;
    }
    /** Takes the header a migration wrote (same root key). */
    adopt(header) {
        this.current = header;
    }
    get vaultId() {
        return this.header.vaultId;
    }
    /** The keyed hash that stands for an entry name in the store. */
    nameHash(name) {
        return keyedHash(this.indexKey, 'entry', name).toString('hex');
    }
    /**
     * The key that MACs agent and session records (schema 2).
     * @throws VaultError VLT-3003 when it does not open.
     */
    macKey() {
        if (this.mac === null) {
            const wrapped = this.header.macKey;
            const key = wrapped === undefined ? null : unwrapKey(this.root, wrapped, slots.macKey(this.vaultId));
            if (key === null)
                throw new VaultError('VLT-3003');
            this.mac = key;
        }
        return this.mac;
    }
    /** The key of the audit anchor: derived from the MAC key, so only the root key reaches it. */
    anchorKey() {
        return keyedHash(this.macKey(), 'audit-anchor-key');
    }
    /**
     * The vault's state key (store/seal.ts), or null before the vault is sealed.
     * @throws VaultError VLT-3003 when it does not open.
     */
    stateKey() {
        const wrapped = this.header.stateKey;
        if (wrapped === undefined)
            return null;
        const key = unwrapKey(this.root, wrapped, slots.stateKey(this.vaultId));
        if (key === null)
            throw new VaultError('VLT-3003');
        return key;
    }
    /** The root key, for the schema migration only. */
    rootKey() {
        return this.root;
    }
    /** A tier's key; VLT-3003 when the stored wrap does not open. Null for an unknown tier. */
    tierKey(header, tier) {
        const cached = this.tierCache.get(tier);
        if (cached !== undefined)
            return cached;
        const wrapped = header.tiers[tier];
        if (wrapped === undefined)
            return null;
        const key = unwrapKey(this.root, wrapped, slots.tierKey(header.vaultId, tier));
        if (key === null)
            throw new VaultError('VLT-3003');
        this.tierCache.set(tier, key);
        return key;
    }
    /** Adds a tier to the header (inside the caller's transaction) and returns its key. */
    ensureTier(tx, tier) {
        const header = tx.header() ?? this.header;
        const existing = this.tierKey(header, tier);
        if (existing !== null)
            return { header, key: existing };
        const key = newKey();
        const next = {
            ...header,
            tiers: { ...header.tiers, [tier]: seal(this.root, key, slots.tierKey(header.vaultId, tier)) },
        };
        tx.putHeader(next);
        this.tierCache.set(tier, key);
        return { header: next, key };
    }
    /** The entry's data key; from `arena` when given (a request opening many), else guarded memory of its own. */
    dataKey(header, e, arena) {
        const tierKey = this.tierKey(header, e.tier);
        const key = tierKey &&
            unwrapKey(tierKey, e.dataKey, slots.dataKey(header.vaultId, e.id, e.tier, e.gen), arena);
        if (!key)
            throw new VaultError('VLT-3003');
        return key;
    }
    auditKeys() {
        if (this.audit === null) {
            const secretKey = unwrapKey(this.root, this.header.auditSecretKey, slots.auditSecretKey(this.vaultId));
            if (secretKey === null)
                throw new VaultError('VLT-3003');
            this.audit = { publicKey: this.header.auditPublicKey, secretKey };
        }
        return this.audit;
    }
    /**
     * Keeps the audit key pair alone and wipes everything else (root, index and
     * tier keys): for `audit --follow`, which reads the audit log for as long as
     * the owner watches and needs nothing more. The caller wipes the returned
     * secret key when it is done; `wipe()` no longer reaches it.
     */
    keepAuditKeysOnly() {
        const keys = this.auditKeys();
        this.audit = null;
        this.wipe();
        return keys;
    }
    /** The root key re-wrapped by a new passphrase. */
    async rewrapRoot(passphrase) {
        const kdf = newKdfParams();
        const ownerKey = await passphraseKey(passphrase.expose(), kdf);
        try {
            return { kdf, rootByOwner: seal(ownerKey, this.root, slots.rootByOwner(this.vaultId)) };
        }
        finally {
            wipe(ownerKey);
        }
    }
    wipe() {
        wipe(this.root, this.indexKey, this.audit?.secretKey, this.mac);
        for (const k of this.tierCache.values())
            wipe(k);
        this.tierCache.clear();
    }
}
