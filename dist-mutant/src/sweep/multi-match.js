/**
 * A streaming multi-string matcher over bytes: every occurrence of every
 * pattern, overlaps included, in a stream fed in chunks of any size, with
 * memory bounded by the patterns (only the last `maxLength - 1` bytes are
 * carried from one chunk to the next).
 *
 * How: with m the shortest pattern's length and q its gram length (8 from
 * m = 16 on, else min(4, m)), any occurrence
 * of a pattern covers m - q + 1 = `step` consecutive stream positions at which
 * a q-gram of the pattern starts, so it covers exactly one position that is a
 * multiple of `step` within its first `step` bytes. Only those sampled
 * positions are looked at: the q-gram there is looked up in a table of every
 * pattern's q-grams at offsets 0..step-1, and each hit is verified byte by
 * byte. A byte of the stream costs about 1/step of a lookup, which is what lets
 * a sweep of long secrets outrun a per-byte automaton (Aho-Corasick) in
 * JavaScript; and since each occurrence has one sampled position at an offset
 * below `step`, each is reported exactly once. Before the table, a blocked
 * Bloom filter (two bits in one 32-bit word, 32 bits a gram) turns away all
 * but about 1 in 150 sampled positions of ordinary text with one load, and a
 * gram is read as one or two 32-bit words (a DataView), not byte by byte:
 * together about three times the speed of the byte-wise loop.
 *
 * Pure: no I/O. The patterns are the caller's bytes; the matcher keeps its own
 * copy, which the caller may wipe with `wipe()`.
 */
