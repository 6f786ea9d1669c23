/**
 * Room for the audit log that nothing else on the machine can take. The
 * working directory of an agent under `run` is its to write, and usually on
 * the same file system as the vault: filling it made the host refuse every
 * release (VLT-3004: no value leaves without its record) until the owner
 * freed space. So the host keeps RESERVE_BYTES of disk blocks allocated to
 * the LMDB store file past its end (fallocate with FALLOC_FL_KEEP_SIZE): the
 * file grows into them with no free space needed, and the room check counts
 * them as room. Topped up when half is used, whenever the file system has
 * room for it.
 *
 * Only blocks this process allocated count (and never more than
 * RESERVE_BYTES): XFS also shows speculative preallocation past a file's end,
 * which it takes back when the disk fills. Where fallocate is missing or
 * finds no room there is no reserve, and the room check is statfs's alone.
 */
import { closeSync, openSync, statSync } from 'node:fs';
import { keepBlocks } from '../../kernel/unix.js';
export const RESERVE_BYTES = 16 * 1024 * 1024;
/** The bytes allocated to `path` past its end (blocks beyond its size), or 0. */
function pastEnd(path) {
    try {
        const st = statSync(path);
        return Math.max(0, st.blocks * 512 - st.size);
    }
    catch {
        return 0;
    }
}
/** The reserve of one store file, for as long as the host has it open. */
export class StoreReserve {
    path;
    /** Whether this process allocated the reserve (a range allocated before takes no new room). */
    #ours = false;
    constructor(path) {
        this.path = path;
        this.#ours = this.#allocate();
    }
    /**
     * What is left of the reserve, after topping it up when less than half is
     * left and the file system has `free` bytes to spare for it.
     */
    left(free) {
        if (this.#left() < RESERVE_BYTES / 2 && free >= 2 * RESERVE_BYTES)
            this.#ours = this.#allocate() || this.#ours;
        return this.#left();
    }
    #left() {
        return this.#ours ? Math.min(RESERVE_BYTES, pastEnd(this.path)) : 0;
    }
    #allocate() {
        let fd = null;
        try {
            fd = openSync(this.path, 'r+');
            return keepBlocks(fd, statSync(this.path).size, RESERVE_BYTES);
        }
        catch {
            return false;
        }
        finally {
            if (fd !== null)
                closeSync(fd);
        }
    }
}
