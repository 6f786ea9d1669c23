/** Keyed hashing (name lookups, the audit chain) and constant-time comparison. */
import sodium from 'sodium-native';
import { slot } from './aead.js';
/** BLAKE2b-256 of the length-prefixed parts, keyed. Names are looked up by this, never stored. */
export function keyedHash(key, ...parts) {
    const out = Buffer.alloc(32);
    if (key === null)
        sodium.crypto_generichash(out, slot(...parts));
    else
        sodium.crypto_generichash(out, slot(...parts), key);
    return out;
}
/** Constant-time equality after a length check. */
export function equal(a, b) {
    return a.length === b.length && sodium.sodium_memcmp(a, b);
}
