/**
 * The vault's store, on either engine; this file alone chooses which. The
 * folder: schema.ts (records and keys), tx.ts (a transaction over plain
 * rows), engine.ts (the store as the host uses it, and the capabilities only
 * one engine offers), lmdb/ (the embedded store file of one host, the only
 * importer of lmdb) and pg/ (a PostgreSQL database several hosts share, the
 * only importer of pg). It holds ciphertext and metadata only: entry names
 * and values are sealed before they arrive here, names are keyed hashes.
 *
 * A PostgreSQL store when the host was started with a URL or the vault
 * directory's config names one (location.ts), else the LMDB store file in
 * the vault directory. Everything outside src/store asks a StorePlace for
 * the store and for what only its engine does, and never names the engine.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STORE_FILE } from '../core/protocol.js';
import type { VaultStore } from './engine.js';
import { scanAtStart, scanInChild } from './lmdb/scan.js';
export { isFailedCommitEcho, diskFault } from './lmdb/failures.js';
import { Store } from './lmdb/store.js';
import { checkArgvUrl } from './location.js';
import { PgStore } from './pg/pg.js';
import { displayUrl } from './pg/url.js';

/** Where a vault's store is, and how it is opened there. */
export interface StorePlace {
  /** How an audit record names it: `lmdb`, or the database URL without its password. */
  readonly label: string;
  /** Whether a store is there to open (a PostgreSQL store named is: its database says at first use). */
  exists(): boolean;
  /**
   * The host's store, opened: nothing asked of a database yet; an LMDB file
   * gets its record checksums if it is from before them, and its disk room.
   * @throws what opening the store file meets
   */
  open(): VaultStore;
  /**
   * `vault create`: the store made (the LMDB file, or the database's tables)
   * and keeping checksums from its first record. An LMDB store already `open`
   * is that same file; a database's, opened before its tables were made, is
   * opened anew.
   * @throws VaultError VLT-3040 when the database does not answer
   */
  create(open: VaultStore | null): VaultStore;
  /** `vault migrate`: a store to copy the vault into, made but empty, none of the host's keeping. */
  target(): VaultStore;
  /**
   * Where the engine's store can crash its reader (LMDB keeps no page
   * checksums): the store read whole, and written into on a copy, in a child
   * process, before anything in this one opens it. Null when it survives (or
   * there is no store yet), else what went wrong.
   * Skipped when the file is the one the last host closed cleanly (LMDB:
   * lmdb/known-good.ts), which `log` says.
   * @throws VaultError VLT-3004 when the disk fails to read it (EIO): not damage
   */
  scan?(log: (line: string) => void): Promise<string | null>;
}

/** The store of the vault in `dir`; `url`, a PostgreSQL store's, when it is in one. */
export function storePlace(dir: string, url: string | null): StorePlace {
  return url === null ? lmdbPlace(dir) : pgPlace(url, dir);
}

function lmdbPlace(dir: string): StorePlace {
  const file = join(dir, STORE_FILE);
  return {
    label: 'lmdb',
    exists: () => Store.exists(dir),
    open: () => {
      const store = Store.open(dir);
      addSums(store);
      store.keepRoom();
      return store;
    },
    create: (open) => {
      if (open !== null) return open;
      const store = Store.open(dir);
      // A new store keeps checksums from its first record.
      store.write((tx) => tx.addMissingSums());
      store.keepRoom();
      return store;
    },
    target: () => Store.open(dir),
    // The host's start: nothing else writes the store while its scan runs (the host lock);
    // no scan when the file is the one a host closed cleanly (lmdb/known-good.ts).
    scan: (log) => (existsSync(file) ? scanAtStart(file, log) : Promise.resolve(null)),
  };
}

function pgPlace(url: string, dir: string): StorePlace {
  return {
    label: displayUrl(url),
    exists: () => true,
    // The host's directory keeps its file of digest shares (pg/digest-chunks.ts).
    open: () => PgStore.open(url, dir),
    create: () => {
      const pg = PgStore.open(url, dir);
      pg.create();
      pg.write((tx) => tx.addMissingSums());
      return pg;
    },
    target: () => {
      const pg = PgStore.open(url);
      pg.create();
      return pg;
    },
  };
}

/** A vault from before record checksums gets them on first open (tx.ts addMissingSums). */
function addSums(store: VaultStore): void {
  try {
    if (store.read((tx) => tx.header() !== null && !tx.sumsKept())) {
      store.write((tx) => tx.addMissingSums());
    }
  } catch {
    // A store that cannot be written or read here: the request that needs it says so.
  }
}

/**
 * A store file in the backup format (an LMDB store file, whichever engine
 * the vault is in: VaultStore.backup) that no host serves.
 */
export function openStoreFile(path: string): VaultStore {
  return Store.openFile(path);
}

/**
 * A store file in the backup format read whole, and written into on a copy,
 * in a child process (lmdb/scan.ts): null when it survives, else what went
 * wrong. Before anything in this process opens it.
 * @throws VaultError VLT-3004 when the disk fails to read it (EIO): not damage
 */
export function scanStoreFile(path: string): Promise<string | null> {
  return scanInChild(path);
}

/**
 * Where `vault migrate --to` sends the vault: `lmdb` for the vault
 * directory's store file (null), else a postgresql:// URL as a command line
 * may carry it.
 * @throws VaultError VLT-3042
 */
export function migrateTarget(to: string): string | null {
  if (to === 'lmdb') return null;
  checkArgvUrl(to);
  return to;
}
