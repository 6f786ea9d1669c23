/**
 * A record's canonical form (core/canon.ts, what its checksum and its share
 * of the sealed digest hash) written straight from its MessagePack bytes,
 * with no decoded object and no string in between (issue 37: decoding each
 * of a cold team host's 300,000 sealed rows and building its canonical
 * string was half of the digest's time). Only the forms the store writes
 * are taken: maps with keys of printable ASCII, arrays, strings of printable
 * ASCII, binary, nil, booleans, integers up to 32 bits and float64. Anything
 * else (other strings, 64-bit integers, extensions, a map with a key twice,
 * or `__proto__`,
 * bytes after the value, a value cut short) answers -1, and the caller
 * decodes the record and takes `canon` of it as before: this is a shortcut,
 * never a second opinion (test/unit/canon-bytes.test.ts compares the two).
 */

/** Each byte's two hex digits, as character codes. */
const HEX_HI = Uint8Array.from({ length: 256 }, (_, i) => '0123456789abcdef'.charCodeAt(i >>> 4));
const HEX_LO = Uint8Array.from({ length: 256 }, (_, i) => '0123456789abcdef'.charCodeAt(i & 15));

/** Thrown inside, to give up on the fast path. */
const GIVE_UP = new Error('not a form the fast path takes');

class Writer {
  at = 0;
  constructor(
    public out: Buffer,
    readonly src: Buffer,
  ) {}

  room(n: number): void {
    if (this.at + n <= this.out.length) return;
    const grown = Buffer.alloc(2 * (this.at + n));
    this.out.copy(grown, 0, 0, this.at);
    this.out = grown;
  }

  ascii(text: string): void {
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.out[this.at++] = text.charCodeAt(i);
  }

  /** A string of printable ASCII but `"` and `\`, as JSON.stringify quotes it. */
  quoted(from: number, len: number): void {
    const s = this.src;
    if (from + len > s.length) throw GIVE_UP;
    for (let i = from; i < from + len; i++) {
      const c = s[i] as number;
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) throw GIVE_UP;
    }
    this.room(len + 2);
    const o = this.out;
    o[this.at++] = 0x22;
    for (let i = from; i < from + len; i++) o[this.at++] = s[i] as number;
    o[this.at++] = 0x22;
  }

  bin(from: number, len: number): void {
    const s = this.src;
    if (from + len > s.length) throw GIVE_UP;
    this.room(2 + 2 * len);
    const o = this.out;
    o[this.at++] = 0x62; // b
    o[this.at++] = 0x3a; // :
    let at = this.at;
    for (let i = from; i < from + len; i++) {
      const b = s[i] as number;
      o[at++] = HEX_HI[b] as number;
      o[at++] = HEX_LO[b] as number;
    }
    this.at = at;
  }
}

function u(s: Buffer, at: number, n: 1 | 2 | 4): number {
  if (at + n > s.length) throw GIVE_UP;
  return n === 1 ? (s[at] as number) : n === 2 ? s.readUInt16BE(at) : s.readUInt32BE(at);
}

/** The length of a string's bytes and where they start, for the string at `at`; null: no string. */
function strAt(s: Buffer, at: number): [from: number, len: number] | null {
  const t = s[at] as number;
  if (t >= 0xa0 && t <= 0xbf) return [at + 1, t - 0xa0];
  if (t === 0xd9) return [at + 2, u(s, at + 1, 1)];
  if (t === 0xda) return [at + 3, u(s, at + 1, 2)];
  if (t === 0xdb) return [at + 5, u(s, at + 1, 4)];
  return null;
}

