/**
 * XChaCha20-Poly1305 with associated data. Every sealed blob is
 * nonce || ciphertext || tag, and its associated data names the slot it lives
 * in (vault id, entry id, field, version...), so a blob moved to another slot
 * fails to open.
 */
import sodium from 'sodium-native';
const NONCE = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const TAG = sodium.crypto_aead_xchacha20poly1305_ietf_ABYTES;
export const KEY_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES;
/** Room for the short-lived keys of one request: 64 keys, one page of guarded memory either way. */
const ARENA_BYTES = 2048;
/**
 * The keys of one request, cut from one guarded allocation. sodium_malloc maps
 * fresh pages for each call (mmap, three mprotects, mlock, madvise; munmap when
 * collected): a `resolve` took nine, measured at a fifth to a quarter of the
 * host's time per read. A request takes its keys from one arena instead, still
 * locked, guarded and kept out of core dumps, and wipes it whole when it ends.
 * A full or wiped arena hands out allocations of their own, as before.
 */
export class KeyArena {
    #mem = sodium.sodium_malloc(ARENA_BYTES);
    #used = 0;
    take(n) {
        if (this.#used + n > this.#mem.length)
            return sodium.sodium_malloc(n);
        const b = this.#mem.subarray(this.#used, this.#used + n);
        this.#used += n;
        return b;
    }
    /** Zeroes every key taken; nothing is handed out of this arena afterwards. */
    wipe() {
        sodium.sodium_memzero(this.#mem);
        this.#used = this.#mem.length;
    }
    /**
     * Zeroes every key taken and makes the whole arena usable again: for a pool
     * of per-request arenas. Whoever took a key from it must be done with it.
     */
    reset() {
        sodium.sodium_memzero(this.#mem);
        this.#used = 0;
    }
}
export function allocate(n, secure) {
    if (secure === false)
        return Buffer.alloc(n);
    return secure === true ? sodium.sodium_malloc(n) : secure.take(n);
}
/**
 * Associated data: each part length-prefixed, so ('ab','c') and ('a','bc') differ.
 * Written into one buffer: every keyed hash and seal of a resolve builds one, and
 * a buffer per part and per prefix, then their concatenation, was most of its cost.
 */
export function slot(...parts) {
    let n = 0;
    for (const part of parts) {
        n +=
            4 +
                (typeof part === 'number'
                    ? String(part).length
                    : typeof part === 'string'
                        ? Buffer.byteLength(part, 'utf8')
                        : part.length);
    }
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    for (const part of parts) {
        // A number's text is ASCII: utf8 writes the same bytes.
        const len = typeof part === 'object'
            ? (out.set(part, at + 4), part.length)
            : out.write(typeof part === 'number' ? String(part) : part, at + 4, 'utf8');
        out.writeUInt32BE(len, at);
        at += 4 + len;
    }
    return out;
}
export function seal(key, plaintext, ad) {
    return sealWithNonce(key, plaintext, ad, (nonce) => sodium.randombytes_buf(nonce));
}
/** `seal` with the nonce `setNonce` writes into the blob's first NONCE bytes (a counter's, audit-seal.ts). */
export function sealWithNonce(key, plaintext, ad, setNonce) {
    const out = Buffer.alloc(NONCE + plaintext.length + TAG);
    const nonce = out.subarray(0, NONCE);
    setNonce(nonce);
    sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(out.subarray(NONCE), plaintext, ad, null, nonce, key);
    return out;
}
/** The plaintext, or null when the blob is not authentic for this key and slot. */
export function open(key, blob, ad, secure = false) {
    if (blob.length < NONCE + TAG)
        return null;
    const n = blob.length - NONCE - TAG;
    const out = allocate(n, secure);
    try {
        sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(out, null, blob.subarray(NONCE), ad, blob.subarray(0, NONCE), key);
        return out;
    }
    catch {
        return null;
    }
}
/** A fresh random key in memory that sodium guards (no swap, zeroed on free). */
export function newKey() {
    const k = sodium.sodium_malloc(KEY_BYTES);
    sodium.randombytes_buf(k);
    return k;
}
/** Opens a wrapped key into guarded memory (its own, or `arena`'s); null when it does not open. */
export function unwrapKey(key, blob, ad, arena) {
    const k = open(key, blob, ad, arena ?? true);
    return k !== null && k.length === KEY_BYTES ? k : null;
}
export function randomBytes(n) {
    const b = Buffer.alloc(n);
    sodium.randombytes_buf(b);
    return b;
}
/** Best-effort zeroing; see secret.ts for why it is only best effort. */
export function wipe(...bufs) {
    for (const b of bufs)
        if (b)
            sodium.sodium_memzero(b);
}
