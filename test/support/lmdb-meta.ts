/**
 * What an LMDB file's meta pages say of it, read from the file itself: the
 * newest committed transaction, and the newest one LMDB has synced to disk.
 * lmdb-js (overlappingSync) commits without syncing, marks such a meta page
 * with MDB_OVERLAPPINGSYNC, and writes a third, synced meta (half-way into
 * page 0) only after fdatasync returned. A reader of the file sees the page
 * cache, so "synced" here is what LMDB says it synced, which is what a
 * SIGKILL test alone cannot tell apart from "committed".
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** mdb.c: MDB_page_header on 64-bit builds. */
const PAGE_HEADER = 24;
const MAGIC = 0xbeefc0de;
const OVERLAPPING_SYNC = 0x1000;
/** Offsets inside MDB_meta: mm_dbs[FREE_DBI].md_pad (the page size), .md_flags, mm_txnid. */
const PSIZE = 24;
const FLAGS = 28;
const TXNID = 128;

export interface MetaState {
  /** The newest transaction committed (visible to readers). */
  readonly committed: number;
  /** The newest transaction whose pages and meta LMDB has synced. */
  readonly synced: number;
}

export function lmdbMeta(file: string): MetaState {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(PAGE_HEADER + PSIZE + 4);
    readSync(fd, head, 0, head.length, 0);
    const psize = head.readUInt32LE(PAGE_HEADER + PSIZE);
    const page = Buffer.alloc(psize);
    readSync(fd, page, 0, psize, 0);
    const second = Buffer.alloc(psize);
    readSync(fd, second, 0, psize, psize);
    let committed = 0;
    let synced = 0;
    for (const meta of [page.subarray(PAGE_HEADER), second.subarray(PAGE_HEADER)]) {
      if (meta.readUInt32LE(0) !== MAGIC) continue;
      const txn = Number(meta.readBigUInt64LE(TXNID));
      committed = Math.max(committed, txn);
      if ((meta.readUInt16LE(FLAGS) & OVERLAPPING_SYNC) === 0) synced = Math.max(synced, txn);
    }
    // The synced meta is written from mm_mapsize on (no magic); a zero page size means never written.
    const half = page.subarray(psize / 2 + PAGE_HEADER);
    if (half.readUInt32LE(PSIZE) !== 0) {
      synced = Math.max(synced, Number(half.readBigUInt64LE(TXNID)));
    }
    return { committed, synced };
  } finally {
    closeSync(fd);
  }
}
