/**
 * Audit retention: `audit archive --before <date> <file>` moves the oldest
 * records into a sealed archive file, and the store keeps where its chain now
 * starts (`audit-base`: the sequence number and hash of the last archived
 * record), so the chain verifies across archive and store together. The
 * pages the moved records held are free again and LMDB reuses them, so the
 * store stays bounded under a steady fill rate when archived regularly.
 *
 * The file: one line of JSON that says what it holds (vault id, first and
 * last sequence numbers, the hash before the first record and of the last),
 * then the records, sealed (XChaCha20-Poly1305) under a key derived from the
 * vault's MAC key, with that line as associated data. Only the owner's
 * passphrase opens or verifies it; a changed byte anywhere fails it.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, } from 'node:fs';
import { dirname, isAbsolute, join, basename } from 'node:path';
import { VaultError } from '../../core/errors.js';
import { open, seal, slot, wipe } from '../../crypto/aead.js';
import { equal, keyedHash } from '../../crypto/hash.js';
import { anchorAudit, anchorVerdict, appendAudit, brokenLink, } from '../audit/log.js';
import { checkOutputPath, outputFailure } from './backup.js';
import { ownerEvent } from '../owner/keys.js';
const MAGIC = 'vault-cli audit archive v1';
const GENESIS_HEX = '00'.repeat(32);
/**
 * From the audit secret key, which `vault rekey` keeps (old records stay
 * readable): a key from the MAC key would lock every archive made before a rekey.
 */
function archiveKey(s) {
    return keyedHash(s.auditKeys().secretKey, 'audit-archive');
}
function encode(r) {
    return {
        ...r,
        sealed: r.sealed === null ? null : r.sealed.toString('base64'),
        ...(r.epoch === undefined ? {} : { epoch: r.epoch.toString('base64') }),
        ...(r.mac === undefined ? {} : { mac: r.mac.toString('base64') }),
        prev: r.prev.toString('base64'),
        hash: r.hash.toString('base64'),
    };
}
function decode(o) {
    const b = (v) => Buffer.from(String(v), 'base64');
    return {
        ...o,
        sealed: o.sealed === null ? null : b(o.sealed),
        // Archives made before audit epochs have no record that carries one.
        ...(o.epoch === undefined ? {} : { epoch: b(o.epoch) }),
        // Keyed records (store/seal.ts) keep their hosts' MAC.
        ...(o.mac === undefined ? {} : { mac: b(o.mac) }),
        prev: b(o.prev),
        hash: b(o.hash),
    };
}
/** Writes `bytes` to `path` atomically: a temp file beside it, flushed, renamed, the directory flushed. */
function writeAtomically(path, bytes) {
    const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
    try {
        writeFileSync(tmp, bytes, { mode: 0o600, flag: 'wx' });
        const fd = openSync(tmp, 'r');
        try {
            fsyncSync(fd);
        }
        finally {
            closeSync(fd);
        }
        renameSync(tmp, path);
        const dfd = openSync(dirname(path), 'r');
        try {
            fsyncSync(dfd);
        }
        finally {
            closeSync(dfd);
        }
    }
    finally {
        rmSync(tmp, { force: true });
    }
}
/**
 * Moves the records older than `before` into a new archive file at `path`.
 * The file is on disk before the records leave the store.
 */