/** Writes the canonical form of the value at `at`; where the next value starts. */
function value(w: Writer, at: number): number {
  const s = w.src;
  if (at >= s.length) throw GIVE_UP;
  const t = s[at] as number;
  // A decoder with record structures reads 0x40-0x7f as one; mirror.ts's has none.
  if (t < 0x80) {
    w.ascii(String(t));
    return at + 1;
  }
  if (t >= 0xe0) {
    w.ascii(String(t - 0x100));
    return at + 1;
  }
  if (t >= 0x80 && t <= 0x8f) return map(w, at + 1, t - 0x80);
  if (t >= 0x90 && t <= 0x9f) return array(w, at + 1, t - 0x90);
  const str = strAt(s, at);
  if (str !== null) {
    w.quoted(str[0], str[1]);
    return str[0] + str[1];
  }
  switch (t) {
    case 0xc0:
      w.ascii('null');
      return at + 1;
    case 0xc2:
      w.ascii('false');
      return at + 1;
    case 0xc3:
      w.ascii('true');
      return at + 1;
    case 0xc4:
    case 0xc5:
    case 0xc6: {
      const n = t === 0xc4 ? 1 : t === 0xc5 ? 2 : 4;
      const len = u(s, at + 1, n);
      w.bin(at + 1 + n, len);
      return at + 1 + n + len;
    }
    case 0xcb:
      if (at + 9 > s.length) throw GIVE_UP;
      w.ascii(JSON.stringify(s.readDoubleBE(at + 1)));
      return at + 9;
    case 0xcc:
      w.ascii(String(u(s, at + 1, 1)));
      return at + 2;
    case 0xcd:
      w.ascii(String(u(s, at + 1, 2)));
      return at + 3;
    case 0xce:
      w.ascii(String(u(s, at + 1, 4)));
      return at + 5;
    case 0xd0:
      if (at + 2 > s.length) throw GIVE_UP;
      w.ascii(String(s.readInt8(at + 1)));
      return at + 2;
    case 0xd1:
      if (at + 3 > s.length) throw GIVE_UP;
      w.ascii(String(s.readInt16BE(at + 1)));
      return at + 3;
    case 0xd2:
      if (at + 5 > s.length) throw GIVE_UP;
      w.ascii(String(s.readInt32BE(at + 1)));
      return at + 5;
    case 0xdc:
      return array(w, at + 3, u(s, at + 1, 2));
    case 0xdd:
      return array(w, at + 5, u(s, at + 1, 4));
    case 0xde:
      return map(w, at + 3, u(s, at + 1, 2));
    case 0xdf:
      return map(w, at + 5, u(s, at + 1, 4));
    default:
      throw GIVE_UP;
  }
}

function array(w: Writer, at: number, n: number): number {
  w.ascii('[');
  for (let i = 0; i < n; i++) {
    if (i > 0) w.ascii(',');
    at = value(w, at);
  }
  w.ascii(']');
  return at;
}

function compareKeys(s: Buffer, af: number, al: number, bf: number, bl: number): number {
  const n = Math.min(al, bl);
  for (let i = 0; i < n; i++) {
    const d = (s[af + i] as number) - (s[bf + i] as number);
    if (d !== 0) return d;
  }
  return al - bl;
}

/**
 * A map as canon writes an object: its members by key (ASCII: bytes sort as
 * UTF-16 units do). Written as they come; when their keys do not come in
 * order, the members written are put in order after.
 */
function map(w: Writer, at: number, n: number): number {
  const s = w.src;
  const start = w.at;
  // Per member: its key's bytes in the record, its place in the output.
  const members: [from: number, len: number, begin: number, end: number][] = [];
  let sorted = true;
  w.ascii('{');
  for (let i = 0; i < n; i++) {
    if (at >= s.length) throw GIVE_UP;
    const [from, len] = keyAt(s, at);
    const prev = members[i - 1];
    if (prev !== undefined) {
      const order = compareKeys(s, prev[0], prev[1], from, len);
      // A key twice: the decoder keeps the last; not taken here.
      if (order === 0) throw GIVE_UP;
      if (order > 0) sorted = false;
      w.ascii(',');
    }
    const begin = w.at;
    w.quoted(from, len);
    w.ascii(':');
    at = value(w, from + len);
    members.push([from, len, begin, w.at]);
  }
  w.ascii('}');
  if (!sorted) reorder(w, start, members);
  return at;
}

/** The members of the map written from `start`, rewritten in key order. */
function reorder(
  w: Writer,
  start: number,
  members: [from: number, len: number, begin: number, end: number][],
): void {
  const s = w.src;
  const written = Buffer.from(w.out.subarray(start, w.at));
  members.sort((a, b) => compareKeys(s, a[0], a[1], b[0], b[1]));
  let at = start + 1;
  for (let i = 0; i < members.length; i++) {
    const [from, len, begin, end] = members[i] as [number, number, number, number];
    const prev = members[i - 1];
    if (prev !== undefined && compareKeys(s, prev[0], prev[1], from, len) === 0) throw GIVE_UP;
    if (i > 0) w.out[at++] = 0x2c; // ,
    at += written.copy(w.out, at, begin - start, end - start);
  }
}

/** A map's key at `at`: where its bytes start and their length. */
function keyAt(s: Buffer, at: number): [from: number, len: number] {
  const key = strAt(s, at);
  if (key === null) throw GIVE_UP;
  const [from, len] = key;
  // The decoder renames this key (the key's bytes are checked as they are written).
  if (len === 9 && s.toString('latin1', from, from + len) === '__proto__') throw GIVE_UP;
  return key;
}

/** Where the canonical forms are written, kept from one record to the next. */
let out: Buffer = Buffer.alloc(4096);

/**
 * The canonical form of the record `src` holds, as UTF-8 bytes (a view valid
 * until the next call), or null when the fast path does not take it.
 */
export function canonBytes(src: Buffer): Buffer | null {
  const w = new Writer(out, src);
  try {
    const end = value(w, 0);
    out = w.out;
    if (end !== src.length) return null;
  } catch (err) {
    out = w.out;
    if (err === GIVE_UP) return null;
    throw err;
  }
  return out.subarray(0, w.at);
}
