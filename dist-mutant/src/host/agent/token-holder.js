/**
 * What agents and sessions have alike: a token (a random id and secret, shown
 * once, never stored), and a record holding the token's KDF verifier, a key
 * pair whose secret key only the token unwraps, the state key boxed to the
 * token, and grants of its entries under an index key of its own sealed to
 * its public key (grants.ts). Only the owner's keys can make one.
 */
import { randomBytes, seal, wipe } from '../../crypto/aead.js';
import { newKeyPair, sealTo } from '../../crypto/box.js';
import { tokenKeys } from '../../crypto/kdf.js';
import { AGENT_ID_BYTES, SECRET_BYTES, formatToken } from '../../crypto/token.js';
import { addGrants, recordIndexKey, stateKeyBox } from '../keys/grants.js';
import { slots } from '../keys/slots.js';
/**
 * Runs `fn` with a new token, then wipes its secret, wrap key and secret key
 * (best-effort: JavaScript may have copied them).
 */
export function withNewToken(fn) {
    const id = randomBytes(AGENT_ID_BYTES);
    const secret = randomBytes(SECRET_BYTES);
    const { verifier, wrapKey } = tokenKeys(secret);
    const pair = newKeyPair();
    try {
        return fn({ id, secret, verifier, wrapKey, pair });
    }
    finally {
        wipe(secret, wrapKey, pair.secretKey);
    }
}
/** The token as the caller is given it, once. */
export function tokenText(t) {
    return formatToken(t.id, t.secret);
}
/** The keys of record `id` (an agent's or a session's) for token `t`, granted `entries`. */
export function holderKeys(s, header, kind, t, entries) {
    const id = t.id.toString('hex');
    const indexKey = recordIndexKey(s, kind, id);
    const { publicKey } = t.pair;
    const granted = addGrants(s, header, publicKey, indexKey, { grants: {}, index: {} }, entries);
    const slot = kind === 'agent'
        ? slots.agentSecretKey(header.vaultId, id)
        : slots.sessionSecretKey(header.vaultId, id);
    return {
        verifier: t.verifier,
        publicKey,
        secretKey: seal(t.wrapKey, t.pair.secretKey, slot),
        ...stateKeyBox(s, t.wrapKey, id),
        ...granted,
        indexKey: sealTo(publicKey, indexKey),
    };
}
/**
 * A token holder's record once it has ended (a session ended, an agent
 * revoked): no scope, grants, index or keys left in it, so nothing the store
 * keeps of it opens anything.
 */
export function endedRecord(r, now) {
    return {
        ...r,
        scope: [],
        grants: {},
        index: {},
        verifier: Buffer.alloc(0),
        secretKey: Buffer.alloc(0),
        indexKey: Buffer.alloc(0),
        revoked: now,
    };
}
