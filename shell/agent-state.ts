/**
 * Carries out a profile's state plan (shell/profiles.ts) around one `run`
 * session: before the agent starts, the state directories it may write, the
 * placeholders the sandbox binds read-only, and its private copies of mixed
 * state files; after it ends, each copy merged back into the owner's file
 * (only the keys that cannot execute anything) and the placeholders removed.
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { mergeBack, placeholder, type StatePlan } from './profiles.js';

/** Creates what the plan says is missing and the private copies; returns what `finishState` undoes. */
export function applyState(plan: StatePlan): void {
  for (const w of plan.write) if (w.create) mkdirSync(w.path, { recursive: true, mode: 0o700 });
  for (const r of plan.readOnly) {
    if (!r.create) continue;
    if (r.kind === 'dir') mkdirSync(r.path, { mode: 0o700 });
    else writeFileSync(r.path, placeholder(r.path), { mode: 0o600, flag: 'wx' });
  }
  for (const f of plan.private) {
    if (f.create) writeFileSync(f.path, '{}\n', { mode: 0o600, flag: 'wx' });
    copyFileSync(f.path, f.copy);
    chmodSync(f.copy, 0o600);
  }
}

function json(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/**
 * Merges each private copy back and removes the placeholders that are as
 * `applyState` left them. Returns a line for each thing it could not do (never
 * a value).
 */
export function finishState(plan: StatePlan): string[] {
  const said: string[] = [];
  for (const f of plan.private) {
    try {
      let owner: unknown = {};
      try {
        owner = json(f.path);
      } catch {
        // The owner's file is gone or broken: the copy's safe keys make a new one.
      }
      const merged = mergeBack(owner, json(f.copy), f.ownerKeeps);
      // Written beside it and renamed: the owner's file is never half-written.
      const tmp = join(
        dirname(f.path),
        `.${f.path.split('/').pop() ?? 'state'}.vault-cli-${process.pid}`,
      );
      const mode = (() => {
        try {
          return statSync(f.path).mode & 0o777;
        } catch {
          return 0o600;
        }
      })();
      writeFileSync(tmp, `${JSON.stringify(merged, null, 2)}\n`, { mode });
      renameSync(tmp, f.path);
    } catch {
      said.push(`the agent's copy of ${f.path} was not merged back (not JSON); yours is unchanged`);
    }
  }
  for (const r of [...plan.readOnly].reverse()) {
    if (!r.create) continue;
    try {
      if (r.kind === 'dir') {
        if (readdirSync(r.path).length === 0) rmdirSync(r.path);
      } else if (readFileSync(r.path, 'utf8') === placeholder(r.path)) unlinkSync(r.path);
    } catch {
      // Already gone, or changed by the owner meanwhile: theirs now.
    }
  }
  return said;
}
