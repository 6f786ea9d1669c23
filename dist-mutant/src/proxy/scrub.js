/**
 * Puts references back where a response echoes an injected value: a server
 * that reflects the Authorization header (httpbin's /headers, an error page,
 * a debug endpoint) must not hand the secret to the client that only ever
 * wrote `vault://...`. Streaming, in constant memory: each chunk is searched
 * together with what was held back of the one before (at most the longest
 * value - 1 bytes, and only a tail that could begin a value), so a value split
 * across chunks is found too.
 */
import { Transform } from 'node:stream';
/** Values shorter than this are not scrubbed: they would rewrite ordinary text. */
export const MIN_SCRUB_BYTES = 4;
/** The incremental search, apart from any stream, for tests and for headers. */
export class Scrubber {
    carry = Buffer.alloc(0);
    needles;
    keep;
    constructor(replacements) {
        // Longest first: of two values matching at one place, the longer is replaced.
        this.needles = replacements
            .filter((r) => r.value.length >= MIN_SCRUB_BYTES)
            .sort((a, b) => b.value.length - a.value.length);
        this.keep = Math.max(0, ...this.needles.map((n) => n.value.length - 1));
    }
    get active() {
        return this.needles.length > 0;
    }
    /** The bytes that can be given out now; up to (longest value - 1) bytes are held back. */
    write(chunk) {
        return this.scan(this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]), false);
    }
    /**
     * Replaces as the whole body would be replaced (leftmost match, the longest
     * at one place), whatever the chunking: a match is taken only when no value
     * that could still begin at or before it is waiting for more bytes, so
     * "abba" is not replaced while "abbab" may yet arrive. At the end of the
     * stream nothing more can arrive and the held-back tail is searched as is.
     */
    scan(buf, final) {
        const out = [];
        let from = 0;
        for (;;) {
            const hit = this.leftmost(buf, from);
            const hold = final ? buf.length : this.holdFrom(buf, from);
            if (hit === null || hold <= hit.at) {
                out.push(buf.subarray(from, hold));
                this.carry = Buffer.from(buf.subarray(hold));
                return Buffer.concat(out);
            }
            out.push(buf.subarray(from, hit.at), hit.needle.reference);
            from = hit.at + hit.needle.value.length;
        }
    }
    /** The leftmost whole value in `buf` from `from`, the longest of those starting there. */
    leftmost(buf, from) {
        let best = null;
        for (const n of this.needles) {
            const i = buf.indexOf(n.value, from);
            if (i !== -1 && (best === null || i < best.at))
                best = { at: i, needle: n };
        }
        return best;
    }
    /**
     * Where the held-back tail starts: the earliest position in the last
     * (longest value - 1) bytes from which the rest of `buf` is a prefix of some
     * value. Anything before it cannot begin a value (one starting there would
     * lie wholly inside `buf`, and none was found), so it goes out now: a server-
     * sent event is held back only when its last bytes look like a value's start.
     */
    holdFrom(buf, from) {
        for (let p = Math.max(from, buf.length - this.keep); p < buf.length; p++) {
            const tail = buf.subarray(p);
            for (const n of this.needles) {
                if (n.value[0] === buf[p] &&
                    tail.length < n.value.length &&
                    n.value.subarray(0, tail.length).equals(tail)) {
                    return p;
                }
            }
        }
        return buf.length;
    }
    /** What is held back, at the end of the stream. */
    end() {
        return this.scan(this.carry, true);
    }
    /** A whole string (a header value, latin1 on the wire). */
    static text(replacements, value) {
        const bytes = Buffer.from(value, 'latin1');
        const out = Scrubber.bytes(replacements, bytes);
        return out === bytes ? value : out.toString('latin1');
    }
    /**
     * Whole bytes (a WebSocket control frame's payload, a short response body);
     * `value` itself when no value is in it, which a whole search would give
     * back unchanged: every response header of a fill comes through here, and
     * almost none echoes a value.
     */
    static bytes(replacements, value) {
        if (!replacements.some((r) => r.value.length >= MIN_SCRUB_BYTES && value.includes(r.value))) {
            return value;
        }
        const s = new Scrubber(replacements);
        return Buffer.concat([s.write(value), s.end()]);
    }
}
/** The scrubber as a stream stage; back-pressure passes through it like any Transform. */
export function scrubStream(replacements) {
    const s = new Scrubber(replacements);
    return new Transform({
        transform(chunk, _enc, done) {
            const out = s.write(chunk);
            done(null, out.length > 0 ? out : undefined);
        },
        flush(done) {
            const rest = s.end();
            done(null, rest.length > 0 ? rest : undefined);
        },
    });
}
