/**
 * What a client needs to know to reach the vault host: where its socket is,
 * how to start one, and the owner's memory of the audit anchor. Types only,
 * so importing them costs a command nothing at run time.
 */
import type { AnchorRef } from '../core/protocol.js';

export interface ClientOptions {
  /** The vault directory (the host's socket is there unless `socketDir` says otherwise). */
  readonly vaultDir: string;
  /** Where the host's socket is: the hardened host's socket directory. */
  readonly socketDir?: string;
  /** The hardened host (its user's uid), when this client uses it: never started from here. */
  readonly system?: { readonly uid: number; readonly user: string } | null;
  /** How to start a host: the node binary and the CLI script to run `daemon` with. */
  readonly daemon: {
    readonly node: string;
    readonly script: string;
    readonly env: NodeJS.ProcessEnv;
  };
  /** Whether to start a host when none answers. */
  readonly autoStart?: boolean;
  /** Accept a host under libfaketime before sending a passphrase (tests only; see host-check.ts). */
  readonly acceptFaketime?: boolean;
  /** The owner's memory of the audit anchor its last command left (src/cli/owner.ts). */
  readonly anchors?: AnchorMemory;
  /**
   * A team host's TLS listener (VAULT_HOST_URL), for an agent on a machine
   * with no host: its certificate checked against `ca`; never started from here.
   */
  readonly remote?: { readonly host: string; readonly port: number; readonly ca: string } | null;
}

/**
 * Where the owner's client keeps the audit anchor its last command left: sent
 * with each owner request (the host refuses a log cut back before it), and
 * replaced by the anchor each reply brings.
 */
export interface AnchorMemory {
  seen(): AnchorRef | undefined;
  remember(anchor: AnchorRef): void;
  /** After a restore: the log is the backup's, older than any anchor remembered. */
  forget(): void;
}
