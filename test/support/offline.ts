/**
 * The offline attacker of issue 15, written with the project's own crypto and
 * store modules against a copy of `vault.mdb`: what a token (an agent's or a
 * session's) opens with no host in the way, and, for comparison, the keys the
 * owner's passphrase reaches. Tests assert the first holds no key of the
 * second beyond the token's scope.
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, unwrapKey } from '../../src/crypto/aead.js';
import { openSealed, type KeyPair } from '../../src/crypto/box.js';
import { passphraseKey, tokenKeys, type KdfParams } from '../../src/crypto/kdf.js';
import { parseToken } from '../../src/crypto/token.js';
import { Store } from '../../src/store/lmdb/store.js';
import type { Tx } from '../../src/store/tx.js';
import type { VaultHeader } from '../../src/store/schema.js';
import { slots, slotsV1 } from '../../src/host/keys/slots.js';
import { fieldHash } from '../../src/host/keys/grants.js';

/** A copy of the vault's store file in a directory of its own (the attacker's copy). */
export function copyStore(vaultDir: string, into: string = tmpdir()): string {
  const dir = mkdtempSync(join(into, 'stolen-'));
  cpSync(join(vaultDir, 'vault.mdb'), join(dir, 'vault.mdb'));
  return dir;
}

const hex = (b: Buffer) => b.toString('hex');

/**
 * Every key a token reaches in a store copy: its own key pair from the token,
 * then whatever any sealed box anywhere in the store opens with that pair
 * (grants, index keys, schema 1's tier keys), then any wrapped data key those
 * open. Returned as hex; `values` are the field values it decrypts.
 */
export async function tokenLoot(
  dir: string,
  token: string,
): Promise<{ keys: Set<string>; values: string[]; indexRows: number }> {
  const parsed = parseToken(token);
  if (parsed === null) throw new Error('not a token');
  const store = Store.open(dir);
  try {
    return store.read((tx) => {
      const header = tx.header() as VaultHeader;
      const { wrapKey } = tokenKeys(parsed.secret);
      const agent = tx.agent(parsed.agentId);
      const session = tx.session(parsed.agentId);
      const rec = agent ?? session;
      if (rec === null) return { keys: new Set<string>(), values: [], indexRows: 0 };
      const ad =
        agent !== null
          ? slots.agentSecretKey(header.vaultId, rec.id)
          : slots.sessionSecretKey(header.vaultId, rec.id);
      const sk = unwrapKey(wrapKey, rec.secretKey, ad);
      if (sk === null) return { keys: new Set<string>(), values: [], indexRows: 0 };
      const pair: KeyPair = { publicKey: rec.publicKey, secretKey: sk };
      const keys = new Set<string>();
      const found: Buffer[] = [];
      const tryBox = (box: unknown) => {
        if (!Buffer.isBuffer(box) || box.length === 0) return;
        const k = openSealed(pair, box);
        if (k !== null && k.length === 32 && !keys.has(hex(k))) {
          keys.add(hex(k));
          found.push(k);
        }
      };
      for (const r of [...tx.agents(), ...tx.sessions()]) {
        tryBox(r.indexKey);
        for (const g of Object.values(r.grants ?? {})) tryBox(g.box);
        for (const t of Object.values(r.tierKeys ?? {})) tryBox(t);
      }
      // Any found key used as a tier key: the data keys it unwraps.
      for (const e of tx.entries()) {
        for (const k of [...found]) {
          const dk =
            unwrapKey(k, e.dataKey, slots.dataKey(header.vaultId, e.id, e.tier, e.gen)) ??
            unwrapKey(k, e.dataKey, slotsV1.dataKey(header.vaultId, e.id, e.tier));
          if (dk !== null && !keys.has(hex(dk))) {
            keys.add(hex(dk));
            found.push(dk);
          }
        }
      }
      const values = valuesIn(tx, header, found);
      const indexRows = Object.keys(rec.index ?? {}).length;
      return { keys, values: values.sort(), indexRows };
    });
  } finally {
    await store.close();
  }
}

/** The field values `keys` decrypt in a store: every entry's meta and fields tried with each key. */
function valuesIn(tx: Tx, header: VaultHeader, keys: readonly Buffer[]): string[] {
  const values: string[] = [];
  for (const e of tx.entries()) {
    for (const k of keys) {
      const metaRaw = open(k, e.meta, slots.meta(header.vaultId, e.id, e.gen));
      if (metaRaw === null) continue;
      const meta = JSON.parse(metaRaw.toString('utf8')) as { fields: string[] };
      for (const f of meta.fields) {
        const r = tx.field(e.id, fieldHash(k, e.id, f));
        const v = r && open(k, r.value, slots.field(header.vaultId, e.id, f, r.version, r.gen));
        if (v) values.push(v.toString('utf8'));
      }
    }
    // A field record tried with each key under every field name the store could hold is
    // out of reach here; without the meta the attacker has no name, and AEAD needs it.
  }
  return values.sort();
}

/** What keys saved earlier (hex) decrypt in a later copy of the store. */
export async function valuesWith(dir: string, keys: Iterable<string>): Promise<string[]> {
  const store = Store.open(dir);
  try {
    return store.read((tx) =>
      valuesIn(
        tx,
        tx.header() as VaultHeader,
        [...keys].map((k) => Buffer.from(k, 'hex')),
      ),
    );
  } finally {
    await store.close();
  }
}

/** The keys the owner's passphrase reaches: root, tier keys, the owner's index key, each entry's data key (by entry id). */
export async function ownerKeys(
  dir: string,
  passphrase: string,
): Promise<{ root: string; tiers: string[]; index: string; data: Map<string, string> }> {
  const store = Store.open(dir);
  try {
    const header = store.read((tx) => tx.header() as VaultHeader);
    const ok = await passphraseKey(Buffer.from(passphrase), header.kdf as KdfParams);
    const root = unwrapKey(ok, header.rootByOwner, slots.rootByOwner(header.vaultId));
    if (root === null) throw new Error('wrong passphrase');
    const tierKeys = new Map<string, Buffer>();
    for (const [t, w] of Object.entries(header.tiers)) {
      const k = unwrapKey(root, w, slots.tierKey(header.vaultId, t));
      if (k) tierKeys.set(t, k);
    }
    const index = unwrapKey(root, header.indexKey, slots.indexKey(header.vaultId));
    const data = new Map<string, string>();
    store.read((tx) => {
      for (const e of tx.entries()) {
        const tk = tierKeys.get(e.tier);
        const dk =
          tk && unwrapKey(tk, e.dataKey, slots.dataKey(header.vaultId, e.id, e.tier, e.gen));
        if (dk) data.set(e.id, hex(dk));
      }
    });
    return {
      root: hex(root),
      tiers: [...tierKeys.values()].map(hex),
      index: index === null ? '' : hex(index),
      data,
    };
  } finally {
    await store.close();
  }
}

/** Entry ids by name, as the owner sees them (for naming what a key belongs to). */
export async function entryIdsByName(
  dir: string,
  passphrase: string,
): Promise<Map<string, string>> {
  const keys = await ownerKeys(dir, passphrase);
  const store = Store.open(dir);
  try {
    return store.read((tx) => {
      const header = tx.header() as VaultHeader;
      const out = new Map<string, string>();
      for (const e of tx.entries()) {
        const dk = keys.data.get(e.id);
        if (dk === undefined) continue;
        const name = open(Buffer.from(dk, 'hex'), e.name, slots.name(header.vaultId, e.id, e.gen));
        if (name) out.set(name.toString('utf8'), e.id);
      }
      return out;
    });
  } finally {
    await store.close();
  }
}
