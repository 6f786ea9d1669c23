/**
 * One-time codes (RFC 6238) from a seed stored in an entry's `totp` field: a
 * base32 secret or an `otpauth://totp/...` URI. The seed never leaves the host;
 * only the code does.
 */
import { createGuardrails, generateSync } from 'otplib';
import { VaultError } from '../../core/errors.js';
/** Real 2FA setups use 80-bit secrets; otplib's default floor is 128 bits. */
const guardrails = createGuardrails({ MIN_SECRET_BYTES: 10 });
const BASE32 = /^[A-Z2-7]+=*$/;
function bad() {
    return new VaultError('VLT-1002', 'A totp field holds a base32 secret or an otpauth://totp/ URI.');
}
/** @throws VaultError VLT-1002 when the seed is neither base32 nor an otpauth URI. */
export function parseSeed(seed) {
    const text = seed.trim();
    if (text.startsWith('otpauth://')) {
        let url;
        try {
            url = new URL(text);
        }
        catch {
            throw bad();
        }
        if (url.host !== 'totp')
            throw bad();
        const q = url.searchParams;
        const algorithm = (q.get('algorithm') ?? 'SHA1').toLowerCase();
        const digits = Number(q.get('digits') ?? '6');
        const period = Number(q.get('period') ?? '30');
        if (algorithm !== 'sha1' && algorithm !== 'sha256' && algorithm !== 'sha512')
            throw bad();
        if (digits !== 6 && digits !== 7 && digits !== 8)
            throw bad();
        if (!Number.isInteger(period) || period < 1 || period > 3600)
            throw bad();
        return usable({ ...base32(q.get('secret') ?? ''), algorithm, digits, period });
    }
    return usable({ ...base32(text), algorithm: 'sha1', digits: 6, period: 30 });
}
/**
 * The seed as otplib will take it: base32 with no impossible length or stray
 * padding bits, 10 to 64 bytes. Checked by making one code, so a seed that
 * passes here can never fail later, after a read has been charged.
 */
function usable(p) {
    try {
        totpCode(p, 0);
    }
    catch {
        throw bad();
    }
    return p;
}
function base32(text) {
    const secret = text.replace(/[\s-]/g, '').toUpperCase().replace(/=+$/, '');
    // 10 bytes (80 bits) at least: 16 base32 characters.
    if (!BASE32.test(secret) || secret.length < 16 || secret.length > 128)
        throw bad();
    return { secret };
}
/** The code at `nowMs`. */
export function totpCode(p, nowMs) {
    return generateSync({
        secret: p.secret,
        algorithm: p.algorithm,
        digits: p.digits,
        period: p.period,
        epoch: Math.floor(nowMs / 1000),
        guardrails,
    });
}
