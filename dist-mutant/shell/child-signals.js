/**
 * A supervised child's signals and fate, with a pty or without: the signals
 * passed on to it (and the escalation to SIGKILL when the supervisor is asked
 * to stop), the status a shell would report, and its process groups as
 * /proc names them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { constants } from 'node:os';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
/** Signals that mean "the supervisor is asked to stop": forwarded, then escalated. */
const STOPPING = new Set(['SIGTERM', 'SIGHUP']);
export function signalName(n) {
    const found = Object.entries(constants.signals).find(([, v]) => v === n);
    return found === undefined ? null : found[0];
}
/** The status a shell reports for an exit: the code, or 128 + the signal's number. */
export function exitStatus(exitCode, signal) {
    return signal > 0 ? 128 + signal : exitCode;
}
/**
 * Forwards the signals in FORWARDED arriving at `signals` to the child with
 * `deliver`. A stopping one (SIGTERM, SIGHUP) also calls `stop`, and the first
 * starts the escalation: `kill` after `afterMs`. Returns what undoes it all.
 */
export function forwardSignals(signals, afterMs, to) {
    let escalation;
    const handlers = FORWARDED.map((sig) => {
        const h = () => {
            to.deliver(sig);
            if (STOPPING.has(sig))
                to.stop?.();
            if (STOPPING.has(sig) && escalation === undefined)
                escalation = setTimeout(to.kill, afterMs);
        };
        signals.on(sig, h);
        return [sig, h];
    });
    return () => {
        clearTimeout(escalation);
        for (const [sig, h] of handlers)
            signals.off(sig, h);
    };
}
/** The command as the result names it. */
export function commandLine(o) {
    return [o.file, ...o.args].join(' ');
}
/** The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session. */
function procStat(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return { ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]) };
    }
    catch {
        return null;
    }
}
/**
 * The sandbox's job without a terminal: the sandbox (`leader`) is a session
 * of its own, its script runs in the leader's group and starts the agent as a
 * job, a group of its own; that group is the one a terminal would signal. Null
 * when there is none (yet, or any more).
 */
export function jobGroup(leader) {
    const procs = new Map();
    for (const d of readdirSync('/proc')) {
        if (!/^[0-9]+$/.test(d))
            continue;
        const st = procStat(d);
        if (st !== null && st.session === leader)
            procs.set(Number(d), st);
    }
    for (const [pid, st] of procs)
        if (pid !== leader && st.pgrp === pid && procs.get(st.ppid)?.pgrp === leader)
            return pid;
    return null;
}
/** Sends `sig` to process group `group`; false when there is none. */
export function signalGroup(group, sig) {
    try {
        process.kill(-group, sig);
        return true;
    }
    catch {
        return false;
    }
}
