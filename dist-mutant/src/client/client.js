/**
 * The thin client every command uses to reach the vault host: one request,
 * one reply (request.ts). When no host answers, it starts `vault-cli daemon`
 * in the background and waits for it (start.ts, loaded only then). It loads
 * no store, no crypto engine and no UI, so `get` stays a short process. A
 * process that calls often keeps a channel (channel.ts); a streamed reply is
 * followed (follow.ts).
 */
import { join } from 'node:path';
import { VaultError } from '../core/errors.js';
import { STORE_CONFIG, STORE_FILE, } from '../core/protocol.js';
import { ownerRequest, post, socketPathOf, unwrap, Unreachable } from './request.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { existsSync } = process.getBuiltinModule('node:fs');
/**
 * Sends one operation to the host and returns its result.
 * @throws VaultError with the host's code, or VLT-3005 when no host can be reached or started.
 */
export async function call(opts, op, body) {
    const memory = opts.anchors !== undefined && ownerRequest(op, body) ? opts.anchors : null;
    const seen = memory?.seen();
    if (seen !== undefined)
        body = { ...body, seenAnchor: seen };
    const result = await callOnce(opts, op, body);
    if (memory !== null) {
        if (op === 'vault.restore')
            memory.forget();
        else if (result.anchor !== undefined)
            memory.remember(result.anchor);
    }
    return result.result;
}
async function callOnce(opts, op, body) {
    const socketPath = socketPathOf(opts);
    let reply;
    try {
        reply = await post(opts, socketPath, op, body);
    }
    catch (err) {
        if (!(err instanceof Unreachable))
            throw err;
        if (opts.system != null) {
            throw new VaultError('VLT-3005', `The system vault host (user ${opts.system.user}) is not running; start it (vault-cli host status says how).`);
        }
        if (opts.remote != null) {
            // Nothing is started for a tls:// URL: the host runs on its own machine.
            const { host, port } = opts.remote;
            throw new VaultError('VLT-3005', `No vault host answered at tls://${host}:${port} (${err.message}): check the host and ` +
                'port in VAULT_HOST_URL against VAULT_LISTEN_TLS on the host’s machine, and that its host runs there.');
        }
        if (opts.autoStart === false)
            throw new VaultError('VLT-3005');
        // No vault and no host: say so without starting one or touching the disk.
        // (`vault restore` may bring one back into an empty directory.)
        if (op !== 'vault.create' &&
            op !== 'vault.restore' &&
            !existsSync(join(opts.vaultDir, STORE_FILE)) &&
            // A vault in PostgreSQL (team mode): named by the directory's config or the environment.
            !existsSync(join(opts.vaultDir, STORE_CONFIG)) &&
            !opts.daemon.env.VAULT_STORE_URL) {
            throw new VaultError('VLT-3001');
        }
        const { startAndCall } = await import('./start.js');
        reply = await startAndCall(opts, socketPath, op, body);
    }
    return { result: unwrap(reply), anchor: reply.ok ? reply.anchor : undefined };
}
