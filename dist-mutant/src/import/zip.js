/**
 * One member out of a zip archive held in memory: what `import` needs of a
 * 1PUX export (a zip holding export.data and attachments). Read through the
 * central directory, stored or deflated only, no ZIP64, no encryption; the
 * member's inflated size is capped, so a zip bomb stops at the cap instead of
 * filling memory. Pure: bytes in, bytes out.
 */
import { inflateRawSync } from 'node:zlib';
import { VaultError } from '../core/errors.js';
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
function refused(why) {
    return new VaultError('VLT-1011', `the 1PUX archive: ${why}.`);
}
function u16(b, at) {
    if (at < 0 || at + 2 > b.length)
        throw refused('cut short');
    return b.readUInt16LE(at);
}
function u32(b, at) {
    if (at < 0 || at + 4 > b.length)
        throw refused('cut short');
    return b.readUInt32LE(at);
}
/**
 * The bytes of member `name` of the zip `zip`, or null when it has none.
 * @throws VaultError VLT-1011 for an archive that is not a zip we read, or a
 * member that inflates past `maxBytes`.
 */
export function zipMember(zip, name, maxBytes) {
    // The end record is in the last 22 bytes plus at most a 64 KiB comment.
    let eocd = -1;
    for (let at = zip.length - 22; at >= 0 && at >= zip.length - 22 - 0xffff; at--) {
        if (zip.readUInt32LE(at) === EOCD) {
            eocd = at;
            break;
        }
    }
    if (eocd < 0)
        throw refused('not a zip archive');
    const count = u16(zip, eocd + 10);
    let at = u32(zip, eocd + 16);
    for (let i = 0; i < count; i++) {
        if (u32(zip, at) !== CENTRAL)
            throw refused('a damaged directory');
        const flags = u16(zip, at + 8);
        const method = u16(zip, at + 10);
        const packed = u32(zip, at + 20);
        const size = u32(zip, at + 24);
        const nameLen = u16(zip, at + 28);
        const skip = nameLen + u16(zip, at + 30) + u16(zip, at + 32);
        const local = u32(zip, at + 42);
        if (at + 46 + nameLen > zip.length)
            throw refused('cut short');
        const member = zip.subarray(at + 46, at + 46 + nameLen).toString('utf8');
        at += 46 + skip;
        if (member !== name)
            continue;
        if ((flags & 1) !== 0)
            throw refused('an encrypted member');
        if (packed === 0xffffffff || size === 0xffffffff || local === 0xffffffff) {
            throw refused('a ZIP64 member');
        }
        if (u32(zip, local) !== LOCAL)
            throw refused('a damaged member');
        const start = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
        if (start + packed > zip.length)
            throw refused('cut short');
        const data = zip.subarray(start, start + packed);
        if (method === 0) {
            if (data.length > maxBytes)
                throw refused(`${name} is larger than ${maxBytes} bytes`);
            return Buffer.from(data);
        }
        if (method !== 8)
            throw refused('a member compressed in a way this reader does not know');
        try {
            return inflateRawSync(data, { maxOutputLength: maxBytes });
        }
        catch (err) {
            if (err instanceof RangeError) {
                throw refused(`${name} is larger than ${maxBytes} bytes`);
            }
            throw refused(`${name} does not inflate`);
        }
    }
    return null;
}
