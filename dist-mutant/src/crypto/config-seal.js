/**
 * Sealing an agent-side configuration file (the proxy's CA key) under a key
 * derived from the agent's token, so the file is ciphertext on disk and opens
 * only for the agent whose token sealed it. A different context from
 * tokenKeys(): the host's verifier and wrap key are never derivable from it.
 */
import sodium from 'sodium-native';
import { KEY_BYTES, open, seal, slot, wipe } from './aead.js';
import { parseToken } from './token.js';
const CONTEXT = Buffer.from('vltconfg', 'ascii');
function configKey(token) {
    const parsed = parseToken(token);
    if (parsed === null)
        return null;
    const key = sodium.sodium_malloc(KEY_BYTES);
    sodium.crypto_kdf_derive_from_key(key, 1, CONTEXT, parsed.secret);
    return { key, agentId: parsed.agentId };
}
/** The sealed file's bytes, or null when the token is malformed. */
export function sealConfig(token, purpose, plaintext) {
    const k = configKey(token);
    if (k === null)
        return null;
    try {
        return seal(k.key, plaintext, slot('agent-config', purpose, k.agentId));
    }
    finally {
        wipe(k.key);
    }
}
/** The plaintext, or null when the file was sealed for another token or purpose, or altered. */
export function openConfig(token, purpose, blob) {
    const k = configKey(token);
    if (k === null)
        return null;
    try {
        return open(k.key, blob, slot('agent-config', purpose, k.agentId));
    }
    finally {
        wipe(k.key);
    }
}
