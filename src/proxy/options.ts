/** What starting the proxy takes (its host hooks and rules) and what a running proxy offers (server.ts). */
import type { Socket } from 'node:net';
import type { Decoded } from '../core/protocol.js';
import type { Authority } from './ca.js';
import type { Counted, Signal } from './policy.js';
import type { RefusalHook } from './refusal.js';

/**
 * What the host is asked to sign: the `sign` operation's body (core/requests.ts)
 * less the token and the host. `headers`: flat name, value list of the signed
 * headers, as they go upstream.
 */
export type SignPieces = Omit<Decoded<'sign'>, 'token' | 'host'>;

/** The host's signature: the headers to put over the client's. */
export interface Signed {
  readonly authorization: string;
  readonly date: string;
  /** The entry's session token, or null: the header is dropped. */
  readonly sessionToken: string | null;
}

/**
 * Asks the vault host, as `caller`, to sign a request signed with a
 * surrogate AWS key id (sigv4.ts) for `host`: released and audited as a
 * fill; throws its VaultError.
 */
export type Signer = (pieces: SignPieces, host: string, caller: string | null) => Promise<Signed>;

/**
 * Resolves references for one request through the vault host; throws its
 * VaultError. `caller` is the token from the request's (or its tunnel's)
 * Proxy-Authorization, null when none was given. `request` is the method and
 * target (path and query) the values go into: the host judges the agent's
 * request caveats by it (core/caveats.ts).
 */
export type Resolver = (
  refs: readonly { entry: string; field: string }[],
  host: string,
  caller: string | null,
  request: { readonly method: string; readonly target: string },
) => Promise<Buffer[]>;

/**
 * Reports to the vault host, as `caller` (null: the proxy's own agent), an
 * attempt the proxy refused that counts as a violation (policy.ts Signal);
 * resolves with what the host did, or throws its VaultError. Called only for
 * a refused request: a fill never waits on it.
 */
export type Reporter = (signal: Signal, caller: string | null) => Promise<{ outcome: Counted }>;

export interface ProxyOptions {
  readonly port: number;
  readonly authority: Authority;
  readonly resolve: Resolver;
  /** PEM certificates upstream servers are verified against (system roots, plus any extra). */
  readonly upstreamCa: readonly string[];
  /**
   * Refuse (407, VLT-2040) a CONNECT or absolute-form request that carries no
   * caller token, before anything goes upstream. A malformed
   * Proxy-Authorization is refused either way.
   */
  readonly requireCaller?: boolean;
  /**
   * Checks a caller token with the host before its tunnel opens or its
   * request goes on, references or not; throws the host's VaultError
   * (VLT-2040 unknown or revoked, VLT-2043 locked). A token admitted is not
   * asked about again for ADMIT_FOR_MS: each fill is checked by the host anyway.
   */
  readonly admit?: (caller: string) => Promise<void>;
  /**
   * For a sandboxed `run` session: destinations on this machine (local.ts:
   * loopback, unspecified, link-local, its interface addresses, judged by
   * what the name resolves to) are refused (403, VLT-2053) unless their
   * `host:port` is in this set (the owner's `--allow-net`).
   */
  readonly confine?: ReadonlySet<string>;
  /**
   * For a `run` session's proxy: the one caller token it serves. Any other
   * token (the agent's long-lived one, another session's) is refused (403,
   * VLT-2051) before any host call, so it can fill nothing the session's
   * scope does not hold; no token at all is refused as with `requireCaller`.
   */
  readonly sessionToken?: string;
  /** Hears of every refusal the proxy answers (its code and message; refusal.ts). */
  readonly onRefusal?: RefusalHook;
  /** Where attempts that count as violations are reported; without it, they are only refused. */
  readonly report?: Reporter;
  /** Where a request signed with a surrogate AWS key is re-signed; without it, such a request is refused. */
  readonly sign?: Signer;
}

export interface RunningProxy {
  readonly port: number;
  /**
   * Serves a connection that arrived some other way than the TCP port: `run`
   * hands over those of its sandbox's relay (a Unix socket).
   */
  accept(socket: Socket): void;
  close(): Promise<void>;
}
