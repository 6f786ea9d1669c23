/**
 * The main socket's connections, by the process that holds them. Intake caps
 * one process at MAX_PER_PEER connections; many processes together (an agent
 * with a shell forks 100 of them) could still hold every descriptor the host
 * has, and the owner's next command would find no way in. So the main socket
 * has a budget too, and a connection past it is paid for by the process
 * holding the most: its oldest connection is closed. The owner's command, one
 * connection, is never the largest holder while a crowd is there, so it gets
 * in; the crowd starves only itself.
 */
import type { Socket } from 'node:net';

export class Crowd {
  /** Each holder's connections, oldest first (a Set keeps insertion order). */
  readonly #byPeer = new Map<string, Set<Socket>>();
  #count = 0;

  /**
   * `budget()` is asked at each connection: what the host may hold on this
   * socket now; `perPeer`, what one holder may hold of it.
   */
  constructor(
    private readonly budget: () => number,
    private readonly perPeer = Infinity,
  ) {}

  get size(): number {
    return this.#count;
  }

  /**
   * Counts `socket` for `peer`; past `perPeer`, closes that holder's oldest
   * connections, and past the budget, the largest holder's.
   */
  add(peer: string, socket: Socket): void {
    let held = this.#byPeer.get(peer);
    if (held === undefined) {
      held = new Set();
      this.#byPeer.set(peer, held);
    }
    held.add(socket);
    this.#count++;
    while (held.size > this.perPeer) {
      const [oldest] = held;
      if (oldest === undefined) break;
      this.remove(peer, oldest);
      oldest.destroy();
    }
    while (this.#count > this.budget()) {
      const [victimPeer, victims] = this.#largest();
      const [oldest] = victims;
      if (oldest === undefined) break;
      // Taken off the count now: its close event comes later, and would let this loop close more.
      this.remove(victimPeer, oldest);
      oldest.destroy();
    }
  }

  /** Forgets `socket`; safe to call again once it has gone. */
  remove(peer: string, socket: Socket): void {
    const held = this.#byPeer.get(peer);
    if (held?.delete(socket) !== true) return;
    this.#count--;
    if (held.size === 0) this.#byPeer.delete(peer);
  }

  #largest(): [string, Set<Socket>] {
    let best: [string, Set<Socket>] = ['', new Set()];
    for (const entry of this.#byPeer) if (entry[1].size > best[1].size) best = entry;
    return best;
  }
}
