/**
 * The SSH agent protocol (draft-miller-ssh-agent) and the SSH wire types it
 * carries, pure: bytes in, values out, and back. No I/O, no crypto (the host
 * signs and verifies: src/host/agent/ssh-sign.ts).
 *
 * Every read is bounded by the bytes it was given: a length that points past
 * the end, a message longer than MAX_AGENT_MESSAGE, trailing bytes or an
 * unknown type is `null` (the caller replies FAILURE or closes), never a
 * throw, so no input an agent sends can crash the process that parses it.
 */
/** The largest agent message taken (OpenSSH's own agent takes 256 KiB too). */
export const MAX_AGENT_MESSAGE = 256 * 1024;
export const SSH_AGENT_FAILURE = 5;
export const SSH_AGENT_SUCCESS = 6;
export const SSH_AGENTC_REQUEST_IDENTITIES = 11;
export const SSH_AGENT_IDENTITIES_ANSWER = 12;
export const SSH_AGENTC_SIGN_REQUEST = 13;
export const SSH_AGENT_SIGN_RESPONSE = 14;
export const SSH_AGENTC_EXTENSION = 27;
export const SSH_AGENT_RSA_SHA2_256 = 2;
export const SSH_AGENT_RSA_SHA2_512 = 4;
export const SESSION_BIND = 'session-bind@openssh.com';
/** SSH_MSG_USERAUTH_REQUEST: the message a user-authentication signature covers. */
const USERAUTH_REQUEST = 50;
/** A cursor over bytes; every read returns null past the end instead of throwing. */
export class WireReader {
    buf;
    at = 0;
    constructor(buf) {
        this.buf = buf;
    }
    get done() {
        return this.at === this.buf.length;
    }
    byte() {
        if (this.at + 1 > this.buf.length)
            return null;
        const b = this.buf[this.at];
        this.at += 1;
        return b;
    }
    uint32() {
        if (this.at + 4 > this.buf.length)
            return null;
        const b = this.buf;
        const v = b[this.at] * 2 ** 24 +
            b[this.at + 1] * 2 ** 16 +
            b[this.at + 2] * 2 ** 8 +
            b[this.at + 3];
        this.at += 4;
        return v;
    }
    /** An SSH `string`: uint32 length, then that many bytes (a view, not a copy). */
    string() {
        const n = this.uint32();
        if (n === null || n > this.buf.length - this.at)
            return null;
        const out = this.buf.subarray(this.at, this.at + n);
        this.at += n;
        return out;
    }
    text() {
        const s = this.string();
        if (s === null)
            return null;
        const t = Buffer.from(s).toString('utf8');
        return Buffer.from(t, 'utf8').equals(Buffer.from(s)) ? t : null;
    }
    /** The bytes not read yet. */
    rest() {
        const out = this.buf.subarray(this.at);
        this.at = this.buf.length;
        return out;
    }
}
/** Builds SSH wire bytes. */
export class WireWriter {
    parts = [];
    byte(b) {
        this.parts.push(Buffer.from([b & 0xff]));
        return this;
    }
    uint32(n) {
        const b = Buffer.alloc(4);
        b.writeUInt32BE(n >>> 0);
        this.parts.push(b);
        return this;
    }
    string(s) {
        const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s);
        this.uint32(b.length);
        this.parts.push(b);
        return this;
    }
    /** An SSH `mpint` from an unsigned big-endian magnitude. */
    mpint(magnitude) {
        let i = 0;
        while (i < magnitude.length && magnitude[i] === 0)
            i += 1;
        const m = Buffer.from(magnitude.subarray(i));
        const needsZero = m.length > 0 && (m[0] & 0x80) !== 0;
        return this.string(needsZero ? Buffer.concat([Buffer.from([0]), m]) : m);
    }
    raw(b) {
        this.parts.push(Buffer.from(b));
        return this;
    }
    bytes() {
        return Buffer.concat(this.parts);
    }
}
/**
 * Parses a session-bind extension's contents (after its name).
 * @returns null when it is malformed.
 */
export function parseSessionBind(contents) {
    const r = new WireReader(contents);
    const hostKey = r.string();
    const sessionId = r.string();
    const signature = r.string();
    const fwd = r.byte();
    if (hostKey === null || sessionId === null || signature === null || fwd === null)
        return null;
    if (!r.done || fwd > 1 || sessionId.length === 0 || sessionId.length > 64)
        return null;
    return { hostKey, sessionId, signature, forwarding: fwd === 1 };
}
/**
 * Parses one agent message body (the bytes after its uint32 length).
 * @returns null when it is malformed (the caller replies FAILURE).
 */
