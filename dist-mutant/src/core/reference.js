/**
 * The one scanner of `vault://<entry>/<field>` references, shared by render
 * and the proxy. Pure: bytes in, events out; it works on chunks of any size, so
 * a reference split across reads is found, and every byte that is not part of
 * a reference comes out untouched (invalid UTF-8, a BOM, CRLF included).
 *
 * Grammar (docs/render.md):
 * - `vault://` + entry + `/` + field. Entry: one or more bytes other than `/`,
 *   control characters (U+0000-U+001F, U+007F) and newline; spaces allowed;
 *   `%2F` and `%25` (either case) stand for `/` and `%`. Field: `[A-Za-z0-9_-]+`.
 * - Unenclosed: `vault://` preceded by one of `[A-Za-z0-9+.-]` is not a
 *   reference (`myvault://`, `x.vault://`). The reference ends at the first
 *   byte that cannot continue the field.
 * - Enclosed: `{{` + up to 16 spaces or tabs + reference + up to 16 spaces or
 *   tabs + `}}` is one reference, braces included; the preceded-by rule does
 *   not apply. `{{` not followed by `vault://` is plain text (other template
 *   languages keep their braces).
 *
 * Malformed (VLT-2046): once `vault://` starts a reference, it must complete.
 * - no `/` after the entry (the entry runs into a control character, a newline
 *   or the end of input), or nothing of the field after the `/`;
 * - an empty entry (`vault:///f`), or an entry longer than 256 bytes decoded
 *   (768 bytes as written); a field longer than 64 characters;
 * - a `%` not followed by `2F`/`25`; an entry that is not valid UTF-8;
 * - an enclosed form whose reference is not followed by spaces and `}}`
 *   (`{{ vault://a/b c }}`, `{{ vault://a/b/c }}`, an unclosed `{{ vault://a/b`).
 * The lengths bound what the scanner holds between chunks, so its memory is
 * constant. There is no escape for a literal `vault://` that is not a
 * reference: precede it with a letter or digit.
 */
export const MAX_ENTRY_BYTES = 256;
export const MAX_FIELD_CHARS = 64;
const MAX_ENTRY_WRITTEN = MAX_ENTRY_BYTES * 3;
const MAX_BRACE_SPACE = 16;
const SCHEME = Buffer.from('vault://');
const SLASH = 0x2f;
const PERCENT = 0x25;
const BRACE = 0x7b;
const CLOSE = 0x7d;
const FIELD_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-') {
    FIELD_BYTE[c.charCodeAt(0)] = 1;
}
/** Bytes that, right before `vault://`, make it part of another word or scheme. */
const GLUE_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-') {
    GLUE_BYTE[c.charCodeAt(0)] = 1;
}
const isControl = (b) => b < 0x20 || b === 0x7f;
const isSpace = (b) => b === 0x20 || b === 0x09;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const loose = new TextDecoder('utf-8', { ignoreBOM: true });
/** `vault://` + the entry with `%` and `/` escaped + `/` + field. */
export function formatReference(entry, field) {
    return `vault://${entry.replaceAll('%', '%25').replaceAll('/', '%2F')}/${field}`;
}
/** Decodes an entry as written; a string is the reason it is malformed. */
function decodeEntry(raw) {
    if (raw.length === 0)
        return 'empty entry name';
    let bytes = raw;
    if (raw.includes(PERCENT)) {
        const out = Buffer.allocUnsafe(raw.length);
        let n = 0;
        for (let i = 0; i < raw.length; i++) {
            const b = raw[i];
            if (b !== PERCENT) {
                out[n++] = b;
                continue;
            }
            const code = raw.toString('latin1', i + 1, i + 3).toUpperCase();
            if (code === '2F')
                out[n++] = SLASH;
            else if (code === '25')
                out[n++] = PERCENT;
            else
                return 'a % in an entry name must be %25 (for %) or %2F (for /)';
            i += 2;
        }
        bytes = out.subarray(0, n);
    }
    if (bytes.length > MAX_ENTRY_BYTES)
        return `entry name longer than ${MAX_ENTRY_BYTES} bytes`;
    try {
        return { entry: utf8.decode(bytes) };
    }
    catch {
        return 'entry name is not valid UTF-8';
    }
}
/**
 * Incremental scanner. `write` each chunk, then `end` once; every input byte
 * reaches the sink exactly once, as text or as part of a reference.
 */
