/**
 * `vault-cli entry import-ssh <entry> <keyfile>`: an OpenSSH private key
 * file into an entry (docs/ssh.md): the private key as the field
 * `ssh_private_key` (PKCS#8 DER, which only the host signs with and never
 * releases to an agent) and its public key as `ssh_public_key` (an
 * authorized_keys line, printed here for the server's authorized_keys).
 */
import { createPrivateKey } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { VaultError } from '../../core/errors.js';
import { SSH_KEY_FIELD, SSH_PUBLIC_FIELD } from '../../core/names.js';
import { parseKeyFile, publicKeyLine } from '../../core/ssh-keyfile.js';
import { arg } from '../context.js';
import { ownerPassphrase } from '../owner.js';
/** Larger than any OpenSSH key file (a 16384-bit RSA key is about 12 KiB). */
const MAX_KEY_FILE = 64 * 1024;
function readKeyFile(path) {
    let st;
    try {
        st = lstatSync(path);
    }
    catch {
        throw new VaultError('VLT-2067', `Cannot read ${JSON.stringify(path)}.`);
    }
    if (!st.isFile() || st.size > MAX_KEY_FILE)
        throw new VaultError('VLT-2067', 'Not a key file (a regular file of at most 64 KiB).');
    return readFileSync(path, 'utf8');
}
export const run = async (ctx) => {
    const entry = arg(ctx, 'entry');
    const parsed = parseKeyFile(readKeyFile(arg(ctx, 'file')));
    if (!parsed.ok)
        throw new VaultError('VLT-2067', `Cannot import: ${parsed.reason}.`);
    const { key } = parsed;
    const der = createPrivateKey({ key: key.jwk, format: 'jwk' }).export({
        type: 'pkcs8',
        format: 'der',
    });
    const line = publicKeyLine(key.publicBlob, key.comment);
    const passphrase = await ownerPassphrase(ctx);
    try {
        await ctx.call('entry.set', {
            passphrase,
            entry,
            field: SSH_KEY_FIELD,
            value: der.toString('base64'),
        });
        await ctx.call('entry.set', {
            passphrase,
            entry,
            field: SSH_PUBLIC_FIELD,
            value: Buffer.from(line).toString('base64'),
        });
    }
    finally {
        // Best-effort: JavaScript strings (the JWK's) cannot be wiped.
        der.fill(0);
    }
    ctx.stderr.write(`vault-cli: imported ${key.type} key into ${JSON.stringify(entry)}\n`);
    ctx.stdout.write(`${line}\n`);
    return 0;
};
