import { peerCred } from '../../kernel/unix.js';
import { processOf } from '../owner/unlock.js';
/** The caller of `socket`, read now (at accept); null off Linux, where the kernel names none. */
export function callerAt(socket, proc = '/proc') {
    let peer;
    try {
        peer = peerCred(socket);
    }
    catch {
        return null;
    }
    return { peer, start: processOf(peer, proc)?.start ?? null };
}
/** Whether the caller's pid still names the process that connected (not one that reused it). */
export function stillConnected(c, proc = '/proc') {
    return c.start !== null && processOf(c.peer, proc)?.start === c.start;
}