export function parseAgentRequest(body) {
    if (body.length === 0 || body.length > MAX_AGENT_MESSAGE)
        return null;
    const r = new WireReader(body);
    const type = r.byte();
    if (type === SSH_AGENTC_REQUEST_IDENTITIES)
        return r.done ? { type: 'identities' } : null;
    if (type === SSH_AGENTC_SIGN_REQUEST) {
        const keyBlob = r.string();
        const data = r.string();
        const flags = r.uint32();
        if (keyBlob === null || data === null || flags === null || !r.done)
            return null;
        return { type: 'sign', keyBlob, data, flags };
    }
    if (type === SSH_AGENTC_EXTENSION) {
        const name = r.text();
        if (name === null)
            return null;
        if (name !== SESSION_BIND)
            return { type: 'unsupported' };
        const raw = r.rest();
        const bind = parseSessionBind(raw);
        return bind === null ? null : { type: 'bind', bind, raw };
    }
    return { type: 'unsupported' };
}
/**
 * Takes whole messages off the front of what a connection has sent so far.
 * @returns the message bodies, the bytes left over (an unfinished message),
 *   and `tooLong` when a message states a length past MAX_AGENT_MESSAGE (the
 *   caller closes the connection; nothing that long is ever buffered).
 */
export function takeFrames(pending) {
    const frames = [];
    let at = 0;
    while (pending.length - at >= 4) {
        const n = pending.readUInt32BE(at);
        if (n > MAX_AGENT_MESSAGE)
            return { frames, rest: Buffer.alloc(0), tooLong: true };
        if (pending.length - at - 4 < n)
            break;
        frames.push(pending.subarray(at + 4, at + 4 + n));
        at += 4 + n;
    }
    return { frames, rest: pending.subarray(at), tooLong: false };
}
/** A whole agent message: uint32 length, then the body. */
export function frame(body) {
    return new WireWriter().string(body).bytes();
}
export const failureReply = () => frame(Buffer.from([SSH_AGENT_FAILURE]));
export const successReply = () => frame(Buffer.from([SSH_AGENT_SUCCESS]));
export function identitiesReply(keys) {
    const w = new WireWriter().byte(SSH_AGENT_IDENTITIES_ANSWER).uint32(keys.length);
    for (const k of keys)
        w.string(k.blob).string(k.comment);
    return frame(w.bytes());
}
export function signReply(signature) {
    return frame(new WireWriter().byte(SSH_AGENT_SIGN_RESPONSE).string(signature).bytes());
}
/** Encoders for the requests, for clients and tests (the inverse of parseAgentRequest). */
export const encodeRequest = {
    identities: () => frame(Buffer.from([SSH_AGENTC_REQUEST_IDENTITIES])),
    sign: (keyBlob, data, flags) => frame(new WireWriter()
        .byte(SSH_AGENTC_SIGN_REQUEST)
        .string(keyBlob)
        .string(data)
        .uint32(flags)
        .bytes()),
    bind: (b) => frame(new WireWriter()
        .byte(SSH_AGENTC_EXTENSION)
        .string(SESSION_BIND)
        .raw(encodeBindContents(b))
        .bytes()),
};
export function encodeBindContents(b) {
    return new WireWriter()
        .string(b.hostKey)
        .string(b.sessionId)
        .string(b.signature)
        .byte(b.forwarding ? 1 : 0)
        .bytes();
}
/**
 * The session identifier a signature's data is for, when the data is an SSH
 * user-authentication request (RFC 4252 section 7: string session id, byte
 * 50, ...); null for anything else.
 */
export function userauthSession(data) {
    const r = new WireReader(data);
    const session = r.string();
    const type = r.byte();
    if (session === null || type !== USERAUTH_REQUEST)
        return null;
    return session;
}
/** The algorithm name a key or signature blob starts with; null when it has none. */
export function blobType(blob) {
    return new WireReader(blob).text();
}
/** `SHA256:` and base64 without padding: how OpenSSH names a key (the digest is the caller's). */
export function fingerprintText(sha256) {
    return `SHA256:${Buffer.from(sha256).toString('base64').replace(/=+$/, '')}`;
}
/** A host-key binding as `entry hosts` takes it (OpenSSH's fingerprint form). */
export const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;
