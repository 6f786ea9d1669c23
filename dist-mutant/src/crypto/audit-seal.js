/**
 * Audit names sealed per epoch. A sealed box (box.ts) costs an X25519 key pair
 * and a Diffie-Hellman per message; the host seals a name into nearly every
 * audit record, so it pays that once per epoch instead: an ephemeral key pair,
 * one X25519 with the owner's audit public key and a hash give the epoch key,
 * and each record's name is an XChaCha20-Poly1305 box under it. The epoch's
 * public key goes into each record, so the owner's audit secret key derives
 * the same epoch key from any one record, on its own (an archive may cut an
 * epoch anywhere).
 *
 * The host, like a sealed box's sender, keeps no way to open what earlier
 * epochs sealed: the ephemeral secret key is wiped as soon as the epoch key is
 * derived, and the epoch key when the epoch ends. What it holds in between
 * opens the names of the current epoch's records only.
 */
import sodium from 'sodium-native';
import { KEY_BYTES, open, sealWithNonce } from './aead.js';
export const EPOCH_PUBLIC_KEY_BYTES = sodium.crypto_box_PUBLICKEYBYTES;
const NONCE = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const LABEL = Buffer.from('vault-cli audit epoch v1', 'ascii');
/**
 * BLAKE2b-256 over the label, the shared point and both public keys (as
 * crypto_kx does), so the key names the epoch and the owner key it is for.
 */
function epochKey(shared, epochPublic, ownerPublic) {
    const key = sodium.sodium_malloc(KEY_BYTES);
    sodium.crypto_generichash_batch(key, [LABEL, shared, epochPublic, ownerPublic]);
    return key;
}
/**
 * The key of the epoch whose public key is `epochPublic`, in guarded memory,
 * from the owner's audit key pair; null for a low-order point, which no
 * epoch of this build made.
 */
export function deriveEpochKey(keys, epochPublic) {
    const shared = sodium.sodium_malloc(sodium.crypto_scalarmult_BYTES);
    try {
        sodium.crypto_scalarmult(shared, keys.secretKey, epochPublic);
        return epochKey(shared, epochPublic, keys.publicKey);
    }
    catch {
        return null;
    }
    finally {
        sodium.sodium_memzero(shared);
    }
}
/** The writer's side: one per epoch, in the host. */
export class SealEpoch {
    /** Goes into every record sealed under this epoch. */
    publicKey;
    /** The owner's audit public key this epoch seals to. */
    recipient;
    /** When the epoch started (ms, the caller's clock). */
    started;
    #key;
    /**
     * The nonce of the next seal. A counter, not random bytes: it cannot repeat
     * under one key (the key lives and dies with this object, and a seal whose
     * transaction is rolled back still used up its number), and it saves a
     * getrandom per record.
     */
    #next = 0;
    #wiped = false;
    constructor(publicKey, recipient, key, started) {
        this.publicKey = publicKey;
        this.recipient = recipient;
        this.#key = key;
        this.started = started;
    }
    /**
     * A fresh epoch for the owner's audit public key `recipient`.
     * @throws Error when `recipient` is not a usable X25519 public key (a low-order point).
     */
    static start(recipient, now) {
        const publicKey = Buffer.alloc(sodium.crypto_box_PUBLICKEYBYTES);
        const secretKey = sodium.sodium_malloc(sodium.crypto_box_SECRETKEYBYTES);
        const shared = sodium.sodium_malloc(sodium.crypto_scalarmult_BYTES);
        try {
            sodium.crypto_box_keypair(publicKey, secretKey);
            sodium.crypto_scalarmult(shared, secretKey, recipient);
            const key = epochKey(shared, publicKey, recipient);
            return new SealEpoch(publicKey, Buffer.from(recipient), key, now);
        }
        finally {
            sodium.sodium_memzero(secretKey);
            sodium.sodium_memzero(shared);
        }
    }
    /** How many seals this epoch made. */
    get sealed() {
        return this.#next;
    }
    get wiped() {
        return this.#wiped;
    }
    /** nonce || ciphertext || tag, as aead.ts lays a blob out. @throws Error once wiped. */
    seal(plaintext, ad) {
        if (this.#wiped)
            throw new Error('audit epoch ended');
        const n = this.#next++;
        return sealWithNonce(this.#key, plaintext, ad, (nonce) => {
            // The counter as a 64-bit big-endian number, in two halves (a BigInt per record cost more than the AEAD).
            nonce.writeUInt32BE(Math.floor(n / 2 ** 32), NONCE - 8);
            nonce.writeUInt32BE(n % 2 ** 32, NONCE - 4);
        });
    }
    /** Ends the epoch: its key is zeroed, nothing more is sealed under it. */
    wipe() {
        sodium.sodium_memzero(this.#key);
        this.#wiped = true;
    }
}
/**
 * The reader's side, with the owner's audit key pair: each epoch's key is
 * derived once (one X25519 per epoch, not per record) and kept until `wipe`.
 */
export class EpochOpener {
    #keys;
    #epochs = new Map();
    constructor(keys) {
        this.#keys = keys;
    }
    /** The plaintext, or null when the blob is not from an epoch of this key pair, or was altered. */
    open(epochPublic, blob, ad, secure = false) {
        if (epochPublic.length !== EPOCH_PUBLIC_KEY_BYTES)
            return null;
        const id = Buffer.from(epochPublic).toString('hex');
        let key = this.#epochs.get(id);
        if (key === undefined) {
            key = deriveEpochKey(this.#keys, epochPublic);
            this.#epochs.set(id, key);
        }
        return key === null ? null : open(key, blob, ad, secure);
    }
    /** Zeroes every epoch key derived; the opener derives them again if used after. */
    wipe() {
        for (const k of this.#epochs.values())
            if (k !== null)
                sodium.sodium_memzero(k);
        this.#epochs.clear();
    }
}
