/**
 * `sweep --redact --backup <dir>`: the original of each file rewritten, kept
 * sealed like the store's audit names are: a fresh key per file, sealed to
 * the vault's audit public key (crypto_box_seal), so this process can write
 * the backup and only the owner's unlock can open it again (`sweep
 * --open-backup`, through the host). The file: one JSON line (what it is, the
 * original's path, the sealed key), then the original in sealed chunks, each
 * bound to that line, its index and whether it is the last, so a chunk moved,
 * dropped or cut off fails the whole.
 */
import { closeSync, constants, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { VaultError } from '../core/errors.js';
import { newKey, open, seal, slot, wipe } from '../crypto/aead.js';
import { sealTo } from '../crypto/box.js';
const KIND = 'vault-cli sweep backup';
const CHUNK = 1 << 20;
/**
 * Writes the sealed backup of the file open as `fd` (`size` bytes) into
 * `dir`, and returns its path. The file key is wiped after.
 */
export function writeBackup(dir, original, fd, size, auditPublicKey) {
    const key = newKey();
    const path = join(dir, `${basename(original)}.${Date.now()}.sweep-backup`);
    const out = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const buf = Buffer.allocUnsafe(CHUNK);
    try {
        const header = {
            kind: KIND,
            v: 1,
            path: original,
            key: sealTo(auditPublicKey, key).toString('base64'),
        };
        const line = Buffer.from(JSON.stringify(header) + '\n');
        writeSync(out, line);
        let pos = 0;
        let index = 0;
        for (;;) {
            const n = pos >= size ? 0 : readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos);
            pos += n;
            const last = n === 0 || pos >= size;
            const sealed = seal(key, buf.subarray(0, n), slot(line, index, last ? 1 : 0));
            const len = Buffer.alloc(4);
            len.writeUInt32BE(sealed.length);
            writeSync(out, len);
            writeSync(out, sealed);
            index++;
            if (last)
                break;
        }
        fsyncSync(out);
        return path;
    }
    finally {
        buf.fill(0);
        wipe(key);
        closeSync(out);
    }
}
/** The sealed key a backup's first line carries (for the host to open), and the line itself. */
export function backupHeader(fd) {
    const head = Buffer.alloc(4096);
    const n = readSync(fd, head, 0, head.length, 0);
    const end = head.subarray(0, n).indexOf(10);
    const bad = () => new VaultError('VLT-3037', 'Not a vault-cli sweep backup.');
    if (end < 0)
        throw bad();
    const line = Buffer.from(head.subarray(0, end + 1));
    let h;
    try {
        h = JSON.parse(line.toString('utf8'));
    }
    catch {
        throw bad();
    }
    if (h.kind !== KIND || h.v !== 1 || typeof h.key !== 'string' || typeof h.path !== 'string') {
        throw bad();
    }
    return { line, sealedKey: h.key, path: h.path };
}
/**
 * Writes the original back out to `out`, chunk by chunk, with the file key the
 * host opened. A chunk that does not open, or a backup cut short, stops it
 * with VLT-3037 (what was written before is the original's start).
 */
export async function openBackup(fd, line, key, out) {
    const len = Buffer.alloc(4);
    let pos = line.length;
    let index = 0;
    const bad = () => new VaultError('VLT-3037', 'The sweep backup does not open: changed or cut short.');
    for (;;) {
        if (readSync(fd, len, 0, 4, pos) !== 4)
            throw bad();
        const size = len.readUInt32BE(0);
        if (size > CHUNK + 64)
            throw bad();
        const sealed = Buffer.alloc(size);
        if (readSync(fd, sealed, 0, size, pos + 4) !== size)
            throw bad();
        pos += 4 + size;
        const atEnd = readSync(fd, len, 0, 1, pos) === 0;
        const plain = open(key, sealed, slot(line, index, atEnd ? 1 : 0));
        if (plain === null)
            throw bad();
        // Not wiped: the stream may still hold it (the owner asked for the original back).
        if (!out.write(plain))
            await new Promise((r) => out.once('drain', r));
        index++;
        if (atEnd)
            return;
    }
}
