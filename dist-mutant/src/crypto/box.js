/**
 * Sealed boxes: anyone with the public key can seal, only the holder of the
 * secret key can open. The host seals audit names to the owner (it can append
 * records it cannot read back) and seals tier keys to an agent's key pair (the
 * owner can grant a tier without knowing the agent's token).
 */
import sodium from 'sodium-native';
import { allocate } from './aead.js';
export function newKeyPair() {
    const publicKey = Buffer.alloc(sodium.crypto_box_PUBLICKEYBYTES);
    const secretKey = sodium.sodium_malloc(sodium.crypto_box_SECRETKEYBYTES);
    sodium.crypto_box_keypair(publicKey, secretKey);
    return { publicKey, secretKey };
}
export function sealTo(publicKey, message) {
    const out = Buffer.alloc(message.length + sodium.crypto_box_SEALBYTES);
    sodium.crypto_box_seal(out, message, publicKey);
    return out;
}
/** The message, or null when the box is not for this key pair or was altered. */
export function openSealed(pair, box, secure = false) {
    if (box.length < sodium.crypto_box_SEALBYTES)
        return null;
    const n = box.length - sodium.crypto_box_SEALBYTES;
    const out = allocate(n, secure);
    return sodium.crypto_box_seal_open(out, box, pair.publicKey, pair.secretKey) ? out : null;
}
