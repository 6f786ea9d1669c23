/** What a host (pg.ts) asks its database thread (pg-worker.ts), and what the thread answers. */
export type PgRequest =
  | { readonly op: 'create' }
  | { readonly op: 'refresh'; readonly since: number }
  | { readonly op: 'begin'; readonly since: number }
  | {
      readonly op: 'load';
      /** With the first page: the state key, so each page's share of the sealed digest comes with it. */
      readonly sealKey?: Uint8Array | null;
      /** With the first page: the shares the host's file holds (digest-chunks.ts `sharesTable`). */
      readonly shares?: Uint8Array | null;
      /** False: the first page, which opens the snapshot and its cursor. */
      readonly more: boolean;
      readonly limit: number;
    }
  | {
      readonly op: 'commit';
      readonly version: number;
      readonly keys: string[];
      readonly values: (Uint8Array | null)[];
    }
  | {
      /** The optimistic commit (`tryCommit`): written only if the vault is still at `since`. */
      readonly op: 'try';
      readonly since: number;
      readonly keys: string[];
      readonly values: (Uint8Array | null)[];
    }
  | { readonly op: 'rollback' }
  | {
      /** Rows a host does not hold (mirror.ts COLD) in [start, end), in key order, with the version read at. */
      readonly op: 'cold';
      readonly start: string;
      readonly end: string;
      readonly limit: number;
    }
  | { readonly op: 'listen' }
  | { readonly op: 'close' };

export interface PgRow {
  readonly key: string;
  readonly value: Uint8Array | null;
}

export type PgReply =
  | {
      readonly ok: true;
      readonly version?: number;
      /** A `try`: whether it committed (else `rows` and `version` are what it lost to). */
      readonly won?: boolean;
      readonly rows?: PgRow[];
      readonly missing?: boolean;
      /**
       * The copy's version is below the horizon (horizon.ts): removals it has
       * not seen may be gone, so no rows came; the host loads afresh.
       */
      readonly behind?: boolean;
      /** A load's last page (its snapshot closed). */
      readonly done?: boolean;
      /** A load's page, packed (`pack`) and handed over whole: no object or copy per row. */
      readonly packed?: ArrayBuffer;
      /** The page's share of the sealed digest (digest-chunks.ts `pageShare`), when the key came. */
      readonly digest?: Uint8Array | null;
      /** With `digest`: the page's chunks, and how many came from the host's file or were computed. */
      readonly chunks?: Uint8Array;
      readonly reused?: number;
      readonly computed?: number;
    }
  | {
      readonly ok: false;
      readonly message: string;
      /** SQLSTATE, or the socket error's code. */
      readonly code: string;
      /** The connection failed or was lost (as against an error the database reported). */
      readonly lost: boolean;
    };
