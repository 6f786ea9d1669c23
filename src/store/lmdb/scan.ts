/**
 * The LMDB store file read whole, and written into on a copy, by a child
 * process (scan-worker.ts) before the host opens it: LMDB keeps no checksums
 * of its pages, and a damaged page can make a reader crash (SIGSEGV, SIGBUS)
 * or loop, and a page that reads survive can still crash a write into it.
 * For `vault check`, a backup and a restore, and the host's start.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processRunning } from '../../kernel/process.js';
import { readFailure } from './failures.js';
import { takeKnownGood } from './known-good.js';

/** How long the whole-store read may take before it counts as a hang on a damaged page. */
const SCAN_TIMEOUT_MS = Number(process.env.VAULT_CHECK_SCAN_MS ?? '60000');

/**
 * Removes the scratch copies (`.check-<pid>`, scan-worker.ts) of workers
 * that no longer run: a worker killed with its host leaves a whole copy of
 * the store behind, and nothing else would ever remove it.
 */
function removeDeadScratch(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^\.check-([0-9]+)$/.exec(name)?.[1];
    if (pid === undefined || processRunning(Number(pid))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/**
 * Reads the whole store file in a child process: null when it survives, else what went wrong.
 * @throws VaultError VLT-3004 when the disk fails to read the file (EIO): a fault of the disk, not damage
 */
export function scanInChild(
  storePath: string,
  writes = true,
  /** Nothing else writes the store meanwhile (the host's start, under its lock). */
  alone = false,
): Promise<string | null> {
  // Built, the worker is scan-worker.js beside this file; run from source (tests), the .ts through tsx.
  // (From source, the built worker when there is one: tsx costs the child half a second.)
  const here = fileURLToPath(import.meta.url);
  const built = here.replace(
    /\/src\/store\/lmdb\/scan\.ts$/,
    '/dist/src/store/lmdb/scan-worker.js',
  );
  const args = !here.endsWith('.ts')
    ? [here.replace(/scan\.js$/, 'scan-worker.js'), storePath]
    : existsSync(built)
      ? [built, storePath]
      : ['--import', 'tsx', here.replace(/scan\.ts$/, 'scan-worker.ts'), storePath];
  if (!writes) args.push('--read-only');
  else if (alone) args.push('--alone');
  removeDeadScratch(dirname(storePath));
  return new Promise((resolve, reject) => {
    // stdin stays open, unused: the worker learns from its end that this process died.
    const child = spawn(process.execPath, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), SCAN_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // A probe that crashed left its scratch copy (scan-worker.ts names it by its pid).
      if (child.pid !== undefined) {
        rmSync(join(dirname(storePath), `.check-${child.pid}`), { recursive: true, force: true });
      }
      const doing = /^read [0-9]+/.test(out) ? 'writing into it' : 'reading it';
      const fault = /^fault (E[A-Z]+)\n/.exec(out)?.[1];
      if (code === 0 && /(^|\n)ok [0-9]+\n$/.test(out)) resolve(null);
      else if (fault !== undefined) reject(readFailure(fault));
      else if (signal === 'SIGKILL') resolve(`${doing} did not finish (a damaged page loops)`);
      else if (signal !== null) resolve(`${doing} crashed (${signal})`);
      else {
        const said = out
          .replace(/^read [0-9]+\n/, '')
          .trim()
          .slice(0, 80);
        resolve(`${doing} failed (${said || `exit ${code}`})`);
      }
    });
  });
}

/**
 * The host's start (nothing else writes the store meanwhile, under its lock):
 * no scan when the file is byte for byte the one a host closed cleanly
 * (known-good.ts: read whole and hashed here, about 0.2 s for 300 MB, against
 * the full scan's 14 s at 100,000 entries), else the full scan in a child.
 * @throws VaultError VLT-3004 when the disk fails to read the file (EIO): a fault of the disk, not damage
 */
export function scanAtStart(
  storePath: string,
  log: (line: string) => void = () => {},
): Promise<string | null> {
  removeDeadScratch(dirname(storePath));
  if (takeKnownGood(storePath)) {
    log('the store file is the one the last host closed cleanly: not scanned again');
    return Promise.resolve(null);
  }
  return scanInChild(storePath, true, true);
}
