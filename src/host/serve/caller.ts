/**
 * A caller is the process that connected, for the life of the connection.
 * SO_PEERCRED names the pid the kernel recorded at connect, but that pid may
 * later name another process: the connector passes the connected socket on
 * (SCM_RIGHTS) and exits, and whoever holds the socket waits until the pid is
 * reused, by the owner's next command on the unlocked terminal or by a
 * `sweep` that holds the owner key. So the connector's start time is read
 * once, when the connection is accepted, and the caller's terminal (for an
 * owner session) or process (for a process hold) is looked up only while the
 * pid still names that same process; after that the connection has neither.
 */
import type { Socket } from 'node:net';
import { peerCred, type PeerCred } from '../../kernel/unix.js';
import { processOf } from '../owner/unlock.js';

/** The process at the other end of a connection, as it was when the host accepted it. */
export interface Caller {
  readonly peer: PeerCred;
  /** Its start time then (clock ticks since boot); null when the host could not see it. */
  readonly start: string | null;
}

/** The caller of `socket`, read now (at accept); null off Linux, where the kernel names none. */
export function callerAt(socket: Socket, proc = '/proc'): Caller | null {
  let peer: PeerCred;
  try {
    peer = peerCred(socket);
  } catch {
    return null;
  }
  return { peer, start: processOf(peer, proc)?.start ?? null };
}

/** Whether the caller's pid still names the process that connected (not one that reused it). */
export function stillConnected(c: Caller, proc = '/proc'): boolean {
  return c.start !== null && processOf(c.peer, proc)?.start === c.start;
}
