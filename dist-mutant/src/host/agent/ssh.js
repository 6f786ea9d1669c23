/**
 * An SSH signature for an agent, made in the host (docs/ssh.md). The private
 * key is a field the access path releases to the host alone (purpose `ssh`:
 * entry-check.ts refuses it to every other purpose), so a signature is a
 * release like any other: scope, lock, the distinct-credential limits, the
 * entry's host-key binding and one audit record naming the key and the
 * server's host key, all in one transaction before the key is opened.
 *
 * The session-binds (OpenSSH's session-bind@openssh.com) are what the
 * caller's agent process saw on its connection; the host verifies each
 * (the server's host key signed the session identifier), and a
 * user-authentication request must be for the last bound session. A caller
 * can leave binds out, never make one up: an entry bound to host keys signs
 * only for a session a bound server signed.
 */
import { VaultError } from '../../core/errors.js';
import { SSH_KEY_FIELD, SSH_PUBLIC_FIELD } from '../../core/names.js';
import { blobType, parseSessionBind, userauthSession, } from '../../core/ssh-wire.js';
import { release } from './access.js';
import { bindVerifies, fingerprint, loadPrivateKey, rsaAlgorithm, sshSign } from './ssh-sign.js';
/** Session-binds one signature request may carry (a connection's hops; OpenSSH keeps 128). */
export const MAX_BINDS = 16;
/** What the binds show: the server the last one names, forwarding, or why they are refused. */
export function judgeBinds(raw, data) {
    const binds = [];
    for (const r of raw) {
        const b = parseSessionBind(r);
        if (b === null || !bindVerifies(b))
            return { kind: 'ssh', server: null, forwarded: false, problem: 'VLT-2068' };
        binds.push(b);
    }
    const last = binds.at(-1);
    if (last === undefined)
        return { kind: 'ssh', server: null, forwarded: false, problem: null };
    const server = fingerprint(last.hostKey);
    const session = userauthSession(data);
    // A user authentication for another session than the bound one: a bind reused elsewhere.
    const problem = session !== null && !Buffer.from(session).equals(Buffer.from(last.sessionId));
    // Data that is no user authentication goes to no server the binds show.
    return {
        kind: 'ssh',
        server: session === null ? null : server,
        forwarded: binds.some((b) => b.forwarding),
        problem: problem ? 'VLT-2068' : null,
    };
}
/**
 * Signs `req.data` with the entry's SSH key, in the host.
 * @throws VaultError as release() (VLT-2045 counted, VLT-2065, VLT-2066,
 *   VLT-2068 audited), VLT-1002 for an RSA signature without SHA-2 or a key
 *   blob that is not the entry's.
 */
export async function signFor(ctx, session, req, source) {
    if (blobType(req.key) === 'ssh-rsa' && rsaAlgorithm(req.flags) === null)
        throw new VaultError('VLT-1002', 'RSA signatures with SHA-1 are not made; ask for rsa-sha2-256 or -512.');
    const purpose = judgeBinds(req.binds, req.data);
    const [der] = await release(ctx, session, [{ entry: req.entry, field: SSH_KEY_FIELD }], purpose, source);
    if (der === undefined)
        throw new VaultError('VLT-3007');
    try {
        const loaded = loadPrivateKey(der.expose());
        if (loaded === null)
            throw new VaultError('VLT-3003');
        if (!loaded.blob.equals(req.key))
            throw new VaultError('VLT-1002', 'That public key is not this entry’s.');
        const sig = sshSign(loaded, req.data, req.flags);
        if (sig === null)
            throw new VaultError('VLT-1002', 'Not a signature this key makes.');
        return sig;
    }
    finally {
        // JavaScript makes wiping best-effort: the KeyObject's copy is OpenSSL's, freed with it.
        der.wipe();
    }
}
/**
 * The public keys (authorized_keys lines) of the entries named, all or none:
 * scope, lock and audit as any read, but not charged to the limits (a
 * public key is no secret; a name out of scope is charged as ever).
 * @throws VaultError as release().
 */
export async function publicKeys(ctx, session, entries, source) {
    const refs = entries.map((entry) => ({ entry, field: SSH_PUBLIC_FIELD }));
    const values = await release(ctx, session, refs, { kind: 'ssh_public' }, source);
    return values.map((v) => {
        const line = v.expose().toString('utf8');
        v.wipe();
        return line;
    });
}
