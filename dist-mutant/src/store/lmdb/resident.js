/**
 * The store's pages in the host's resident set, held to those in use
 * (issue 42). LMDB reads the store through a shared read-only map, and a
 * commit writes its pages with pwrite at new page numbers (copy on write),
 * which the next transaction reads back through the map: so every page the
 * audit log ever appended was once faulted in, with the kernel's fault-around
 * neighbours, and stayed mapped. The host's file-backed RSS followed the
 * store (55 -> 106 MiB as it grew 0 -> 50 MiB, bench/host-memory.ts), though
 * a host only ever uses the tree's upper pages and the log's tail.
 *
 * So the host's own store has its mapped pages taken out of the resident set
 * (madvise MADV_DONTNEED, src/kernel/unix.ts) every DROP_EVERY operations,
 * after a backup (which reads every page), and once a while after any
 * operation: nothing is lost, the next read faults the pages it needs back in
 * from the page cache (a minor fault each). Between two drops at most what
 * DROP_EVERY operations touch stays mapped, whatever the store's size.
 *
 * Safe while nothing else unmaps the file (unmapResident): lmdb-js keeps
 * every map it made of the store until the environment closes (a growth
 * maps anew and leaves the old map for lingering readers: mdb_env_set_mapsize,
 * "lmdb-js removal"), and the host's store closes, and reopens after a fault
 * (recover.ts), on this thread, as every drop runs. The start-up scan and
 * `vault check` read the file in a child process (scan.ts).
 */
import { realpathSync } from 'node:fs';
import { unmapResident } from '../../kernel/unix.js';
/** Store operations (reads and write transactions) between two drops. */
export const DROP_EVERY = 256;
/** A drop this long after an operation, when fewer than DROP_EVERY followed it. */
export const DROP_AFTER_MS = 5_000;
export class ResidentPages {
    #ops = 0;
    #timer = null;
    /** The store file's real path: the name /proc/self/maps gives its mappings. */
    #path;
    constructor(path) {
        let real = path;
        try {
            real = realpathSync(path);
        }
        catch {
            // Not there (yet): matched by the name it was opened by.
        }
        this.#path = real;
    }
    /** An operation on the store: a drop once DROP_EVERY have been counted, or soon after the last. */
    touched(weight = 1) {
        this.#ops += weight;
        if (this.#ops >= DROP_EVERY) {
            this.drop();
            return;
        }
        this.#timer ??= setTimeout(() => {
            this.#timer = null;
            this.drop();
        }, DROP_AFTER_MS).unref();
    }
    /** Takes the store's pages out of the resident set now. */
    drop() {
        this.#ops = 0;
        if (this.#timer !== null) {
            clearTimeout(this.#timer);
            this.#timer = null;
        }
        try {
            unmapResident(this.#path);
        }
        catch {
            // No madvise here (koffi could not load libc): the pages stay, as before.
        }
    }
    /** The store is closing: no drop after it. */
    stop() {
        if (this.#timer !== null)
            clearTimeout(this.#timer);
        this.#timer = null;
    }
}
