/**
 * What a transaction runs on, whichever engine holds the vault: the embedded
 * LMDB file (store.ts, one host) or a PostgreSQL database (pg.ts, several
 * hosts). The host code is written once against these rows, synchronously:
 * a transaction is a function of a `Tx` (store.ts, the schema) over them, and
 * whatever it returns leaves the host only after its commit is durable.
 */
/** A half-open key range [start, end); both optional; `limit` caps the count. */
export interface KeyRange {
  readonly start?: string;
  readonly end?: string;
  readonly limit?: number;
}

/**
 * The rows one transaction sees: a sorted map of string keys to records.
 * `get` throws when a record does not decode (damage), so `vault check` can
 * tell it from one that is absent (undefined).
 */
export interface Rows {
  get(key: string): unknown;
  getRange(range: KeyRange): Iterable<{ key: unknown; value: unknown }>;
  getKeys(range: KeyRange): Iterable<unknown>;
  put(key: string, value: unknown): void;
  remove(key: string): void;
}
