/**
 * WebAuthn verification with fido2-lib, for the vault host. The only importer
 * of fido2-lib; the host loads this module lazily (it is heavy, and `get` must
 * never pay for it).
 *
 * Invariant: every failure, whatever the input (a browser's answer, or bytes
 * an attacker wrote), is a `WebauthnRefused` and never a success. Inputs are
 * decoded strictly here before fido2-lib sees them, and every error fido2-lib
 * throws is folded into one terse reason.
 */
import { Fido2Lib } from 'fido2-lib';
import { RP_ID, RP_NAME } from '../core/webauthn.js';
/** The one error this module throws: the credential was not accepted, and why in a word. */
export class WebauthnRefused extends Error {
    reason;
    constructor(reason, options) {
        super(`WebAuthn response refused: ${reason}`, options);
        this.reason = reason;
        this.name = 'WebauthnRefused';
    }
}
const B64URL = /^[A-Za-z0-9_-]*$/;
const MAX_FIELD_CHARS = 64 * 1024;
/** Strict base64url to a fresh ArrayBuffer. @throws WebauthnRefused malformed */
export function fromB64url(text) {
    if (typeof text !== 'string' || text.length > MAX_FIELD_CHARS || !B64URL.test(text)) {
        throw new WebauthnRefused('malformed');
    }
    const buf = Buffer.from(text, 'base64url');
    if (buf.toString('base64url') !== text)
        throw new WebauthnRefused('malformed');
    return new Uint8Array(buf).buffer;
}
function object(v) {
    if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw new WebauthnRefused('malformed');
    return v;
}
/**
 * Our own first look at clientDataJSON, before fido2-lib's: the type, then the
 * challenge, then the origin, so a refusal names the first thing that is wrong
 * (a replay is a challenge refusal, whatever else differs).
 */
function checkClientData(raw, type, expected) {
    let data;
    try {
        data = object(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)));
    }
    catch {
        throw new WebauthnRefused('malformed');
    }
    if (data.type !== type)
        throw new WebauthnRefused('type');
    if (data.challenge !== expected.challenge)
        throw new WebauthnRefused('challenge');
    if (data.origin !== expected.origin)
        throw new WebauthnRefused('origin');
}
/** The order n of the P-256 group. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
/**
 * An ES256 signature in strict DER: SEQUENCE of two minimal positive INTEGERs,
 * nothing around it. The crypto underneath accepts some other encodings of the
 * same (r, s); one accepted form per signature leaves no malleability.
 */
function strictDerSignature(sig) {
    const b = Buffer.from(sig);
    const int = (at) => {
        const len = b[at + 1] ?? 0;
        if (b[at] !== 0x02 || len < 1 || len > 33)
            throw new WebauthnRefused('signature');
        const first = b[at + 2] ?? 0;
        if (first & 0x80)
            throw new WebauthnRefused('signature');
        if (first === 0 && len > 1 && ((b[at + 3] ?? 0) & 0x80) === 0) {
            throw new WebauthnRefused('signature');
        }
        // r and s lie in [1, n-1]. A 33-byte integer is only a sign byte before a
        // 32-byte value: the crypto underneath keeps the last 32 bytes, so any other
        // first byte (above the order) would verify as the same signature.
        const value = BigInt(`0x${b.subarray(at + 2, at + 2 + len).toString('hex') || '0'}`);
        if ((len === 33 && first !== 0) || value === 0n || value >= P256_ORDER) {
            throw new WebauthnRefused('signature');
        }
        return at + 2 + len;
    };
    if (b.length < 8 || b[0] !== 0x30 || b[1] !== b.length - 2)
        throw new WebauthnRefused('signature');
    if (int(int(2)) !== b.length)
        throw new WebauthnRefused('signature');
}
/** Which check a fido2-lib error message is about. */
function reasonOf(err) {
    const m = err instanceof Error ? err.message : '';
    if (/counter/i.test(m))
        return 'counter';
    if (/challenge/i.test(m))
        return 'challenge';
    if (/origin/i.test(m))
        return 'origin';
    if (/rpIdHash/i.test(m))
        return 'rp';
    if (/User Presence|\bUP\b/.test(m))
        return 'presence';
    if (/signature/i.test(m))
        return 'signature';
    if (/clientData type/i.test(m))
        return 'type';
    if (/attestation|fmt/i.test(m))
        return 'attestation';
    return 'malformed';
}
function lib() {
    return new Fido2Lib({
        rpId: RP_ID,
        rpName: RP_NAME,
        attestation: 'none',
        // ES256 only: what security keys use, and its signatures are checked as strict DER below.
        cryptoParams: [-7],
    });
}
/**
 * Verifies `navigator.credentials.create()`'s answer against the challenge the
 * host issued and the page's origin; user presence required.
 * @throws WebauthnRefused
 */
