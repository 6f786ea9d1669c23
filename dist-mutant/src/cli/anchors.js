// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { mkdirSync, readFileSync, renameSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { dirname } = process.getBuiltinModule('node:path');
function isAnchorRef(v) {
    const a = v;
    return (typeof a === 'object' &&
        a !== null &&
        typeof a.vault === 'string' &&
        typeof a.hash === 'string' &&
        Number.isInteger(a.seq) &&
        a.seq > 0);
}
/**
 * The owner's memory of the audit anchor its last command left on the vault
 * at `vaultDir`, kept in `file` (one entry per vault directory). The anchor's
 * MAC cannot tell an old anchor from the last one; this memory can, and the
 * host refuses an owner command on a log cut back before it (VLT-3003).
 * A memory that cannot be read or written is no memory: the command goes on
 * as it did before there was one.
 */
export function anchorMemory(file, vaultDir) {
    const load = () => {
        try {
            const j = JSON.parse(readFileSync(file, 'utf8'));
            return typeof j === 'object' && j !== null && !Array.isArray(j)
                ? j
                : {};
        }
        catch {
            return {};
        }
    };
    const save = (next) => {
        try {
            const all = load();
            if (next === undefined)
                delete all[vaultDir];
            else
                all[vaultDir] = next;
            mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
            const tmp = `${file}.${process.pid}`;
            writeFileSync(tmp, JSON.stringify(all) + '\n', { mode: 0o600 });
            renameSync(tmp, file);
        }
        catch {
            // Kept as it was.
        }
    };
    return {
        seen: () => {
            const a = load()[vaultDir];
            return isAnchorRef(a) ? { vault: a.vault, seq: a.seq, hash: a.hash } : undefined;
        },
        remember: (a) => save(a),
        forget: () => save(undefined),
    };
}
