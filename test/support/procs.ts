// The machine's process table as the tests read it (/proc): what a child left
// running, found by a marker no other process carries in its command line.
import { readFileSync, readdirSync } from 'node:fs';

/** The pids whose command line holds `marker`, zombies included. */
export function pidsWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^[0-9]+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether `pid` is a zombie or gone: nothing of it runs. */
export function zombie(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** The pids whose command line holds `marker` and that still run (no zombie). */
export function livePidsWith(marker: string): number[] {
  return pidsWith(marker).filter((p) => !zombie(p));
}