export class ReferenceScanner {
    /** Bytes that may begin a reference, held until the next chunk decides. */
    carry = Buffer.alloc(0);
    /** The byte before `carry`, for the preceded-by rule (-1 at the start). */
    before = -1;
    /** Offset of `carry[0]` in the whole input. */
    base = 0;
    write(chunk, sink) {
        if (chunk.length === 0)
            return;
        const buf = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
        this.run(buf, false, sink);
    }
    end(sink) {
        this.run(this.carry, true, sink);
        this.carry = Buffer.alloc(0);
    }
    run(buf, final, sink) {
        let pos = 0; // first byte not yet given to the sink
        let from = 0; // where to look for the next `vault://`
        const emitText = (to) => {
            if (to > pos)
                sink.text(buf.subarray(pos, to));
            pos = to;
        };
        for (;;) {
            const j = buf.indexOf(SCHEME, from);
            if (j === -1)
                break;
            from = j + SCHEME.length;
            // An enclosing `{{` and spaces right before it, not yet given out.
            let k = j;
            while (k > pos && j - k < MAX_BRACE_SPACE && isSpace(buf[k - 1]))
                k--;
            const enclosed = k - 2 >= pos && buf[k - 1] === BRACE && buf[k - 2] === BRACE;
            const start = enclosed ? k - 2 : j;
            if (!enclosed) {
                const prev = j > 0 ? buf[j - 1] : this.before;
                if (prev >= 0 && GLUE_BYTE[prev] === 1)
                    continue;
            }
            const p = this.parse(buf, start, j, enclosed, final);
            if (p.kind === 'more') {
                emitText(start);
                return this.hold(buf, pos);
            }
            emitText(start);
            if (p.kind === 'ref')
                sink.reference(p.ref);
            else
                sink.malformed(p.bad);
            pos = p.end;
            from = p.end;
        }
        // Hold back a tail that could still become `{{ vault://` or `vault://`.
        const keep = final ? buf.length : this.tailStart(buf, pos);
        emitText(keep);
        this.hold(buf, keep);
    }
    hold(buf, at) {
        if (at > 0)
            this.before = buf[at - 1];
        this.base += at;
        // A copy: the caller may reuse its chunk buffer.
        this.carry = Buffer.from(buf.subarray(at));
    }
    /** Start of the longest tail of `buf` (from `pos`) that is a prefix of `{{ vault://`. */
    tailStart(buf, pos) {
        let t = buf.length;
        for (let n = Math.min(SCHEME.length - 1, buf.length - pos); n > 0; n--) {
            if (buf.subarray(buf.length - n).equals(SCHEME.subarray(0, n))) {
                t = buf.length - n;
                break;
            }
        }
        let k = t;
        while (k > pos && t - k < MAX_BRACE_SPACE && isSpace(buf[k - 1]))
            k--;
        if (k - 2 >= pos && buf[k - 1] === BRACE && buf[k - 2] === BRACE)
            return k - 2;
        if (k === buf.length && k - 1 >= pos && buf[k - 1] === BRACE)
            return k - 1;
        return t;
    }
    parse(buf, start, j, enclosed, final) {
        const offset = this.base + start;
        const e0 = j + SCHEME.length;
        let i = e0;
        while (i < buf.length && i - e0 <= MAX_ENTRY_WRITTEN) {
            const b = buf[i];
            if (b === SLASH || isControl(b))
                break;
            i++;
        }
        const bad = (end, reason) => ({
            kind: 'bad',
            end,
            bad: { written: shown(buf, j, end), reason, offset },
        });
        if (i - e0 > MAX_ENTRY_WRITTEN)
            return bad(i, `entry name longer than ${MAX_ENTRY_BYTES} bytes`);
        if (i === buf.length)
            return final ? bad(i, 'no /field after the entry name') : { kind: 'more' };
        if (buf[i] !== SLASH)
            return bad(i, 'no /field after the entry name');
        const f0 = i + 1;
        let f = f0;
        while (f < buf.length && FIELD_BYTE[buf[f]] === 1 && f - f0 <= MAX_FIELD_CHARS)
            f++;
        if (f - f0 > MAX_FIELD_CHARS)
            return bad(f, `field longer than ${MAX_FIELD_CHARS} characters`);
        if (f === buf.length && !final)
            return { kind: 'more' };
        if (f === f0)
            return bad(f, 'no field name after the /');
        let end = f;
        if (enclosed) {
            let s = f;
            while (s < buf.length && s - f < MAX_BRACE_SPACE && isSpace(buf[s]))
                s++;
            if (s + 2 > buf.length && !final)
                return { kind: 'more' };
            if (buf[s] !== CLOSE || buf[s + 1] !== CLOSE) {
                return bad(f, '{{ vault://<entry>/<field> }} is not closed by }} right after the field');
            }
            end = s + 2;
        }
        const decoded = decodeEntry(buf.subarray(e0, i));
        if (typeof decoded === 'string')
            return bad(end, decoded);
        return {
            kind: 'ref',
            end,
            ref: {
                entry: decoded.entry,
                field: buf.toString('latin1', f0, f),
                written: buf.toString('utf8', j, f),
                offset,
            },
        };
    }
}
/** The bytes of a malformed reference for a message: one line, at most 120 characters. */
function shown(buf, from, to) {
    const text = loose.decode(buf.subarray(from, Math.min(to, from + 480)));
    return text.length > 120 ? text.slice(0, 119) + '…' : text;
}
/** Scans a whole input at once. */
export function scan(input) {
    const references = [];
    const malformed = [];
    const sink = {
        text: () => { },
        reference: (r) => references.push(r),
        malformed: (m) => malformed.push(m),
    };
    const s = new ReferenceScanner();
    s.write(typeof input === 'string' ? Buffer.from(input) : input, sink);
    s.end(sink);
    return { references, malformed };
}
/**
 * Parses one whole reference (`vault://e/f`, or the enclosed form) and
 * nothing else: the inverse of `formatReference`.
 * @returns null when `text` is not exactly one well-formed reference.
 */
export function parseReference(text) {
    const found = [];
    let extra = false;
    const sink = {
        text: () => (extra = true),
        reference: (r) => found.push(r),
        malformed: () => (extra = true),
    };
    const s = new ReferenceScanner();
    s.write(Buffer.from(text), sink);
    s.end(sink);
    const r = found[0];
    return extra || found.length !== 1 || r === undefined ? null : { entry: r.entry, field: r.field };
}
