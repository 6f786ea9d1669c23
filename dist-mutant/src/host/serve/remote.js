/**
 * Agents on a machine with no host of their own (a container, a CI job) reach
 * a team host over TCP with TLS (docs/team.md "Remote agents"). Only an
 * agent's operations are served there, each with its own token; the owner's
 * operations stay on the Unix socket, where the kernel names the caller. The
 * audit source of a remote request is the peer's IP address as the TCP
 * connection has it (`ip:<address>`), nothing the client states.
 *
 * Anyone who can reach the port can open connections, before any token or
 * handshake: 20,000 plain TCP connections once took every descriptor the host
 * had, and the owner and local agents with them (issue 36). So the listener
 * holds at most REMOTE_BUDGET connections and one address at most
 * MAX_PER_SOURCE; past either, the largest holder's oldest connection is
 * closed (crowd.ts), so a flood starves itself and a new agent gets in. A
 * connection must finish its TLS handshake within HANDSHAKE_MS and send its
 * request head within HEAD_MS. The main socket's budget leaves room for all
 * of this (server.ts), so local callers never compete with the listener.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { VaultError } from '../../core/errors.js';
import { Crowd } from './crowd.js';
/** Connections the TLS listener holds at once, from every address together. */
export const REMOTE_BUDGET = 1024;
/** Connections one address may hold (a machine's remote agents share its address). */
export const MAX_PER_SOURCE = 64;
/** From the TCP connection to the end of the TLS handshake. */
const HANDSHAKE_MS = 5_000;
/** From the handshake to the end of the request head; the whole request within REQUEST_MS. */
const HEAD_MS = 5_000;
const REQUEST_MS = 30_000;
/**
 * The operations a remote agent may ask for: its own reads and fills, who it
 * is, and SSH signatures made in the host with a key it never holds
 * (`vault-cli ssh-agent`). Each takes the agent's token and counts against
 * its limits as a read. The proxy's SigV4 `sign` is not served here yet: no
 * test runs a remote proxy.
 */
const REMOTE_OPS = new Set([
    'whoami',
    'read',
    'resolve',
    'ssh.keys',
    'ssh.sign',
]);
/** Refuses anything but an agent's operation over TCP. @throws VaultError VLT-3044 */
export function remoteGuard(op) {
    if (!REMOTE_OPS.has(op)) {
        throw new VaultError('VLT-3044', 'Only an agent’s reads, fills and SSH signatures are served over TCP; owner commands use the host’s Unix socket.');
    }
}
/** The audit source of a remote request: the TCP peer's address. */
export function remoteSource(req) {
    return `ip:${req.socket.remoteAddress ?? 'unknown'}`;
}
function parseListen(listen) {
    const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen);
    const port = Number(m?.[2]);
    if (m === null || !Number.isInteger(port) || port < 0 || port > 65535) {
        throw new VaultError('VLT-1001', `VAULT_LISTEN_TLS must be address:port, not ${listen}.`);
    }
    return { host: m[1], port };
}
/**
 * Starts the TLS listener with `handle` (the host's router with remoteGuard
 * and remoteSource) and resolves once it listens.
 */
export async function listenRemote(opts, handle) {
    const { host, port } = parseListen(opts.listen);
    const server = createServer({
        cert: readFileSync(opts.cert),
        key: readFileSync(opts.key),
        minVersion: 'TLSv1.2',
        handshakeTimeout: HANDSHAKE_MS,
        headersTimeout: HEAD_MS,
        requestTimeout: REQUEST_MS,
        connectionsCheckingInterval: 1_000,
    }, handle);
    const crowd = new Crowd(() => REMOTE_BUDGET, MAX_PER_SOURCE);
    // 'connection' is the TCP connection, before any byte of TLS: counted from the first moment.
    server.on('connection', (socket) => {
        const source = socket.remoteAddress ?? 'unknown';
        socket.once('close', () => crowd.remove(source, socket));
        crowd.add(source, socket);
    });
    // A connection that fails its handshake (or sends no TLS at all) is closed, never logged per attempt.
    server.on('tlsClientError', (_err, socket) => socket.destroy());
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
        });
    });
    return server;
}
