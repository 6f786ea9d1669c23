// The live store of a rig's vault, read or written beside its running host
// with the project's own store module, as any process of the owner's OS user
// can: the attacker of issues 15 and 24, and the test's own look inside.
import { Store } from '../../src/store/lmdb/store.js';
import type { Tx } from '../../src/store/tx.js';

/** Runs `fn` in one write transaction on the vault's store, then closes it. */
export async function writeStore<T>(vaultDir: string, fn: (tx: Tx) => T): Promise<T> {
  const store = Store.open(vaultDir);
  try {
    return store.write(fn);
  } finally {
    await store.close();
  }
}

/** Runs `fn` in one read transaction on the vault's store, then closes it. */
export async function readStore<T>(vaultDir: string, fn: (tx: Tx) => T): Promise<T> {
  const store = Store.open(vaultDir);
  try {
    return store.read(fn);
  } finally {
    await store.close();
  }
}
