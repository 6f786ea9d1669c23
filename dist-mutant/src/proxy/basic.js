/**
 * References inside `Authorization: Basic` credentials. A client encodes
 * `user:password` in base64 before the proxy sees it (`curl -u`, git and its
 * credential helpers, registries, most SDKs' basic auth), so a reference
 * there is invisible to a scan of the header as written, and would go
 * upstream as the literal reference. The proxy decodes such credentials, fills
 * a reference in the user or the password part like any other (same scope,
 * host binding and audit: the template in headers.ts carries it) and encodes
 * the result again.
 *
 * Only canonical base64 whose decoded bytes hold `vault://` is touched:
 * anything else goes on exactly as written, never re-encoded.
 */
import { isNamed } from './raw-headers.js';
const BASIC = /^(basic +)([A-Za-z0-9+/]+={0,2}) *$/i;
const SCHEME = Buffer.from('vault://');
/** The credentials of an `Authorization` header when they hold a reference, else null. */
export function basicWithReference(name, value) {
    if (!isNamed(name, 'authorization'))
        return null;
    const m = BASIC.exec(value);
    if (m === null)
        return null;
    const written = m[2];
    const decoded = Buffer.from(written, 'base64');
    // Not canonical (bad padding, stray bits): not ours to reinterpret.
    if (decoded.toString('base64') !== written || !decoded.includes(SCHEME))
        return null;
    return { scheme: m[1], decoded, written };
}
/** Whether any `Authorization: Basic` header holds a reference once decoded. */
export const basicReferenceIn = (raw) => raw.all('authorization').some((v) => basicWithReference('authorization', v) !== null);
/** The header value for credentials `decoded`, under the scheme as the client wrote it. */
export const encodeBasic = (scheme, decoded) => scheme + decoded.toString('base64');
