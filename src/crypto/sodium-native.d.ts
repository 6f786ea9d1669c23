// The subset of sodium-native (v5) this project calls. Kept by hand: the
// published @types package describes an older API.
declare module 'sodium-native' {
  type Buf = Buffer | Uint8Array;
  export const crypto_aead_xchacha20poly1305_ietf_KEYBYTES: number;
  export const crypto_aead_xchacha20poly1305_ietf_NPUBBYTES: number;
  export const crypto_aead_xchacha20poly1305_ietf_ABYTES: number;
  export function crypto_aead_xchacha20poly1305_ietf_encrypt(
    c: Buf,
    m: Buf,
    ad: Buf | null,
    nsec: null,
    npub: Buf,
    k: Buf,
  ): number;
  /** Throws when authentication fails. */
  export function crypto_aead_xchacha20poly1305_ietf_decrypt(
    m: Buf,
    nsec: null,
    c: Buf,
    ad: Buf | null,
    npub: Buf,
    k: Buf,
  ): number;
  export const crypto_pwhash_SALTBYTES: number;
  export const crypto_pwhash_ALG_ARGON2ID13: number;
  export const crypto_pwhash_OPSLIMIT_MIN: number;
  export const crypto_pwhash_MEMLIMIT_MIN: number;
  export function crypto_pwhash_async(
    out: Buf,
    passwd: Buf,
    salt: Buf,
    opslimit: number,
    memlimit: number,
    alg: number,
  ): Promise<void>;
  export const crypto_box_PUBLICKEYBYTES: number;
  export const crypto_box_SECRETKEYBYTES: number;
  export const crypto_box_SEALBYTES: number;
  export function crypto_box_keypair(pk: Buf, sk: Buf): void;
  export function crypto_box_seal(c: Buf, m: Buf, pk: Buf): void;
  /** Returns false when the box does not open. */
  export function crypto_box_seal_open(m: Buf, c: Buf, pk: Buf, sk: Buf): boolean;
  export const crypto_kdf_CONTEXTBYTES: number;
  export function crypto_kdf_derive_from_key(sub: Buf, id: number, ctx: Buf, key: Buf): void;
  export function crypto_hash_sha256(out: Buf, input: Buf): void;
  export function crypto_generichash(out: Buf, input: Buf, key?: Buf): void;
  export function crypto_generichash_batch(out: Buf, batch: readonly Buf[], key?: Buf): void;
  export const crypto_scalarmult_BYTES: number;
  /** Throws when the result is the all-zero point (a low-order public key). */
  export function crypto_scalarmult(q: Buf, n: Buf, p: Buf): void;
  export function randombytes_buf(buf: Buf): void;
  export function sodium_malloc(size: number): Buffer;
  export function sodium_memzero(buf: Buf): void;
  export function sodium_memcmp(a: Buf, b: Buf): boolean;
}
