/**
 * The room an LMDB store has to grow into: the file system's free bytes and
 * the store file's own reserve past its end (reserve.ts). The host asks
 * before each write transaction (HostContext.commit), so a disk an agent
 * filled refuses cleanly instead of failing a commit halfway.
 */
import { statfsSync } from 'node:fs';
import { VaultError } from '../../core/errors.js';
import { RECORD_BYTES } from '../engine.js';
import { StoreReserve } from './reserve.js';
/**
 * Writes stop while the file system has less than this free. lmdb-js aborts
 * the whole process when a commit meets ENOSPC (heap corruption in its native
 * write path; lmdb-js issue 40), so the host refuses cleanly before that.
 */
export const MIN_FREE_BYTES = 1024 * 1024;
const MiB = 1024 * 1024;
/**
 * How long the grouped path may go on from one statfs answer (ms), at most:
 * until the next commit settles in any case. The requests of one group then
 * ask the file system once, not each (a syscall per fill under load).
 */
const ROOM_KEPT_MS = 5;
function roomMessage(writes, free) {
    const mib = (n) => `${(n / MiB).toFixed(1)} MiB`;
    return `This write needs about ${mib(writes)}; the vault's file system has ${mib(Math.max(0, free - MIN_FREE_BYTES))} free beyond the ${mib(MIN_FREE_BYTES)} kept for audit records. Nothing was changed; free some space, or store a smaller value.`;
}
/** The room of the store file `file` in the vault directory `dir`, from its open on. */
export class DiskRoom {
    dir;
    /**
     * The free bytes statfs last said, less what the grouped transactions
     * checked since may add; forgotten when any commit settles.
     */
    #room = null;
    /** Disk blocks kept for the store's growth (reserve.ts). */
    #reserve;
    constructor(dir, file) {
        this.dir = dir;
        this.#reserve = new StoreReserve(file);
    }
    /**
     * @throws VaultError VLT-3004 when the file system is (nearly) full: the
     * reserve must still hold after a transaction that adds `writes` bytes.
     */
    check(writes, own) {
        const free = own ? this.#freeNow() : this.#freeForGroup(Math.max(writes, RECORD_BYTES));
        // An owner write that would itself cross the reserve is refused as too
        // large, not as a full disk: every other request still fits, and must.
        if (own && free >= MIN_FREE_BYTES + RECORD_BYTES && free < MIN_FREE_BYTES + writes) {
            throw new VaultError('VLT-3013', roomMessage(writes, free));
        }
        if (free < MIN_FREE_BYTES + writes) {
            throw new VaultError('VLT-3004', 'Audit record could not be written (disk full); access refused.');
        }
    }
    settled() {
        this.#room = null;
    }
    /**
     * A commit that failed with EIO on a file system with no room left ran out
     * of space: LMDB reports a short write as EIO. Said as a full disk, which
     * the owner can fix, rather than a disk error, which sends them to replace it.
     */
    explain(err) {
        if (err.code !== 'VLT-3004' || !/\(EIO\)/.test(err.message))
            return err;
        try {
            const fs = statfsSync(this.dir);
            if (fs.bavail * fs.bsize >= MIN_FREE_BYTES)
                return err;
        }
        catch {
            return err;
        }
        return new VaultError('VLT-3004', 'Audit record could not be written: the vault’s file system is full (ENOSPC); access refused until it has room.', { cause: err });
    }
    /** What statfs says now; an owner's write asks afresh (and a commit follows, so nothing is kept). */
    #freeNow() {
        this.#room = null;
        return this.#freeWithReserve();
    }
    /**
     * The file system's free bytes, and the store file's own reserve past its
     * end, topped up first when it is half used and there is room for it.
     */
    #freeWithReserve() {
        const fs = statfsSync(this.dir);
        const free = fs.bavail * fs.bsize;
        return free + this.#reserve.left(free);
    }
    /**
     * The room a grouped transaction is judged by: the last statfs answer, kept
     * while no commit has settled since and for ROOM_KEPT_MS at most, less
     * `charge` for each transaction judged by it before (none of which has
     * committed yet, so a fresh statfs would not have counted them either).
     */
    #freeForGroup(charge) {
        const now = performance.now();
        if (this.#room === null || now - this.#room.at > ROOM_KEPT_MS) {
            this.#room = { free: this.#freeWithReserve(), at: now };
        }
        const free = this.#room.free;
        this.#room.free -= charge;
        return free;
    }
}
