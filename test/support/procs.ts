// The machine's process table as the tests read it (/proc): what a child left
// running, found by a marker no other process carries in its command line.
import { spawnSync } from 'node:child_process';
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

/** A process's memory as /proc/<pid>/status gives it, in bytes (RssAnon + RssFile = VmRSS). */
export interface Memory {
  readonly rss: number;
  /** Heap, stacks, buffers: the process's own. */
  readonly anon: number;
  /** Mapped files: the binary, its libraries, a mapped store. */
  readonly file: number;
  /** The peak RSS so far. */
  readonly hwm: number;
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) =>
    Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
}

/** The bytes of `file`'s mappings resident in process `pid` (/proc/<pid>/smaps). */
export function residentOf(pid: number, file: string): number {
  let total = 0;
  let inFile = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`);
    else if (inFile && line.startsWith('Rss:')) total += Number(/(\d+) kB/.exec(line)?.[1]) * 1024;
  }
  return total;
}

/**
 * The memory bound docs/benchmarks.md states for an LMDB host under a
 * sustained audit log (issue 42), in MiB: its anonymous memory, and the
 * store's pages resident in it (the rest of its file-backed memory is the
 * node binary and its libraries, at most their size). A team host has none
 * that holds whatever the log's length: its mirror keeps every row.
 */
export const HOST_BOUND = { anonMiB: 128, storeMiB: 4 } as const;

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ). */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** CPU time (user + system) a process has used so far, in ms; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after "(comm)": state is the first, utime the 12th, stime the 13th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
  } catch {
    return 0;
  }
}
