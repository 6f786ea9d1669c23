/**
 * Callers the host has authenticated, kept between requests: the one place
 * unsealed agent key material outlives a request. A proxy sends the same
 * token on every fill of a tunnel; without this each fill derived the token's
 * keys, unwrapped the agent's secret key and opened the index key and the
 * grants again (X25519 opens and a guarded allocation per request).
 *
 * What it keeps, per token (looked up by a keyed hash of it, never by the
 * token): the agent's (or session's) key pair, index key, the grants' data
 * keys opened so far (by the sealed box they came from, so a re-granted key,
 * as every rotation makes, is opened afresh), and the verifier the token
 * matched. What it never decides:
 * every use is checked against the records as they are now (`valid`, by the
 * caller), and every rule (revocation, lock, scope, limits, host binding) is
 * still judged per request inside the request's transaction (access.ts).
 *
 * Invalidation: an entry whose record no longer matches is dropped on its
 * next use; `clear` drops everything (the host calls it on every change to
 * an agent or session, and when it stops); entries unused for IDLE_MS, or
 * beyond MAX_CALLERS, are dropped. Dropping wipes the keys once no request
 * is using them.
 *
 * This class is the only cache of a caller's keys (turn it off: `enabled`).
 */
import { wipe } from '../../crypto/aead.js';
import { openSealed } from '../../crypto/box.js';
import { keyedHash } from '../../crypto/hash.js';
/** How long an unused caller's keys stay unsealed. */
export const IDLE_MS = 60_000;
/** Callers kept at most; the least recently used goes first. */
const MAX_CALLERS = 256;
/** Opened boxes kept per caller (a re-granted key leaves an old one behind until then). */
const MAX_OPENED = 64;
/** Name-index rows kept per caller: names it guesses are not kept past this. */
const MAX_ROWS = 64;
class Cached {
    keys;
    arena;
    uses = 0;
    dropped = false;
    lastUsed;
    opened = new Map();
    /**
     * The rows of names this caller looked up in its name index (keyed hashes
     * under its index key, which never changes for a kept caller): a proxy
     * names the same entries fill after fill.
     */
    rows = new Map();
    /**
     * Keys pushed out of `opened` while a request may still hold them (a request
     * of more than MAX_OPENED entries opens them all before it decrypts): wiped
     * once no request borrows this caller.
     */
    retired = [];
    constructor(keys, 
    /** Guarded memory holding `keys`' secret key and index key. */
    arena, now) {
        this.keys = keys;
        this.arena = arena;
        this.lastUsed = now;
    }
    /** The key sealed in `box`, opened once (guarded memory of its own); null when it does not open. */
    unseal(box) {
        const id = box.toString('base64');
        const known = this.opened.get(id);
        if (known !== undefined)
            return known;
        const key = openSealed(this.keys.keys, box, true);
        if (key === null)
            return null;
        if (this.opened.size >= MAX_OPENED)
            this.#retireOpened();
        this.opened.set(id, key);
        return key;
    }
    /** `name`'s row in this caller's index: `compute`d once, then kept (up to MAX_ROWS names). */
    row(name, compute) {
        const kept = this.rows.get(name);
        if (kept !== undefined)
            return kept;
        const r = compute(name);
        if (this.rows.size < MAX_ROWS)
            this.rows.set(name, r);
        return r;
    }
    #retireOpened() {
        this.retired.push(...this.opened.values());
        this.opened.clear();
        if (this.uses === 0)
            this.wipeRetired();
    }
    wipeRetired() {
        for (const k of this.retired)
            wipe(k);
        this.retired = [];
    }
    #wipeOpened() {
        for (const k of this.opened.values())
            wipe(k);
        this.opened.clear();
        this.wipeRetired();
    }
    wipe() {
        this.#wipeOpened();
        this.rows.clear();
        wipe(this.keys.keys.secretKey, this.keys.indexKey);
        this.arena.wipe();
    }
}
export class CallerCache {
    #entries = new Map();
    #now;
    #sweeper = null;
    /** Off: nothing is kept, every request authenticates in full (as before this cache). */
    enabled = true;
    constructor(now = Date.now) {
        this.#now = now;
    }
    #id(token) {
        return keyedHash(null, 'vault-cli caller cache', token).toString('base64');
    }
    /**
     * The cached keys of `token`, lent to one request, when `valid` says the
     * records still match them; null otherwise (a stale entry is dropped).
     */
    borrow(token, valid) {
        if (!this.enabled)
            return null;
        this.#sweep();
        const id = this.#id(token);
        const c = this.#entries.get(id);
        if (c === undefined)
            return null;
        if (!valid(c.keys)) {
            this.#drop(id, c);
            return null;
        }
        // Most recently used last, for eviction.
        this.#entries.delete(id);
        this.#entries.set(id, c);
        c.lastUsed = this.#now();
        c.uses++;
        let returned = false;
        return {
            keys: c.keys,
            unseal: (box) => c.unseal(box),
            row: (name, compute) => c.row(name, compute),
            done: () => {
                if (returned)
                    return;
                returned = true;
                c.uses--;
                if (c.uses === 0)
                    c.wipeRetired();
                if (c.dropped && c.uses === 0)
                    c.wipe();
            },
        };
    }
    /** Keeps a token's keys (which now belong to the cache), lent at once to the request that opened them. */
    keep(token, keys, arena) {
        const id = this.#id(token);
        const old = this.#entries.get(id);
        if (old !== undefined)
            this.#drop(id, old);
        while (this.#entries.size >= MAX_CALLERS) {
            const [oldest, c] = this.#entries.entries().next().value;
            this.#drop(oldest, c);
        }
        this.#entries.set(id, new Cached(keys, arena, this.#now()));
        // Keys of callers gone quiet are wiped even when no request comes to sweep them.
        this.#sweeper ??= setInterval(() => {
            this.#sweep();
            if (this.#entries.size === 0 && this.#sweeper !== null) {
                clearInterval(this.#sweeper);
                this.#sweeper = null;
            }
        }, IDLE_MS / 4).unref();
        return this.borrow(token, () => true);
    }
    /** Drops every caller: the next request of each authenticates in full. */
    clear() {
        for (const [id, c] of [...this.#entries])
            this.#drop(id, c);
    }
    get size() {
        return this.#entries.size;
    }
    #sweep() {
        const old = this.#now() - IDLE_MS;
        for (const [id, c] of this.#entries) {
            if (c.lastUsed > old)
                break;
            this.#drop(id, c);
        }
    }
    #drop(id, c) {
        if (this.#entries.get(id) === c)
            this.#entries.delete(id);
        c.dropped = true;
        if (c.uses === 0)
            c.wipe();
    }
}