/** Bytes a sampled gram covers: 8 turn away text that shares only a word with a secret. */
const Q_MAX = 8;
export class MultiMatcher {
    /** The longest pattern: a chunk boundary carries one byte less than this. */
    maxLength;
    minLength;
    /** The sampling stride (see the header). */
    step;
    q;
    /** The distinct patterns' bytes, back to back, and where each starts and ends. */
    bytes;
    starts;
    ends;
    /** For each distinct pattern, the indexes (as given) that have its bytes. */
    owners;
    /** q-gram table: chained buckets over (gram, distinct pattern, offset). */
    shift;
    heads;
    /**
     * A blocked Bloom filter of the table's grams under a second hash: a word
     * chosen by its top bits, two bits in it by its low ten. Most sampled
     * positions are turned away by it without touching the buckets.
     */
    seenBits;
    bitShift;
    next;
    grams;
    entryPattern;
    entryOffset;
    /** @throws RangeError for no patterns or an empty one. */
    constructor(patterns) {
        if (patterns.length === 0)
            throw new RangeError('no patterns');
        const byKey = new Map();
        const distinct = [];
        this.owners = [];
        patterns.forEach((p, i) => {
            if (p.length === 0)
                throw new RangeError('empty pattern');
            const key = Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('latin1');
            let u = byKey.get(key);
            if (u === undefined) {
                u = distinct.length;
                byKey.set(key, u);
                distinct.push(p);
                this.owners.push([]);
            }
            this.owners[u].push(i);
        });
        let total = 0;
        let min = Infinity;
        let max = 0;
        for (const p of distinct) {
            total += p.length;
            min = Math.min(min, p.length);
            max = Math.max(max, p.length);
        }
        this.minLength = min;
        this.maxLength = max;
        // 8-byte grams only where they leave a long stride; short patterns keep 4.
        this.q = min >= 16 ? Q_MAX : Math.min(4, min);
        this.step = min - this.q + 1;
        this.bytes = new Uint8Array(total);
        this.starts = new Int32Array(distinct.length);
        this.ends = new Int32Array(distinct.length);
        let at = 0;
        distinct.forEach((p, u) => {
            this.bytes.set(p, at);
            this.starts[u] = at;
            at += p.length;
            this.ends[u] = at;
        });
        const entries = distinct.length * this.step;
        let bits = 10;
        while (1 << bits < entries * 2 && bits < 24)
            bits++;
        this.shift = 32 - bits;
        this.heads = new Int32Array(1 << bits).fill(-1);
        // One word per gram (32 bits: under 1% false passes), up to 8 MiB.
        let wordBits = 8;
        while (1 << wordBits < entries && wordBits < 21)
            wordBits++;
        this.bitShift = 32 - wordBits;
        this.seenBits = new Int32Array(1 << wordBits);
        this.next = new Int32Array(entries);
        this.grams = new Int32Array(entries);
        this.entryPattern = new Int32Array(entries);
        this.entryOffset = new Int32Array(entries);
        let e = 0;
        for (let u = 0; u < distinct.length; u++) {
            const base = this.starts[u];
            for (let off = 0; off < this.step; off++) {
                const g = gramAt(this.bytes, base + off, this.q);
                const h = Math.imul(g, 0x9e3779b1) >>> this.shift;
                this.grams[e] = g;
                this.entryPattern[e] = u;
                this.entryOffset[e] = off;
                this.next[e] = this.heads[h];
                this.heads[h] = e;
                const b = Math.imul(g, 0x85ebca6b);
                const w = b >>> this.bitShift;
                this.seenBits[w] = this.seenBits[w] | bloomMask(b);
                e++;
            }
        }
    }
    /** A scanner for one stream. */
    scanner() {
        return new MultiScanner(this);
    }
    /**
     * Every match in `buf` whose bytes lie in it, whose end lies past `fresh`
     * (the bytes before `fresh` were carried from the previous chunk, whose
     * matches ending there were reported then) and whose start lies before
     * `startBefore`, `base` being buf[0]'s offset in the stream. Internal to
     * MultiScanner.
     */
    scan(buf, base, fresh, found, startBefore = Infinity) {
        const { q, step, heads, next, grams, entryPattern, entryOffset, shift, bytes } = this;
        const { seenBits, bitShift } = this;
        const len = buf.length;
        const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
        let p = (step - (base % step)) % step;
        for (; p + q <= len; p += step) {
            // The same value gramAt gives, in one or two loads where q allows.
            const g = q === 8
                ? mix(view.getInt32(p, true), view.getInt32(p + 4, true))
                : q === 4
                    ? view.getInt32(p, true)
                    : gramAt(buf, p, q);
            const b = Math.imul(g, 0x85ebca6b);
            const mask = bloomMask(b);
            if ((seenBits[b >>> bitShift] & mask) !== mask)
                continue;
            let e = heads[Math.imul(g, 0x9e3779b1) >>> shift];
            for (; e !== -1; e = next[e]) {
                if (grams[e] !== g)
                    continue;
                const start = p - entryOffset[e];
                if (start < 0 || start >= startBefore)
                    continue;
                const u = entryPattern[e];
                const from = this.starts[u];
                const plen = this.ends[u] - from;
                const end = start + plen;
                if (end > len || end <= fresh)
                    continue;
                let i = 0;
                while (i < plen && buf[start + i] === bytes[from + i])
                    i++;
                if (i < plen)
                    continue;
                for (const pattern of this.owners[u]) {
                    found({ pattern, start: base + start, end: base + end });
                }
            }
        }
    }
    /** Overwrites the matcher's copy of the patterns (best effort: JavaScript may have copied them). */
    wipe() {
        this.bytes.fill(0);
        this.grams.fill(0);
    }
}
/** The stream state: how far it has read and the bytes carried over a chunk boundary. */
export class MultiScanner {
    matcher;
    carry = new Uint8Array(0);
    /** Bytes fed so far. */
    offset = 0;
    constructor(matcher) {
        this.matcher = matcher;
    }
    /**
     * Feeds the next chunk; `found` is called for every match that ends in it,
     * in no particular order. The chunk is not kept (its last bytes are copied).
     */
    push(chunk, found) {
        if (chunk.length === 0)
            return;
        const m = this.matcher;
        const carried = this.carry.length;
        // The seam: matches that start in the carried bytes end within the first
        // maxLength - 1 bytes of the chunk, so a small buffer finds them; the chunk
        // itself is scanned where it lies, never copied.
        const seam = carried === 0
            ? null
            : concat(this.carry, chunk.subarray(0, Math.min(chunk.length, m.maxLength - 1)));
        if (seam !== null)
            m.scan(seam, this.offset - carried, carried, found, carried);
        m.scan(chunk, this.offset, 0, found);
        this.offset += chunk.length;
        const keep = m.maxLength - 1;
        // Copied (a Buffer's slice would be a view of the caller's bytes, which end() zeroes).
        const all = chunk.length >= keep || seam === null ? chunk : seam;
        const tail = new Uint8Array(all.subarray(Math.max(0, all.length - keep)));
        seam?.fill(0);
        this.carry.fill(0);
        this.carry = tail;
    }
    /** Drops the carried bytes (they may hold part of a secret). */
    end() {
        this.carry.fill(0);
        this.carry = new Uint8Array(0);
    }
}
function concat(a, b) {
    const out = new Uint8Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
}
/**
 * The q bytes at `i` (q <= 8) folded into 32 bits: exact for q <= 4, a hash
 * beyond (a collision only costs a byte-by-byte check that fails).
 */
function gramAt(b, i, q) {
    let lo = b[i];
    if (q > 1)
        lo |= b[i + 1] << 8;
    if (q > 2)
        lo |= b[i + 2] << 16;
    if (q > 3)
        lo |= b[i + 3] << 24;
    if (q <= 4)
        return lo;
    let hi = b[i + 4];
    if (q > 5)
        hi |= b[i + 5] << 8;
    if (q > 6)
        hi |= b[i + 6] << 16;
    if (q > 7)
        hi |= b[i + 7] << 24;
    return mix(lo, hi);
}
/** Two 32-bit halves of a gram folded into one. */
function mix(lo, hi) {
    return (lo ^ Math.imul(hi ^ (hi >>> 15), 0x27d4eb2f)) | 0;
}
/** The filter's two bits for a gram's second hash `b` (its word is b's top bits). */
function bloomMask(b) {
    return (1 << (b & 31)) | (1 << ((b >>> 5) & 31));
}
