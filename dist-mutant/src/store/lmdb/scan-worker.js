/**
 * The child process of `vault check` that reads the whole store first: LMDB
 * keeps no page checksums, and a damaged page can crash or hang its reader,
 * so that reader is this process, never the host. Then, on a copy of the
 * store beside it, it writes into every leaf page (a damaged page that
 * reads survive can crash an insert), takes every page the free-page list
 * names (a damaged list is met only by writers, and only by the one that
 * happens to be handed the damaged part) and commits a run of write
 * transactions: any of these would crash or fail the host's writes. Prints `read <records>` once read,
 * then `ok <records>`; `fault <EIO...>` when the disk fails to read the file.
 * Its arguments: the store file's path, then `--read-only` (no write probe) or
 * `--alone` (nothing else writes the store meanwhile: the host's start).
 */
import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { diskFault } from './failures.js';
import { Store } from './store.js';
const WRITES = 64;
/** The disk failed to read the store file: a fault of the disk, not damage to the file. */
class ReadFault extends Error {
}
/**
 * Reads the file whole through read(2) before LMDB maps it: a disk that fails
 * a read says so here (EIO), where LMDB would crash (a failed read of a meta
 * page crashes lmdb-js's open, SIGSEGV; one of a mapped page is a SIGBUS),
 * which the parent takes for damage. About 10 ms for 30 MB, mostly from the
 * page cache the map then reads again.
 */
function readWhole(path) {
    let fd;
    try {
        fd = openSync(path, 'r');
    }
    catch (err) {
        throw new ReadFault(diskFault(err) ?? 'open failed', { cause: err });
    }
    try {
        const buf = Buffer.allocUnsafe(1 << 20);
        for (let at = 0;;) {
            const n = readSync(fd, buf, 0, buf.length, at);
            if (n === 0)
                break;
            at += n;
        }
    }
    catch (err) {
        const fault = diskFault(err);
        if (fault === null)
            throw err;
        throw new ReadFault(fault, { cause: err });
    }
    finally {
        closeSync(fd);
    }
}
/**
 * The write probe on the scratch copy: writes that exercise the free-page
 * list, then every record's bytes must read as before (`before`: the store's
 * read when the copy holds just what it found, else the copy is read first).
 * Null when it held; the disk fault a write into the copy met (EIO, ENOSPC),
 * which says nothing about the store: LMDB names damage with its own codes,
 * or crashes.
 * @throws Error when the copy reads differently after the writes (damage)
 */
async function probeScratch(copy, before) {
    try {
        const writable = Store.openScratch(copy);
        const was = before ?? writable.read(() => writable.readRaw(true));
        writable.probeWrites();
        writable.drainFreePages();
        for (let i = 0; i < WRITES; i++)
            writable.scratchWrite(i);
        // A damaged list can hand out a page past the end or one in use without an
        // error at the time: the copy must still read as it did (the scratch
        // records removed again).
        const after = writable.read(() => writable.readRaw(true));
        if (after.records !== was.records || after.digest !== was.digest) {
            throw new Error('the records read differently after writes');
        }
        await writable.close();
        return null;
    }
    catch (err) {
        const fault = diskFault(err);
        if (fault === null)
            throw err;
        return fault;
    }
}
async function main(path, writes, alone) {
    readWhole(path);
    const store = Store.openFile(path, true);
    try {
        // Each record read by its key, its bytes not decoded: reading is what can
        // crash or hang, and the checksums are `vault check`'s to compare (issue
        // 37: decoding and checksumming every record, here and twice on the copy,
        // was most of a 27 s host start at 100,000 entries).
        // `alone` (nothing else writes the store: the host's start): the copy holds
        // what this read finds, so this read's digest is the copy's before the
        // probe, and the copy is not read twice.
        const read = store.read(() => store.readRaw(alone));
        const n = read.records;
        // Every page up to the last one was written, so the file holds them all. A
        // damaged last-page number past the end sends the next write gigabytes out.
        if (store.claimedBytes() > store.bytes()) {
            throw new Error('its last page lies past the end of the file');
        }
        if (!writes)
            return n;
        // Read whole: what follows is the write probe (the parent names which one failed).
        process.stdout.write(`read ${n}\n`);
        const scratch = join(dirname(path), `.check-${process.pid}`);
        const copy = join(scratch, 'vault.mdb');
        // The parent holds our stdin open: its end means the parent died (a host
        // killed mid-scan). The copy is then nobody's: remove it and stop.
        const orphaned = () => {
            rmSync(scratch, { recursive: true, force: true });
            process.exit(1);
        };
        process.stdin.on('end', orphaned);
        process.stdin.resume();
        try {
            mkdirSync(scratch, { mode: 0o700 });
            // LMDB's own copy of one snapshot, page for page (not compacted: the
            // damage is in the pages): a host may be writing while check runs.
            await store.copyPages(copy);
        }
        catch (err) {
            // No room for the copy (or no right to make it) says nothing about the store: no probe.
            rmSync(scratch, { recursive: true, force: true });
            process.stdin.off('end', orphaned);
            process.stdin.destroy();
            const code = err.code ?? err.message.split(':')[0];
            process.stdout.write(`no probe: ${code ?? 'copy failed'}\n`);
            return n;
        }
        let probeFault = null;
        try {
            probeFault = await probeScratch(copy, alone ? read : null);
        }
        finally {
            rmSync(scratch, { recursive: true, force: true });
            // Done with the copy: stdin no longer keeps this process alive.
            process.stdin.off('end', orphaned);
            process.stdin.destroy();
        }
        if (probeFault !== null) {
            process.stdout.write(`no probe: ${probeFault}\nok ${n}\n`);
            // The copy's environment may be left mid-transaction: its close can hang.
            process.exit(0);
        }
        return n;
    }
    finally {
        await store.close();
    }
}
const path = process.argv[2];
if (path === undefined) {
    process.stdout.write('no path\n');
    process.exitCode = 2;
}
else {
    try {
        const flag = process.argv[3];
        process.stdout.write(`ok ${await main(path, flag !== '--read-only', flag === '--alone')}\n`);
    }
    catch (err) {
        // A read the disk failed (EIO); else LMDB's code (MDB_PAGE_NOTFOUND: ...)
        // or what the check found; no record's content.
        const what = err instanceof Error ? err.message.split(':')[0]?.slice(0, 60) : 'error';
        process.stdout.write(err instanceof ReadFault ? `fault ${err.message}\n` : `${what ?? 'error'}\n`);
        // An environment left mid-transaction by a failed write can hang its close.
        process.exit(1);
    }
}
