/**
 * An import's entries cut into requests the host accepts: each under its body
 * limit and MAX_IMPORT_ENTRIES.
 */
import { MAX_IMPORT_ENTRIES } from '../core/requests.js';
const MiB = 1024 * 1024;
/**
 * What one request carries, leaving room under the host's 4 MiB body limit
 * for JSON's quoting and the names of the chunks after it.
 */
export const CHUNK_BYTES = 3 * MiB;
export const MAX_ALSO_BYTES = 512 * 1024;
/** JSON's size of an entry in a request, closely enough to keep a chunk under the limit. */
function wireBytes(e) {
    let n = 64 + 6 * Buffer.byteLength(e.name);
    for (const f of e.fields)
        n += 32 + f.field.length + 4 * Math.ceil(Buffer.byteLength(f.value) / 3);
    return n;
}
/** Entries in requests under CHUNK_BYTES and MAX_IMPORT_ENTRIES each. */
export function chunks(entries, budget) {
    const out = [];
    let cur = [];
    let size = 0;
    for (const e of entries) {
        const n = wireBytes(e);
        if (cur.length > 0 && (size + n > budget || cur.length >= MAX_IMPORT_ENTRIES)) {
            out.push(cur);
            cur = [];
            size = 0;
        }
        cur.push(e);
        size += n;
    }
    if (cur.length > 0)
        out.push(cur);
    return out;
}
