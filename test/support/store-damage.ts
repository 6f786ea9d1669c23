/**
 * Damage to a vault's store made the way a disk error or an attacker with
 * write access would make it, below the Store API: record edits through a raw
 * LMDB handle, and byte flips in the file with the page layout named. Shared
 * by the damage tests (check, crash, audit, byte-flip); the host must be
 * stopped first, as a store is only ever edited under it here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// Below the Store API on purpose: the damage must not pass through our own checks.
// eslint-disable-next-line no-restricted-imports
import { open, type RootDatabase } from 'lmdb';
import { STORE_FILE } from '../../src/core/protocol.js';

/** LMDB's page size on this machine (and the store's). */
export const PAGE = 4096;

/** The store file of a vault directory. */
export function storeFile(vaultDir: string): string {
  return join(vaultDir, STORE_FILE);
}

/** The store opened raw: LMDB's own handle, no checksums or seals in the way. */
export type RawStore = RootDatabase;

/** Runs `edit` on the vault's store opened raw (msgpack, as the host writes it), then closes it. */
export async function editRecords<T>(vaultDir: string, edit: (db: RawStore) => T): Promise<T> {
  const db = open({
    path: storeFile(vaultDir),
    encoding: 'msgpack',
    compression: false,
    cache: false,
  });
  try {
    return edit(db);
  } finally {
    await db.close();
  }
}

/** Reads the store file, lets `edit` change its bytes in place, writes it back. */
export function editBytes(vaultDir: string, edit: (bytes: Buffer) => void): void {
  const file = storeFile(vaultDir);
  const bytes = readFileSync(file);
  edit(bytes);
  writeFileSync(file, bytes);
}

/** Flips one bit of `bytes` in place. */
export function flipBit(bytes: Buffer, offset: number, bit: number): void {
  bytes[offset] = (bytes[offset] ?? 0) ^ (1 << bit);
}

/**
 * The offset of the meta page LMDB reads (of pages 0 and 1, the one with the
 * larger transaction id, at byte 152 of each).
 */
export function newerMeta(bytes: Buffer): number {
  return bytes.readBigUInt64LE(152) > bytes.readBigUInt64LE(PAGE + 152) ? 0 : PAGE;
}

/** Whether the page at `page` (a number) is a leaf: its flags (bytes 18-19) are 2. */
export function isLeaf(bytes: Buffer, page: number): boolean {
  return bytes.readUInt16LE(page * PAGE + 18) === 2;
}