export async function verifyRegistration(raw, expected) {
    let rawId;
    let res;
    try {
        const o = object(raw);
        res = object(o.response);
        rawId = fromB64url(o.rawId);
        if (rawId.byteLength === 0 || rawId.byteLength > 1023)
            throw new WebauthnRefused('malformed');
    }
    catch (err) {
        throw err instanceof WebauthnRefused ? err : new WebauthnRefused('malformed', { cause: err });
    }
    let clientDataJSON;
    let attestationObject;
    try {
        clientDataJSON = fromB64url(res.clientDataJSON);
        attestationObject = fromB64url(res.attestationObject);
    }
    catch (err) {
        throw err instanceof WebauthnRefused ? err : new WebauthnRefused('malformed', { cause: err });
    }
    checkClientData(clientDataJSON, 'webauthn.create', expected);
    try {
        const out = await lib().attestationResult({
            rawId,
            response: {
                clientDataJSON: clientDataJSON,
                attestationObject: attestationObject,
            },
        }, { rpId: RP_ID, origin: expected.origin, challenge: expected.challenge, factor: 'second' });
        const pem = out.authnrData.get('credentialPublicKeyPem');
        const counter = out.authnrData.get('counter');
        const credId = out.authnrData.get('credId');
        if (typeof pem !== 'string' ||
            typeof counter !== 'number' ||
            !(credId instanceof ArrayBuffer)) {
            throw new WebauthnRefused('malformed');
        }
        const id = Buffer.from(credId).toString('base64url');
        if (id !== Buffer.from(rawId).toString('base64url'))
            throw new WebauthnRefused('malformed');
        return { credentialId: id, publicKeyPem: pem, counter };
    }
    catch (err) {
        if (err instanceof WebauthnRefused)
            throw err;
        throw new WebauthnRefused(reasonOf(err), { cause: err });
    }
}
/** The credential id an assertion claims to come from (not yet verified). @throws WebauthnRefused */
export function assertionCredentialId(raw) {
    const id = fromB64url(object(raw).rawId);
    if (id.byteLength === 0 || id.byteLength > 1023)
        throw new WebauthnRefused('malformed');
    return Buffer.from(id).toString('base64url');
}
/**
 * Verifies `navigator.credentials.get()`'s answer with the enrolled key's
 * public key: challenge, origin, RP id hash, user presence, signature, and a
 * counter above `prevCounter` (0 then 0 means a key without a counter).
 * @returns the new signature counter.
 * @throws WebauthnRefused
 */
export async function verifyAssertion(raw, expected) {
    let request;
    try {
        const o = object(raw);
        const res = object(o.response);
        request = {
            rawId: fromB64url(o.rawId),
            response: {
                clientDataJSON: fromB64url(res.clientDataJSON),
                authenticatorData: fromB64url(res.authenticatorData),
                signature: fromB64url(res.signature),
            },
        };
    }
    catch (err) {
        throw err instanceof WebauthnRefused ? err : new WebauthnRefused('malformed', { cause: err });
    }
    checkClientData(request.response.clientDataJSON, 'webauthn.get', expected);
    strictDerSignature(request.response.signature);
    try {
        const out = await lib().assertionResult(request, {
            rpId: RP_ID,
            origin: expected.origin,
            challenge: expected.challenge,
            factor: 'second',
            publicKey: expected.publicKeyPem,
            prevCounter: expected.prevCounter,
            userHandle: null,
        });
        const counter = out.authnrData.get('counter');
        const flags = out.authnrData.get('flags');
        // fido2-lib checks presence for factor 'second'; the check is ours too.
        if (!(flags instanceof Set) || !flags.has('UP'))
            throw new WebauthnRefused('presence');
        if (typeof counter !== 'number')
            throw new WebauthnRefused('malformed');
        return { counter };
    }
    catch (err) {
        if (err instanceof WebauthnRefused)
            throw err;
        throw new WebauthnRefused(reasonOf(err), { cause: err });
    }
}
