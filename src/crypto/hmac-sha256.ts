/**
 * HMAC-SHA256 (RFC 2104) for many short messages under one key, in
 * JavaScript: the key's two pads are hashed once and kept as SHA-256
 * states, so a MAC of a message under 56 bytes is three compressions and
 * no call into C++. Issue 37: the sealed digest (store/seal.ts) takes an
 * HMAC of every sealed record, 300,000 at a team host's cold start at
 * 100,000 entries, and each call into Node's or libsodium's hash cost more
 * than the hashing (two hashes a MAC, 2-3 µs each on a loaded machine here,
 * against one compression's 1 µs). Same output as createHmac
 * (test/unit/seal.test.ts). Only additions, rotations and logic on 32-bit
 * words: no table indexed by secret data.
 */
import { createHash } from 'node:crypto';

const K = Int32Array.from(
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ].map((k) => k | 0),
);
const IV = Int32Array.from(
  [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ].map((k) => k | 0),
);
const BLOCK = 64;
const W = new Int32Array(64);

/** SHA-256's compression of the block of `m` at `off` into the state `H`. */
function compress(H: Int32Array, m: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++) {
    const j = off + 4 * i;
    W[i] =
      ((m[j] as number) << 24) |
      ((m[j + 1] as number) << 16) |
      ((m[j + 2] as number) << 8) |
      (m[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    const a = W[i - 15] as number;
    const b = W[i - 2] as number;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) | 0;
  }
  let a = H[0] as number;
  let b = H[1] as number;
  let c = H[2] as number;
  let d = H[3] as number;
  let e = H[4] as number;
  let f = H[5] as number;
  let g = H[6] as number;
  let h = H[7] as number;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (W[i] as number)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = ((H[0] as number) + a) | 0;
  H[1] = ((H[1] as number) + b) | 0;
  H[2] = ((H[2] as number) + c) | 0;
  H[3] = ((H[3] as number) + d) | 0;
  H[4] = ((H[4] as number) + e) | 0;
  H[5] = ((H[5] as number) + f) | 0;
  H[6] = ((H[6] as number) + g) | 0;
  H[7] = ((H[7] as number) + h) | 0;
}

/** The state's eight words into the first 32 bytes of `out`, big-endian (a SHA-256 digest). */
function bigEndian(h: Int32Array, out: Uint8Array): void {
  for (let i = 0; i < 8; i++) {
    const v = h[i] as number;
    out[4 * i] = v >>> 24;
    out[4 * i + 1] = (v >>> 16) & 0xff;
    out[4 * i + 2] = (v >>> 8) & 0xff;
    out[4 * i + 3] = v & 0xff;
  }
}

export class HmacSha256 {
  /** The states after the inner and the outer pad. */
  private readonly inner = new Int32Array(8);
  private readonly outer = new Int32Array(8);
  private readonly h = new Int32Array(8);
  /** The outer message: the inner hash and its padding. */
  private readonly second = new Uint8Array(BLOCK);
  /** Where a caller writes the message (`mac` pads it in place); grown by `room`. */
  msg = Buffer.alloc(1024);
  /** The last MAC (overwritten by the next). */
  readonly tag = Buffer.alloc(32);

  constructor(key: Uint8Array) {
    const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
    const pad = new Uint8Array(BLOCK);
    for (const [state, fill] of [
      [this.inner, 0x36],
      [this.outer, 0x5c],
    ] as const) {
      pad.fill(fill);
      for (let i = 0; i < k.length; i++) pad[i] = (pad[i] as number) ^ (k[i] as number);
      state.set(IV);
      compress(state, pad, 0);
    }
    // The pads' words are the key's: not left in the schedule until the next MAC.
    pad.fill(0);
    W.fill(0);
    this.second[32] = 0x80;
    // The outer message's length in bits: the pad's block and the inner hash.
    this.second[62] = ((BLOCK + 32) * 8) >>> 8;
    this.second[63] = ((BLOCK + 32) * 8) & 0xff;
  }

  /** `msg` holds at least `size` bytes (and the room `mac` pads in), its first `keep` kept. */
  room(size: number, keep: number): void {
    if (size + BLOCK + 8 <= this.msg.length) return;
    const grown = Buffer.alloc(2 * (size + BLOCK + 8));
    this.msg.copy(grown, 0, 0, keep);
    this.msg = grown;
  }

  /** The MAC of `msg`'s first `len` bytes, into `tag` (`msg` past `len` is overwritten). */
  mac(len: number): Buffer {
    this.room(len, len);
    const m = this.msg;
    const end = (len + 9 + BLOCK - 1) & ~(BLOCK - 1);
    m[len] = 0x80;
    m.fill(0, len + 1, end);
    // The length in bits after the inner pad's block (messages here are far under 512 MB).
    const bits = (BLOCK + len) * 8;
    m[end - 4] = bits >>> 24;
    m[end - 3] = (bits >>> 16) & 0xff;
    m[end - 2] = (bits >>> 8) & 0xff;
    m[end - 1] = bits & 0xff;
    const h = this.h;
    h.set(this.inner);
    for (let off = 0; off < end; off += BLOCK) compress(h, m, off);
    bigEndian(h, this.second);
    h.set(this.outer);
    compress(h, this.second, 0);
    bigEndian(h, this.tag);
    return this.tag;
  }

  /** Forgets the key: its pads' states, the last message and MAC. */
  wipe(): void {
    this.inner.fill(0);
    this.outer.fill(0);
    this.h.fill(0);
    this.second.fill(0, 0, 32);
    this.msg.fill(0);
    this.tag.fill(0);
    W.fill(0);
  }
}
