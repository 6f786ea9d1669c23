/**
 * What the host holds of requests it has not answered yet, bounded (issue 29:
 * 100 connections each holding most of a 4 MiB body grew a host by 300 MB).
 * Each request keeps its first FREE_BYTES without asking; what it keeps beyond
 * that (a large value, up to the 4 MiB body limit) is drawn from one pool for
 * the whole host, and given back once the request is answered or its
 * connection closes. A request the pool cannot hold is refused (VLT-3012)
 * instead of growing the host. And one connecting process keeps at most
 * MAX_PER_PEER connections open: past that its requests are refused, so one
 * process cannot hold every file descriptor of the host either.
 *
 * Held bytes are then at most POOL_BYTES + FREE_BYTES per open connection:
 * a small owner command (a passphrase, a name) never needs the pool, so an
 * agent filling it delays no owner `agent lock`.
 */
/** The largest request body (or channel frame) the host reads. */
export const MAX_BODY = 4 * 1024 * 1024;
/** What a request keeps of its body without drawing on the pool. */
export const FREE_BYTES = 16 * 1024;
/** What all requests together may keep beyond FREE_BYTES each. */
export const POOL_BYTES = 32 * 1024 * 1024;
/** Connections one process (kernel pid and uid) may hold open at once. */
export const MAX_PER_PEER = 128;
/** One request's share of the pool. */
export class Held {
    bytes = 0;
}
export class Intake {
    #pooled = 0;
    #peers = new Map();
    /**
     * Lets `held` keep `size` bytes of body in all: false (and nothing taken)
     * when the pool cannot hold what that needs beyond FREE_BYTES.
     */
    keep(held, size) {
        const need = Math.max(0, size - FREE_BYTES) - held.bytes;
        if (need <= 0)
            return true;
        if (this.#pooled + need > POOL_BYTES)
            return false;
        this.#pooled += need;
        held.bytes += need;
        return true;
    }
    /** Gives back what `held` took; safe to call more than once. */
    release(held) {
        this.#pooled -= held.bytes;
        held.bytes = 0;
    }
    /** Counts a connection of `peer`; false when that peer already holds MAX_PER_PEER. */
    connect(peer) {
        const n = this.#peers.get(peer) ?? 0;
        this.#peers.set(peer, n + 1);
        return n < MAX_PER_PEER;
    }
    disconnect(peer) {
        const n = (this.#peers.get(peer) ?? 1) - 1;
        if (n <= 0)
            this.#peers.delete(peer);
        else
            this.#peers.set(peer, n);
    }
}
