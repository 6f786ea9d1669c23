/**
 * The few DER encodings an X.509 certificate needs, and the certificate itself.
 * Written here (about a hundred lines) rather than loaded from an X.509
 * library: the proxy mints a leaf per host on its hot path, and node:crypto
 * already does the key generation and the signature.
 */
import { isIP } from 'node:net';
function len(n) {
    if (n < 0x80)
        return Buffer.from([n]);
    const bytes = [];
    for (let v = n; v > 0; v = Math.floor(v / 256))
        bytes.unshift(v & 0xff);
    return Buffer.from([0x80 | bytes.length, ...bytes]);
}
export function tlv(tag, ...content) {
    const body = Buffer.concat(content);
    return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
}
export const seq = (...c) => tlv(0x30, ...c);
const set = (...c) => tlv(0x31, ...c);
const explicit = (n, ...c) => tlv(0xa0 + n, ...c);
/** A non-negative INTEGER from big-endian bytes. */
function uint(bytes) {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0)
        i++;
    const b = bytes.subarray(i);
    return tlv(0x02, (b[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}
function oid(dotted) {
    const parts = dotted.split('.').map(Number);
    const out = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)];
    for (const p of parts.slice(2)) {
        const groups = [];
        for (let v = p;; v = Math.floor(v / 128)) {
            groups.unshift(v & 0x7f);
            if (v < 128)
                break;
        }
        out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
    }
    return tlv(0x06, Buffer.from(out));
}
const utf8 = (s) => tlv(0x0c, Buffer.from(s, 'utf8'));
const bool = (v) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const octets = (b) => tlv(0x04, b);
const bits = (b) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
/** UTCTime up to 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(ms) {
    const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-11-22T04:40:58.000Z
    const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
    const year = new Date(ms).getUTCFullYear();
    return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
export function name(commonName, org) {
    const rdns = [set(seq(oid('2.5.4.3'), utf8(commonName)))];
    if (org !== undefined)
        rdns.unshift(set(seq(oid('2.5.4.10'), utf8(org))));
    return seq(...rdns);
}
function ext(id, critical, value) {
    return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}
/** A subjectAltName of one DNS name or one IP address. */
function altName(host) {
    const kind = isIP(host);
    if (kind === 0)
        return tlv(0x82, Buffer.from(host, 'ascii'));
    const bytes = kind === 4
        ? Buffer.from(host.split('.').map(Number))
        : Buffer.from(expandV6(host)
            .map((g) => [g >> 8, g & 0xff])
            .flat());
    return tlv(0x87, bytes);
}
function expandV6(host) {
    const [head = '', tail] = host.split('::');
    const h = head === '' ? [] : head.split(':');
    const t = tail === undefined || tail === '' ? [] : tail.split(':');
    const zeros = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
    return [...h, ...zeros, ...t].map((g) => parseInt(g, 16));
}
/** The to-be-signed part of a certificate. */
export function tbsCertificate(c) {
    const extensions = c.role.ca === true
        ? [
            ext('2.5.29.19', true, seq(bool(true), tlv(0x02, Buffer.from([0])))),
            ext('2.5.29.15', true, bits(Buffer.from([0x06]))), // keyCertSign, cRLSign
        ]
        : [
            ext('2.5.29.19', true, seq()),
            ext('2.5.29.15', true, bits(Buffer.from([0x80]))), // digitalSignature
            ext('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // serverAuth
            ext('2.5.29.17', false, seq(altName(c.role.host))),
        ];
    extensions.push(ext('2.5.29.14', false, octets(c.subjectKeyId)), ext('2.5.29.35', false, seq(tlv(0x80, c.authorityKeyId))));
    return seq(explicit(0, tlv(0x02, Buffer.from([2]))), uint(c.serial), ECDSA_SHA256, c.issuer, seq(time(c.notBefore), time(c.notAfter)), c.subject, c.spki, explicit(3, seq(...extensions)));
}
/** The whole certificate from its TBS part and a DER ECDSA-SHA256 signature over it. */
export function certificate(tbs, signature) {
    return seq(tbs, ECDSA_SHA256, bits(signature));
}
export function pem(der) {
    const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
    return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}
