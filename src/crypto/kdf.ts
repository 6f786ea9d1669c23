/**
 * Key derivation: Argon2id for the owner passphrase (slow, on the owner path
 * only) and a fast KDF for agent tokens (the token secret is 256 random bits,
 * so a slow hash would add latency and no strength).
 */
import sodium from 'sodium-native';
import { KEY_BYTES, allocate, type KeyArena } from './aead.js';

export interface KdfParams {
  readonly alg: 'argon2id13';
  readonly salt: Buffer;
  readonly ops: number;
  /** Bytes. */
  readonly mem: number;
}

/** 3 passes over 64 MiB: about 0.1 s here, above the OWASP floor for Argon2id. */
export const DEFAULT_OPS = 3;
export const DEFAULT_MEM = 64 * 1024 * 1024;
/**
 * libsodium's minimums (1 pass over 8 KiB, microseconds): for vaults the test
 * suites create, whose every owner step would otherwise pay the full cost.
 * Only `vault create` under the test-only switch asks for them.
 */
export const TEST_WEAK_OPS = sodium.crypto_pwhash_OPSLIMIT_MIN;
export const TEST_WEAK_MEM = sodium.crypto_pwhash_MEMLIMIT_MIN;
/** Costs read from a vault header are capped, so a doctored header cannot exhaust the host. */
const MAX_OPS = 10;
const MAX_MEM = 1024 * 1024 * 1024;

/**
 * A fresh salt and the default costs; `testWeak` (the test-only switch, never
 * a user's choice) takes libsodium's minimums instead. The costs are recorded
 * in the vault header with the salt, which is how unlocking finds them.
 */
export function newKdfParams(testWeak = false): KdfParams {
  const salt = Buffer.alloc(sodium.crypto_pwhash_SALTBYTES);
  sodium.randombytes_buf(salt);
  return testWeak
    ? { alg: 'argon2id13', salt, ops: TEST_WEAK_OPS, mem: TEST_WEAK_MEM }
    : { alg: 'argon2id13', salt, ops: DEFAULT_OPS, mem: DEFAULT_MEM };
}

/**
 * Within the caps and libsodium's minimums; false means the header is not to be trusted.
 *
 * Lower costs are accepted because they cannot be used to downgrade a vault:
 * the root key is sealed (rootByOwner) under the key that the salt and costs
 * in force at `vault create`, `passwd` or `rekey` derived. An attacker who
 * rewrites them in the store makes the host derive a different key, the unwrap
 * fails (VLT-3002, as for a wrong passphrase), and nothing is re-wrapped under
 * the doctored costs: `passwd` and `rekey` take fresh default costs, never the
 * header's (a recovery-key `passwd` has not proven them). The caps are what
 * a doctored header could otherwise abuse: the host's memory and time.
 */
export function kdfParamsSane(p: KdfParams): boolean {
  return (
    p.alg === 'argon2id13' &&
    Buffer.isBuffer(p.salt) &&
    p.salt.length === sodium.crypto_pwhash_SALTBYTES &&
    Number.isInteger(p.ops) &&
    p.ops >= sodium.crypto_pwhash_OPSLIMIT_MIN &&
    p.ops <= MAX_OPS &&
    Number.isInteger(p.mem) &&
    p.mem >= sodium.crypto_pwhash_MEMLIMIT_MIN &&
    p.mem <= MAX_MEM
  );
}

/** Argon2id off the event loop; the result lives in guarded memory. */
export async function passphraseKey(passphrase: Buffer, p: KdfParams): Promise<Buffer> {
  const out = sodium.sodium_malloc(KEY_BYTES);
  await sodium.crypto_pwhash_async(
    out,
    passphrase,
    p.salt,
    p.ops,
    p.mem,
    sodium.crypto_pwhash_ALG_ARGON2ID13,
  );
  return out;
}

const CONTEXT = Buffer.from('vltagent', 'ascii');

/**
 * From one token secret: a verifier the store keeps, and a key that unwraps
 * the agent's keys (in guarded memory: its own, or `arena`'s).
 */
export function tokenKeys(secret: Buffer, arena?: KeyArena): { verifier: Buffer; wrapKey: Buffer } {
  const verifier = Buffer.alloc(32);
  const wrapKey = allocate(KEY_BYTES, arena ?? true);
  sodium.crypto_kdf_derive_from_key(verifier, 1, CONTEXT, secret);
  sodium.crypto_kdf_derive_from_key(wrapKey, 2, CONTEXT, secret);
  return { verifier, wrapKey };
}

const DIGEST_CHUNKS = Buffer.from('vltdgchk', 'ascii');

/**
 * From the vault's state key (store/seal.ts): the key that MACs a team
 * host's file of digest shares (store/pg/digest-chunks.ts). A context of its
 * own, so neither key is derivable from the other's use; in guarded memory,
 * wiped by the caller.
 */
export function digestChunksKey(stateKey: Buffer): Buffer {
  const key = allocate(KEY_BYTES, true);
  sodium.crypto_kdf_derive_from_key(key, 1, DIGEST_CHUNKS, stateKey);
  return key;
}
