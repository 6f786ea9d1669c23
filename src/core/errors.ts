/**
 * Permanent error codes and the one table that maps them to exit statuses.
 *
 * Codes never change and are never reused; messages may. A message never
 * carries a value, a token or a passphrase: callers pass only names the user
 * typed or fixed text. `cli/edge` is the only place that turns a code into a
 * process exit status.
 */

export const ERRORS = {
  'VLT-1001': { exit: 64, message: 'Usage error.' },
  'VLT-1002': { exit: 65, message: 'Invalid input.' },
  'VLT-1003': { exit: 64, message: 'A terminal is needed for this prompt.' },
  /** `run`: the command is not an executable file, or not on PATH. 127, as a shell says. */
  'VLT-1004': { exit: 127, message: 'Command not found.' },
  /**
   * `run`: the agent sandbox cannot start here (no bubblewrap, no socat, no user
   * namespaces, not Linux). 69 (EX_UNAVAILABLE): a missing service, not bad input;
   * the message names what is missing and how to fix it, or --no-sandbox.
   */
  'VLT-1005': { exit: 69, message: 'The agent sandbox cannot start here.' },
  /** One request names more references than the host takes at once (MAX_REFS); 64, as usage. */
  'VLT-1006': { exit: 64, message: 'Too many references in one request; nothing was resolved.' },
  /** `host install|uninstall` run without root. 77 (EX_NOPERM). */
  'VLT-1007': { exit: 77, message: 'This command needs root.' },
  /** `host uninstall` would delete the hardened host's vault: --move-to or --purge decides. */
  'VLT-1008': { exit: 64, message: 'The hardened host still holds a vault; say where it goes.' },
  /** A vault to be moved is still served by a host: stop it first. 75 (EX_TEMPFAIL). */
  'VLT-1009': { exit: 75, message: 'A vault host still serves this vault; stop it first.' },
  /** `vault restore` without a terminal to ask on, and without --yes. */
  'VLT-1010': {
    exit: 64,
    message: 'Restore replaces the vault: confirm with --yes when no terminal can ask.',
  },
  /** `import`: the file is not what its format says; the message names the line or item, never its text. */
  'VLT-1011': { exit: 65, message: 'The import file cannot be read as its format.' },
  /** `import`: entries of that name exist; nothing was imported (--overwrite or --skip-existing decides). */
  'VLT-1012': { exit: 73, message: 'Entries of these names already exist; nothing was imported.' },
  /** `import`: the source is a symbolic link, not a regular file, or larger than an import reads. */
  'VLT-1013': { exit: 65, message: 'The import source was refused.' },
  /** `held`: no held session of that name, or nothing held at that path. */
  'VLT-1014': { exit: 66, message: 'Nothing is held there.' },
  /** `held restore`: the held thing's place is taken by a directory; it stays held. */
  'VLT-1015': { exit: 73, message: 'The held file cannot be restored over a directory.' },
  'VLT-2040': { exit: 77, message: 'Invalid token.' },
  'VLT-2041': { exit: 77, message: 'Access denied.' },
  'VLT-2042': { exit: 75, message: 'Rate limit exceeded; violation recorded.' },
  'VLT-2043': {
    exit: 77,
    message: 'Agent locked; the owner must unlock it with the hardware key.',
  },
  'VLT-2044': { exit: 65, message: 'Field not found.' },
  'VLT-2045': { exit: 77, message: 'Destination host not allowed for this credential.' },
  'VLT-2046': { exit: 65, message: 'Malformed reference.' },
  'VLT-2047': {
    exit: 65,
    message: 'Value cannot go in a header (it holds CR, LF or NUL); nothing was sent.',
  },
  'VLT-2048': {
    exit: 65,
    message: 'Malformed or ambiguous request; nothing was sent.',
  },
  'VLT-2049': { exit: 64, message: 'Not a proxy request: the proxy serves no API and no page.' },
  /**
   * get, totp, render: stdout is a terminal or a file, and values go only into
   * a pipe. 64 (usage), not 77: nothing about the credential was refused and
   * nothing reached the host; the same command piped succeeds, so the caller
   * should change how it runs the command, not stop and ask for access.
   */
  'VLT-2050': {
    exit: 64,
    message: 'Values go only into a pipe; stdout is not one.',
  },
  /** A sandboxed agent asked for something only the owner, outside the sandbox, may do. */
  'VLT-2051': {
    exit: 77,
    message: 'Not allowed from inside a `vault-cli run` sandbox; the owner does this outside it.',
  },
  /**
   * A one-time-password seed asked for by `get`, `render` or a proxy fill: only
   * `vault-cli totp` uses it, inside the host, and releases the current code.
   */
  'VLT-2052': {
    exit: 77,
    message:
      'A one-time-password seed never leaves the vault; `vault-cli totp <entry>` gives the code.',
  },
  /**
   * The proxy of a sandboxed `run` session was asked for a destination on this
   * machine (its loopback, a local interface, link-local) the owner did not
   * allow with `--allow-net`: the sandbox's only way out must not lead back in.
   */
  'VLT-2053': {
    exit: 77,
    message: 'Destination is on this machine; a sandboxed session reaches it only when allowed.',
  },
  /**
   * An owner request came without the passphrase, and the caller's terminal
   * holds no owner session (none opened, expired, locked, or the caller is
   * not on that terminal and session: src/host/owner/unlock.ts).
   */
  'VLT-2054': {
    exit: 77,
    message: 'No owner session for this terminal; the passphrase is needed (vault-cli unlock).',
  },
  /**
   * An owner session only tightens: a request that releases a value (a reveal,
   * a new token, the sweep's values) or loosens a rule (a wider scope, higher
   * limits, more hosts, a new hardware key) came on the terminal's session
   * alone. The passphrase is asked again; a process that cannot answer (no
   * terminal, stdin closed: a hook) is refused (src/host/owner/session.ts).
   */
  'VLT-2055': {
    exit: 77,
    message:
      'This releases a value or loosens a rule: it needs the passphrase itself; an owner session only narrows and observes.',
  },
  /** A request signed with a vault-cli surrogate AWS key whose SigV4 signature the proxy cannot read. */
  'VLT-2056': {
    exit: 65,
    message: "The request's AWS signature cannot be read; nothing was sent.",
  },
  /** Signed with a surrogate AWS key in a form the proxy cannot re-sign (presigned URL, SigV4A, aws-chunked). */
  'VLT-2057': {
    exit: 65,
    message: 'This AWS request cannot be re-signed at the proxy; nothing was sent.',
  },
  /** A surrogate AWS key id minted for another session or agent than the caller. */
  'VLT-2058': {
    exit: 77,
    message: 'This surrogate AWS key belongs to another session or agent; nothing was sent.',
  },
  /** A body signed by its hash, too large for the proxy to hash before re-signing. */
  'VLT-2059': { exit: 65, message: 'Request body too large to re-sign; nothing was sent.' },
  /**
   * Request caveats (issue 40, src/core/caveats.ts): the proxy request's
   * method and path are outside what the owner allowed this agent for the
   * entry. Refused before the value is released, counted as a violation as a
   * host the entry is not bound to is (VLT-2045).
   */
  'VLT-2060': {
    exit: 77,
    message: 'Request method or path not allowed for this credential; nothing was sent.',
  },
  /** An entry under request caveats for this agent is filled by the proxy only: no `get` or `render`. */
  'VLT-2061': {
    exit: 77,
    message:
      'This credential is bound to request caveats: only the proxy fills it, into a request they allow.',
  },
  'VLT-2062': { exit: 65, message: 'Not a request caveat.' },
  /** OAuth2 refresh (src/host/entries/oauth.ts): the token endpoint failed, hung or answered garbage. */
  'VLT-2063': {
    exit: 69,
    message: 'The OAuth token endpoint gave no access token; nothing was sent.',
  },
  /** The refresh token and client secret of an OAuth entry never leave the host. */
  'VLT-2064': {
    exit: 77,
    message:
      'An OAuth refresh token or client secret never leaves the vault; the proxy fills access_token.',
  },
  /** An SSH private key asked for by get, render, a fill or a reveal: only the host signs with it. */
  'VLT-2065': {
    exit: 77,
    message:
      'This field is an SSH private key; it never leaves the vault (vault-cli ssh-agent signs with it).',
  },
  /** A signature asked for through a forwarded agent (`ssh -A`), and the entry's binding does not allow one. */
  'VLT-2066': { exit: 77, message: 'Forwarded SSH agent refused for this credential.' },
  /** `entry import-ssh`: the file is not an OpenSSH private key this build takes (encrypted, another type). */
  'VLT-2067': { exit: 65, message: 'The SSH key file cannot be imported.' },
  /** A session-bind whose signature does not verify, or a signature asked for another session than the bound one. */
  'VLT-2068': { exit: 77, message: 'SSH session binding does not verify; nothing was signed.' },
  /**
   * An owner session only tightens, and a hardware key is enrolled: what
   * releases a value or loosens a rule needs a touch of an enrolled key on a
   * page whose challenge names this very request (op and arguments); the
   * passphrase alone is not enough on a terminal with an open session
   * (src/host/owner/confirm.ts, docs/hardware-key.md).
   */
  'VLT-2070': {
    exit: 77,
    message:
      'This releases a value or loosens a rule: with a hardware key enrolled, an owner session needs a touch of the key for this very command.',
  },
  'VLT-3001': { exit: 78, message: 'No vault at the configured location.' },
  'VLT-3002': { exit: 77, message: 'Wrong passphrase.' },
  'VLT-3003': { exit: 74, message: 'Vault data failed authentication.' },
  'VLT-3004': { exit: 74, message: 'Audit record could not be written; access refused.' },
  'VLT-3005': { exit: 69, message: 'Vault host unreachable and could not be started.' },
  'VLT-3006': { exit: 73, message: 'A vault already exists at this location.' },
  'VLT-3007': { exit: 70, message: 'Internal error in the vault host.' },
  'VLT-3008': { exit: 69, message: 'Upstream server unreachable or not trusted.' },
  /**
   * The owner's client would not send the passphrase: the process on the host's
   * socket is not this vault's host (not the lock holder, another program, run
   * under a preload or an inspector, traced). 77: a refusal, as a wrong token.
   */
  'VLT-3010': {
    exit: 77,
    message: "The process on the vault host's socket is not this vault's host; nothing was sent.",
  },
  /** Hardened-mode setup: no hardened host recorded, or a system tool (useradd, systemctl) failed. */
  'VLT-3011': { exit: 71, message: 'Hardened host set-up failed.' },
  /**
   * The host holds as many request bytes as it accepts (a pool shared by all
   * requests), or the caller's process as many open connections: try again
   * once some are answered. 75: temporary, as a rate limit.
   */
  'VLT-3012': { exit: 75, message: 'The vault host is busy with other requests; try again.' },
  /**
   * An owner write larger than the free space beyond the reserve kept for
   * audit records: refused whole, so every other request still fits. 73: as
   * a file that cannot be created.
   */
  'VLT-3013': {
    exit: 73,
    message: "The write is larger than the vault's file system has room for.",
  },
  /**
   * A record older than the state the rest of the vault says it must have: a
   * field or entry put back from before a rotation (anti-rollback). Refused;
   * nothing is released.
   */
  'VLT-3020': {
    exit: 74,
    message: 'Vault data was rolled back: a record is older than the vault says; refused.',
  },
  /** An agent or session record whose owner MAC does not hold: changed outside the host. */
  'VLT-3021': {
    exit: 74,
    message:
      'An agent or session record failed authentication (changed outside vault-cli); refused.',
  },
  /** A name-index row that leads to an entry of another name (swapped rows). */
  'VLT-3022': {
    exit: 74,
    message: 'The name index does not match the entry it leads to; refused.',
  },
  /** The vault was written by a newer vault-cli than this one. */
  'VLT-3023': {
    exit: 78,
    message: 'This vault was written by a newer vault-cli; upgrade vault-cli to open it.',
  },
  /** A vault of an older format: the owner's next command upgrades it; agents wait until then. */
  'VLT-3024': {
    exit: 75,
    message:
      'This vault must be upgraded by its owner first: any owner command (e.g. `vault-cli entry ls`) does it.',
  },
  /** `vault check` and the host's paths: the kinds of damage, each with its code. */
  'VLT-3030': { exit: 74, message: 'The vault header is missing or damaged.' },
  'VLT-3031': { exit: 74, message: 'A sealed record does not open (damaged or changed).' },
  'VLT-3032': {
    exit: 74,
    message: 'The name index and the entries disagree: a row leads nowhere, or an entry has none.',
  },
  'VLT-3033': {
    exit: 74,
    message: 'The audit chain is broken: a record was changed, removed or reordered.',
  },
  'VLT-3034': { exit: 74, message: 'A page or record of the store cannot be read.' },
  'VLT-3035': { exit: 74, message: 'A record does not match its checksum (damaged).' },
  'VLT-3036': { exit: 74, message: 'A record the vault refers to is missing.' },
  /** `vault restore`, `audit --verify --archive`: the file given is not one of this vault's, or does not open. */
  'VLT-3037': { exit: 65, message: 'Not a vault-cli backup or archive, or it does not verify.' },
  /** `vault restore`: the restored vault did not verify; the vault as it was is back in place. */
  'VLT-3038': {
    exit: 74,
    message: 'The restored vault did not verify; the current vault was put back unchanged.',
  },
  /** Team mode: the vault's PostgreSQL database does not answer; nothing is released until it does. */
  'VLT-3040': {
    exit: 69,
    message: 'The vault’s database is unreachable; access refused (nothing was released).',
  },
  /** Team mode: the database named holds no vault-cli store, or the store config names none. */
  'VLT-3041': { exit: 74, message: 'The database holds no vault-cli store.' },
  /** A store URL on the command line that is not postgresql://, or carries a password. */
  'VLT-3042': { exit: 64, message: 'Not a store URL a command line may carry.' },
  /** `vault migrate`: the target already holds a vault, or the copy did not verify record by record. */
  'VLT-3043': { exit: 74, message: 'The vault could not be migrated; the source is unchanged.' },
  /** A host's TCP listener serves agents' reads and fills only. */
  'VLT-3044': { exit: 77, message: 'Not served over TCP; use the host’s Unix socket.' },
  /** The sealed state (store/seal.ts) does not hold: a record rolled back, changed or removed in the store. */
  'VLT-3045': {
    exit: 74,
    message: 'Rollback detected: the vault’s records are not the ones it sealed; access refused.',
  },
  /** The vault is sealed and this host does not hold its state key yet. */
  'VLT-3046': {
    exit: 77,
    message:
      'This host does not hold the vault’s state key yet: run an owner command here once (or use a token made by this build).',
  },
  /**
   * A remote agent (VAULT_HOST_URL) refused the host's TLS certificate: the
   * CA it trusts (VAULT_HOST_CA) does not sign it. Nothing was sent.
   */
  'VLT-3060': {
    exit: 77,
    message:
      'The remote vault host’s certificate is not signed by VAULT_HOST_CA; nothing was sent.',
  },
  /** A file or directory vault-cli must write is refused by the system (src/cli/unwritable.ts). */
  'VLT-3061': { exit: 73, message: 'A file vault-cli must write is not writable.' },
  'VLT-4001': { exit: 66, message: 'No such entry.' },
  'VLT-4002': { exit: 67, message: 'No such agent.' },
  'VLT-4003': { exit: 73, message: 'An agent with this name already exists.' },
  'VLT-4004': {
    exit: 78,
    message: 'No hardware key is enrolled; enrol one with `vault-cli key add`.',
  },
  'VLT-4005': { exit: 66, message: 'No such hardware key.' },
  'VLT-4006': { exit: 73, message: 'A hardware key with this name already exists.' },
  'VLT-4007': { exit: 77, message: 'Hardware key not accepted; nothing was changed.' },
  'VLT-4008': {
    exit: 77,
    message: 'Hardware key signature counter did not increase (possible clone); refused.',
  },
} as const satisfies Record<string, { exit: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}

