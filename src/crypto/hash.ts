/** Keyed hashing (name lookups, the audit chain) and constant-time comparison. */
import { hash } from 'node:crypto';
import sodium from 'sodium-native';
import { slot } from './aead.js';

/** BLAKE2b-256 of the length-prefixed parts, keyed. Names are looked up by this, never stored. */
export function keyedHash(key: Buffer | null, ...parts: (string | Uint8Array | number)[]): Buffer {
  const out = Buffer.alloc(32);
  if (key === null) sodium.crypto_generichash(out, slot(...parts));
  else sodium.crypto_generichash(out, slot(...parts), key);
  return out;
}

/**
 * SHA-256 of `input` into `out` (32 bytes): a sealed record's checksum
 * (store/seal.ts), 300,000 of them at a team host's cold start (issue 37).
 * libsodium's call costs a third of Node's one-shot `hash` (which makes a
 * Buffer of its output) but hashes at a quarter of its speed (OpenSSL uses
 * the CPU's SHA instructions): CPU µs a hash here, sodium/Node, 0.47/1.31 at
 * 34 bytes, 1.09/1.43 at 200, 2.71/1.99 at 600.
 */
export function sha256Into(out: Uint8Array, input: Uint8Array): void {
  if (input.length < 320) sodium.crypto_hash_sha256(out, input);
  else out.set(hash('sha256', input, 'buffer'));
}

/** Constant-time equality after a length check. */
export function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && sodium.sodium_memcmp(a, b);
}
