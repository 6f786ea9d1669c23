/**
 * A heap overflow in lmdb-js's native code, stopped before it can happen.
 *
 * When LMDB fails to write a commit's data pages (pwrite: EIO, ENOSPC,
 * EROFS), lmdb-js 3.5.6's mdb_page_flush (dependencies/lmdb/.../mdb.c:4742)
 * describes the failure so:
 *
 *   last_error = malloc(100);
 *   sprintf(last_error, "Attempting to write page at position %u, size %u,
 *           blocks %u, buffer sizes %i %i %i", wpos, wsize, n,
 *           iov[0].iov_len, iov[1].iov_len, iov[2].iov_len);
 *
 * iov[1] and iov[2] are not set when fewer than three pages were written at
 * once (nearly always): stack garbage, up to 11 characters each, and the
 * text reaches 126 bytes, past the 104 that malloc(100) gives. The overflow
 * overwrites the size of the next heap chunk, and the process dies later by
 * SIGABRT ("double free or corruption (!prev)" in the failed commit's own
 * clean-up: mdb_txn_commit -> mdb_txn_abort -> mdb_txn_end -> mdb_midl_free)
 * or SIGSEGV (a free elsewhere), often before the failure ever reaches
 * JavaScript: about 2 of 3 fault windows on data writes killed the host
 * (issue 42). No later lmdb-js release changes it (3.5.6 is the newest).
 *
 * So, once lmdb-js is loaded and before any store opens, the format in this
 * process's mapping of the native library is cut after `blocks %u` (the
 * arguments left over are ignored by sprintf): at most 76 bytes. The file on
 * disk is untouched. A build without that exact format (another version, a
 * fixed one) is left as it is.
 */
import { readFileSync } from 'node:fs';
import { patchMappedConstant } from '../../kernel/unix.js';
const UNSAFE = 'Attempting to write page at position %u, size %u, blocks %u, buffer sizes %i %i %i\0';
const SAFE = 'Attempting to write page at position %u, size %u, blocks %u\0';
let done = null;
/** lmdb-js's native libraries mapped into this process (files ending in .node under an lmdb package). */
function loadedLmdb() {
    let maps;
    try {
        maps = readFileSync('/proc/self/maps', 'utf8');
    }
    catch {
        return [];
    }
    const files = new Set();
    for (const line of maps.split('\n')) {
        const path = /\s(\/\S*lmdb\S*\.node)$/.exec(line)?.[1];
        if (path !== undefined)
            files.add(path);
    }
    return [...files];
}
/**
 * Mends the format in every lmdb-js native library this process has loaded
 * (once per process; lmdb must be imported first, as store.ts does).
 */
export function guardFlushError() {
    if (done !== null)
        return done;
    const unsafe = Buffer.from(UNSAFE, 'latin1');
    const safe = Buffer.from(SAFE, 'latin1');
    let out = 'absent';
    for (const file of loadedLmdb()) {
        let bytes;
        try {
            bytes = readFileSync(file);
        }
        catch {
            continue;
        }
        const at = bytes.indexOf(unsafe);
        // Exactly once, or it is not the build this was measured on.
        if (at < 0 || bytes.indexOf(unsafe, at + 1) >= 0)
            continue;
        if (!patchMappedConstant(file, at, safe)) {
            out = 'failed';
            break;
        }
        out = 'mended';
    }
    done = out;
    return out;
}