/** One reference of a multi-reference request (render, proxy) that failed, by its index. */
export interface RefProblem {
  readonly index: number;
  readonly code: ErrorCode;
}

/** An error the user is meant to see, as `vault-cli: <code>: <message>`. */
export class VaultError extends Error {
  readonly code: ErrorCode;
  /** For a request of several references: each one that failed, and why. */
  readonly problems: readonly RefProblem[];

  constructor(
    code: ErrorCode,
    message?: string,
    options?: { cause?: unknown; problems?: readonly RefProblem[] },
  ) {
    super(message ?? ERRORS[code].message, options);
    this.name = 'VaultError';
    this.code = code;
    this.problems = options?.problems ?? [];
  }

  get exitCode(): number {
    return ERRORS[this.code].exit;
  }

  /** The one line printed on stderr. */
  line(): string {
    return `vault-cli: ${this.code}: ${oneLine(this.message)}`;
  }
}

/**
 * Invisible format characters: bidi overrides and isolates, zero-width ones,
 * tags. Shown as they are, they make a line read as another (a refusal line
 * naming a host or reference the agent chose, on the owner's terminal).
 */
const INVISIBLE =
  /[\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/**
 * Error lines are one line: control characters in user-typed names are shown
 * escaped, C1 included (a terminal may take U+009B as CSI), and so are the
 * invisible format characters.
 */
export function oneLine(text: string): string {
  return text
    .replace(
      /[\u0000-\u001f\u007f-\u009f]/g,
      (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
    )
    .replace(INVISIBLE, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/** Human-readable quoting of a user-typed name inside a message. */
export function quote(name: string): string {
  return JSON.stringify(name);
}

/**
 * The refusal of what an owner session does not stand for (VLT-2055): `what`
 * releases a value or loosens a rule ("Revealing a value").
 */
export function needsPassphraseItself(what: string): VaultError {
  return new VaultError(
    'VLT-2055',
    `${what} needs the passphrase itself: an owner session only narrows and observes.`,
  );
}

/**
 * The refusal of what an owner session with a hardware key enrolled does not
 * stand for without a touch of the key bound to the request (VLT-2070).
 */
export function needsHardwareKey(what: string): VaultError {
  return new VaultError(
    'VLT-2070',
    `${what} needs a touch of your hardware key: with a key enrolled, an owner session only narrows and observes, and the passphrase alone is not enough.`,
  );
}
