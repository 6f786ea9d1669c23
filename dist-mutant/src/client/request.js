import { dirname, join } from 'node:path';
import { VaultError, isErrorCode } from '../core/errors.js';
import { OWNER_SECRET_FIELDS, PROTOCOL_VERSION, SOCKET_NAME, } from '../core/protocol.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { lstatSync, readFileSync } = process.getBuiltinModule('node:fs');
const { connect, isIP } = process.getBuiltinModule('node:net');
/** The host's socket: in the vault directory unless the options name another. */
export function socketPathOf(opts) {
    return join(opts.socketDir ?? opts.vaultDir, SOCKET_NAME);
}
/**
 * Whether a request is the owner's: it names an owner secret field (absent
 * when the terminal's owner session stands for it: the key is still there,
 * undefined) or asks about the owner session. The host is checked before any
 * byte of it is sent, and the owner's anchor memory goes with it.
 */
export function ownerRequest(op, body) {
    return op.startsWith('owner.') || OWNER_SECRET_FIELDS.some((k) => k in body);
}
/**
 * Connects to the host's socket and, when the request carries the owner's
 * secret, checks the process that accepted before anything is written.
 */
export function open(opts, socketPath, op, body, onReady, onRefused) {
    const remote = opts.remote;
    if (remote != null) {
        // node:tls is loaded here, not at the top: a local `get` would pay about 11 ms for it.
        const { connect: tlsConnect } = process.getBuiltinModule('node:tls');
        const tls = tlsConnect({
            host: remote.host,
            port: remote.port,
            ca: readFileSync(remote.ca),
            // SNI takes a name only; an address is checked against the certificate's IP entries.
            ...(isIP(remote.host) === 0 ? { servername: remote.host } : {}),
        }, () => onReady(tls));
        return tls;
    }
    const owner = ownerRequest(op, body);
    const ino = owner ? socketInode(socketPath) : 0;
    const sock = connect(socketPath, () => {
        if (!owner)
            return onReady(sock);
        import('./host-check.js')
            .then(({ checkHost, hostVanished }) => checkHost(sock, {
            socketDir: dirname(socketPath),
            socketPath,
            node: opts.daemon.node,
            script: opts.daemon.script,
            acceptFaketime: opts.acceptFaketime,
            systemUid: opts.system?.uid,
        }).catch(async (err) => {
            // A host that stopped under the check is not an impostor: start it again.
            if (await hostVanished(sock, socketPath, ino))
                throw new Unreachable('host stopped');
            throw err;
        }))
            .then(() => onReady(sock), (err) => {
            sock.destroy();
            onRefused(err);
        });
    });
    return sock;
}
/** The socket file's inode, to tell later whether it is still the one connected to; 0 when absent. */
function socketInode(socketPath) {
    try {
        return lstatSync(socketPath).ino;
    }
    catch {
        return 0;
    }
}
/** No host answered, and nothing was sent: a host may be started and the request sent again. */
export class Unreachable extends Error {
}
/** The request line and headers; `Connection: close` makes the host close after its reply. */
export function requestHead(op, length) {
    return (`POST /${PROTOCOL_VERSION}/${op} HTTP/1.1\r\nHost: vault-host\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${length}\r\nConnection: close\r\n\r\n`);
}
/**
 * One HTTP/1.1 exchange on a fresh connection, written by hand on node:net:
 * node:http costs `get` 5-30 ms of start-up (on Node 24 its ESM namespace even
 * loads undici), and the host's replies are always small, complete JSON with a
 * Content-Length.
 */
