/**
 * The owner's memory of the audit anchor (src/client/options.ts, AnchorMemory),
 * in a module of its own: edge.ts gives it to every command's client, and
 * owner.ts, with its prompts and terminals, is not on get's path.
 */
import type { AnchorMemory } from '../client/options.js';
import type { AnchorRef } from '../core/protocol.js';

// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { mkdirSync, readFileSync, renameSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { dirname } = process.getBuiltinModule('node:path');

function isAnchorRef(v: unknown): v is AnchorRef {
  const a = v as Partial<AnchorRef> | null;
  return (
    typeof a === 'object' &&
    a !== null &&
    typeof a.vault === 'string' &&
    typeof a.hash === 'string' &&
    Number.isInteger(a.seq) &&
    (a.seq as number) > 0
  );
}

/**
 * The owner's memory of the audit anchor its last command left on the vault
 * at `vaultDir`, kept in `file` (one entry per vault directory). The anchor's
 * MAC cannot tell an old anchor from the last one; this memory can, and the
 * host refuses an owner command on a log cut back before it (VLT-3003).
 * A memory that cannot be read or written is no memory: the command goes on
 * as it did before there was one.
 */
export function anchorMemory(file: string, vaultDir: string): AnchorMemory {
  const load = (): Record<string, unknown> => {
    try {
      const j = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      return typeof j === 'object' && j !== null && !Array.isArray(j)
        ? (j as Record<string, unknown>)
        : {};
    } catch {
      return {};
    }
  };
  const save = (next: AnchorRef | undefined): void => {
    try {
      const all = load();
      if (next === undefined) delete all[vaultDir];
      else all[vaultDir] = next;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}`;
      writeFileSync(tmp, JSON.stringify(all) + '\n', { mode: 0o600 });
      renameSync(tmp, file);
    } catch {
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
