export const PROTOCOL_VERSION = 'v1';
export const SOCKET_NAME = 'host.sock';
/** The store file in the vault directory; a client checks for it before starting a host. */
export const STORE_FILE = 'vault.mdb';
/** In the vault directory of a vault kept in PostgreSQL (team mode): which database (src/store/location.ts). */
export const STORE_CONFIG = 'store.json';
/**
 * Set on a host that a command started in the background: that command's pid.
 * Several commands that find no host each start one; the losers exit when they
 * see the winner, and one that finishes booting after its command was served
 * (even after `daemon stop`) sees the pid gone and exits instead of serving.
 */
export const SPAWNED_BY_ENV = 'VAULT_HOST_SPAWNED_BY';
/**
 * The host's lock file in the vault directory: the host that holds an
 * exclusive flock on it is the vault's one host, and the only one that binds
 * or removes the socket. A client checks that its peer holds it.
 */
export const LOCK_NAME = 'host.lock';
/**
 * Request fields that carry the owner's secret: the client checks the host
 * before it sends one, and the host lifts them out of the raw bytes as
 * wipeable Buffers before parsing (src/host/owner/secrets.ts).
 */
export const OWNER_SECRET_FIELDS = ['passphrase', 'newPassphrase', 'recoveryKey'];
export const REQUESTS_MATCH_OPS = true;