export function post(opts, socketPath, op, body) {
    return new Promise((resolve, reject) => {
        const payload = Buffer.from(JSON.stringify(body));
        const head = requestHead(op, payload.length);
        const chunks = [];
        let connected = false;
        let refused = false;
        const ready = (sock) => {
            connected = true;
            // Not end(): the host's HTTP server drops a half-closed connection before
            // it replies. `Connection: close` makes the host close after the reply.
            const wire = Buffer.concat([Buffer.from(head), payload]);
            // The payload may hold a passphrase or value: zero it once the socket has taken it.
            sock.write(wire, () => {
                wire.fill(0);
                payload.fill(0);
            });
        };
        const sock = open(opts, socketPath, op, body, ready, (err) => {
            refused = true;
            payload.fill(0);
            reject(err);
        });
        let settled = false;
        sock.on('data', (c) => {
            chunks.push(c);
            // Answered once the reply is whole, without waiting for the close: a
            // host that refuses a body it will not read (VLT-3012) closes on the
            // client still writing, whose write then fails (EPIPE).
            if (settled || refused || !wholeReply(chunks))
                return;
            settled = true;
            payload.fill(0);
            try {
                resolve(parseReply(Buffer.concat(chunks)));
            }
            catch (err) {
                reject(err);
            }
            sock.destroy();
        });
        sock.on('error', (err) => {
            payload.fill(0);
            if (settled || refused)
                return;
            settled = true;
            if (!connected && opts.remote != null && /CERT|SELF_SIGNED|UNABLE_TO_/.test(err.code ?? '')) {
                reject(untrusted(opts.remote, err));
                return;
            }
            // Nothing was sent yet: a host that vanished (its idle stop unlinked the
            // socket, or reset a connection it had not accepted) is a stopped host.
            if (!connected &&
                (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET')) {
                reject(new Unreachable(err.code));
            }
            else {
                reject(goneMidRequest(op, err));
            }
        });
        sock.on('end', () => {
            if (settled || refused)
                return;
            settled = true;
            if (chunks.length === 0) {
                reject(connected ? goneMidRequest(op) : new Unreachable('closed'));
                return;
            }
            try {
                resolve(parseReply(Buffer.concat(chunks)));
            }
            catch (err) {
                reject(err);
            }
        });
    });
}
/**
 * Operations that change the vault. When the host goes away after the request
 * was sent, such a change may have been committed before it died: the client
 * cannot know, and must not say it did not happen.
 */
const WRITES = new Set([
    'vault.create',
    'vault.rekey',
    'vault.passwd',
    'vault.restore',
    'vault.migrate',
    'entry.set',
    'entry.rm',
    'entry.hosts',
    'entry.import',
    'agent.add',
    'agent.scope',
    'agent.limits',
    'agent.lock',
    'agent.caveats',
    'agent.group',
    'agent.revoke',
    'key.vouch',
    'key.finish',
    'key.rm',
    'unlock.finish',
    'audit.archive',
    'sweep.mark',
]);
/** A remote host whose certificate VAULT_HOST_CA does not vouch for: nothing was sent. */
function untrusted(r, err) {
    return new VaultError('VLT-3060', `The vault host at tls://${r.host}:${r.port} presented a certificate that VAULT_HOST_CA ` +
        `(${r.ca}) does not vouch for (${err.code ?? 'TLS'}); nothing was sent. Copy the host's ` +
        'certificate (its VAULT_TLS_CERT, or the CA that signed it) to this machine and set VAULT_HOST_CA to it.', { cause: err });
}
/** What to say when the host went away mid-request (killed, crashed) and replied nothing. */
export function goneMidRequest(op, cause) {
    const message = WRITES.has(op)
        ? `The vault host stopped before replying: the change may or may not have been saved; run \`vault-cli ${showCommand(op)}\` to see.`
        : // A read or a check releases nothing without a reply.
            'The vault host stopped before replying; nothing was released.';
    return new VaultError('VLT-3005', message, { cause });
}
function showCommand(op) {
    if (op.startsWith('entry.'))
        return 'entry show <entry>';
    if (op.startsWith('agent.') || op === 'unlock.finish')
        return 'agent show <name>';
    if (op.startsWith('key.'))
        return 'key ls';
    if (op === 'audit.archive')
        return 'audit --verify';
    return 'vault check';
}
/** Whether `chunks` hold a reply's head and all the body its Content-Length says. */
function wholeReply(chunks) {
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const split = raw.indexOf('\r\n\r\n');
    if (split < 0)
        return false;
    const length = /\r\ncontent-length: *([0-9]+)/i.exec(raw.subarray(0, split).toString('latin1'))?.[1];
    return length !== undefined && raw.length - split - 4 >= Number(length);
}
export function parseReply(raw) {
    const broken = () => new VaultError('VLT-3007', 'The vault host sent a malformed reply.');
    const split = raw.indexOf('\r\n\r\n');
    if (split < 0)
        throw broken();
    const head = raw.subarray(0, split).toString('latin1');
    const body = raw.subarray(split + 4);
    const length = /\r\ncontent-length: *([0-9]+)/i.exec(head)?.[1];
    if (!head.startsWith('HTTP/1.1 ') || length === undefined || Number(length) !== body.length) {
        throw broken();
    }
    try {
        return JSON.parse(body.toString('utf8'));
    }
    catch {
        throw broken();
    }
}
/** A reply's result, or its error thrown. */
export function unwrap(reply) {
    if (reply.ok)
        return reply.result;
    const code = isErrorCode(reply.code) ? reply.code : 'VLT-3007';
    const problems = (reply.problems ?? []).map((p) => ({
        index: p.index,
        code: isErrorCode(p.code) ? p.code : code,
    }));
    throw new VaultError(code, reply.message, { problems });
}