export function archiveAudit(ctx, s, req, source) {
    if (!isAbsolute(req.path))
        throw new VaultError('VLT-1002', 'The archive path must be absolute.');
    checkOutputPath(req.path, 'archive');
    const { records, base, total } = ctx.store().read((tx) => {
        const all = tx.audit();
        const older = [];
        for (const r of all) {
            if (r.at >= req.before)
                break;
            older.push(r);
        }
        return { records: older, base: tx.auditBase(), total: all.length };
    });
    const last = records[records.length - 1];
    if (last === undefined)
        return { archived: 0, firstSeq: 0, lastSeq: 0, kept: total };
    const start = base ?? { seq: 0, hash: Buffer.alloc(32) };
    if (brokenLink(records, null, start) !== null) {
        throw new VaultError('VLT-3033', 'The audit chain is broken; nothing was archived (run `vault-cli vault check`).');
    }
    const head = {
        magic: MAGIC,
        vaultId: s.vaultId.toString('hex'),
        firstSeq: start.seq + 1,
        lastSeq: last.seq,
        startHash: start.hash.toString('hex'),
        endHash: last.hash.toString('hex'),
    };
    const line = JSON.stringify(head);
    const key = archiveKey(s);
    try {
        const body = seal(key, Buffer.from(JSON.stringify(records.map(encode))), slot(line));
        try {
            writeAtomically(req.path, Buffer.concat([Buffer.from(line + '\n'), body]));
        }
        catch (err) {
            throw outputFailure(err, req.path, 'archive');
        }
    }
    finally {
        wipe(key);
    }
    ctx.commit((tx) => {
        // The owner vouches for the chain it archives: a log rewritten before the last
        // anchor is not archived (that would put the rewrite out of reach of --verify).
        if (!anchorAudit(tx, s.vaultId, s.anchorKey(), ctx.now())) {
            rmSync(req.path, { force: true });
            throw new VaultError('VLT-3033', 'The audit log does not extend what the owner last vouched for; nothing was archived (run `vault-cli audit --verify`).');
        }
        // Records appended since the read are newer: they stay.
        tx.pruneAudit({ seq: last.seq, hash: last.hash });
        appendAudit(tx, ctx.header(tx), ownerEvent(ctx, 'audit_archive', source, { subject: `${head.firstSeq}-${head.lastSeq}` }));
    });
    return {
        archived: records.length,
        firstSeq: head.firstSeq,
        lastSeq: head.lastSeq,
        kept: total - records.length + 1,
    };
}
/** Opens an archive file: its head and records. @throws VaultError VLT-3037 */
function readArchive(s, path) {
    let raw;
    try {
        raw = readFileSync(path);
    }
    catch {
        throw new VaultError('VLT-3037', 'No archive file at that path.');
    }
    const nl = raw.indexOf(0x0a);
    const line = nl < 0 ? '' : raw.subarray(0, nl).toString('utf8');
    let head;
    try {
        head = JSON.parse(line);
    }
    catch {
        throw new VaultError('VLT-3037', 'Not an audit archive.');
    }
    if (head.magic !== MAGIC)
        throw new VaultError('VLT-3037', 'Not an audit archive.');
    if (head.vaultId !== s.vaultId.toString('hex')) {
        throw new VaultError('VLT-3037', 'The archive is of another vault.');
    }
    const key = archiveKey(s);
    const body = open(key, raw.subarray(nl + 1), slot(line));
    wipe(key);
    if (body === null)
        throw new VaultError('VLT-3037', 'The archive failed authentication (changed or damaged).');
    const records = JSON.parse(body.toString('utf8')).map(decode);
    return { head, records };
}
/**
 * `audit --verify [--archive <file>]...`: the chain in the store, from where it
 * starts; with archives (in any order), each archive's own chain, each one
 * starting where the one before ended, and the store's starting where the
 * last one ends.
 */
export function verifyWithArchive(ctx, s, archivePaths) {
    const stateKey = s.stateKey();
    const sealProblem = stateKey === null ? null : ctx.store().read((tx) => tx.stateProblem(stateKey));
    return { ...verifyChain(ctx, s, archivePaths), sealProblem };
}
/** verifyWithArchive's chain and anchor half. */
function verifyChain(ctx, s, archivePaths) {
    const { records, head, base, anchor } = ctx.store().read((tx) => ({
        records: tx.audit(),
        head: tx.auditHead(),
        base: tx.auditBase(),
        anchor: tx.auditAnchor(),
    }));
    const key = s.anchorKey();
    try {
        if (archivePaths.length === 0) {
            return {
                records: records.length,
                brokenAt: brokenLink(records, head?.hash ?? null, base),
                from: (base?.seq ?? 0) + 1,
                ...anchorVerdict(records, anchor, key, s.vaultId, base),
            };
        }
        const archives = archivePaths
            .map((p) => {
            if (!isAbsolute(p))
                throw new VaultError('VLT-1002', 'The archive path must be absolute.');
            return readArchive(s, p);
        })
            .sort((a, b) => a.head.firstSeq - b.head.firstSeq);
        const first = archives[0]?.head;
        const start = first === undefined || (first.firstSeq === 1 && first.startHash === GENESIS_HEX)
            ? { seq: 0, hash: Buffer.alloc(32) }
            : { seq: first.firstSeq - 1, hash: Buffer.from(first.startHash, 'hex') };
        const from = start.seq + 1;
        // Archives and store as one chain: the anchor may vouch for a record in either.
        const whole = [...archives.flatMap((a) => a.records), ...records];
        const anchored = anchorVerdict(whole, anchor, key, s.vaultId, start);
        let at = start;
        let archived = 0;
        for (const a of archives) {
            const total = archived + records.length + a.records.length;
            // Each archive starts where the one before it ended.
            if (a.head.firstSeq !== at.seq + 1 || a.head.startHash !== at.hash.toString('hex')) {
                return { records: total, brokenAt: at.seq + 1, archived, from, ...anchored };
            }
            const broken = brokenLink(a.records, Buffer.from(a.head.endHash, 'hex'), at);
            if (broken !== null)
                return { records: total, brokenAt: broken, archived, from, ...anchored };
            archived += a.records.length;
            at = { seq: a.head.lastSeq, hash: Buffer.from(a.head.endHash, 'hex') };
        }
        // The store's chain must start exactly where the last archive ends.
        const joins = base !== null && base.seq === at.seq && equal(base.hash, at.hash);
        return {
            records: archived + records.length,
            brokenAt: joins ? brokenLink(records, head?.hash ?? null, base) : at.seq + 1,
            archived,
            from,
            ...anchored,
        };
    }
    finally {
        wipe(key);
    }
}
