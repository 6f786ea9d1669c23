export class Crowd {
    budget;
    perPeer;
    /** Each holder's connections, oldest first (a Set keeps insertion order). */
    #byPeer = new Map();
    #count = 0;
    /**
     * `budget()` is asked at each connection: what the host may hold on this
     * socket now; `perPeer`, what one holder may hold of it.
     */
    constructor(budget, perPeer = Infinity) {
        this.budget = budget;
        this.perPeer = perPeer;
    }
    get size() {
        return this.#count;
    }
    /**
     * Counts `socket` for `peer`; past `perPeer`, closes that holder's oldest
     * connections, and past the budget, the largest holder's.
     */
    add(peer, socket) {
        let held = this.#byPeer.get(peer);
        if (held === undefined) {
            held = new Set();
            this.#byPeer.set(peer, held);
        }
        held.add(socket);
        this.#count++;
        while (held.size > this.perPeer) {
            const [oldest] = held;
            if (oldest === undefined)
                break;
            this.remove(peer, oldest);
            oldest.destroy();
        }
        while (this.#count > this.budget()) {
            const [victimPeer, victims] = this.#largest();
            const [oldest] = victims;
            if (oldest === undefined)
                break;
            // Taken off the count now: its close event comes later, and would let this loop close more.
            this.remove(victimPeer, oldest);
            oldest.destroy();
        }
    }
    /** Forgets `socket`; safe to call again once it has gone. */
    remove(peer, socket) {
        const held = this.#byPeer.get(peer);
        if (held?.delete(socket) !== true)
            return;
        this.#count--;
        if (held.size === 0)
            this.#byPeer.delete(peer);
    }
    #largest() {
        let best = ['', new Set()];
        for (const entry of this.#byPeer)
            if (entry[1].size > best[1].size)
                best = entry;
        return best;
    }
}
