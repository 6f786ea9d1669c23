/**
 * The host's file descriptors, a resource every caller shares: what the
 * process may hold, and what no crowd of connections may take from it.
 */
import { readFileSync } from 'node:fs';
/** Descriptors no crowd of connections may take: the store, the audit log, a new owner command. */
export const FD_RESERVE = 512;
/** This process's limit of open descriptors (Linux: /proc/self/limits), else the common default. */
export function openFileLimit() {
    try {
        const line = /^Max open files\s+([0-9]+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
        if (line?.[1] !== undefined)
            return Number(line[1]);
    }
    catch {
        // Not Linux: assume the usual soft limit.
    }
    return 1024;
}
