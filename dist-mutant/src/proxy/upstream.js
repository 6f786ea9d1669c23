/**
 * Upstream TLS connections for requests inside CONNECT tunnels.
 *
 * A tunnel's requests come one after another and all go to its target, so
 * each tunnel keeps the connection its last request used and gives it to the
 * next, instead of asking a shared `https.Agent` every time: the agent's pool
 * bookkeeping (a name per request, free lists, moves between them) was a
 * fifth of the proxy's time per request when measured at concurrency 1. When
 * a tunnel ends, its connection goes to a small shared pool, where the next
 * tunnel of the same caller to the same target finds it warm; a new
 * connection resumes a TLS session with that target when one is known.
 *
 * The pool is keyed by caller as well as target: a connection one caller
 * used is never lent to another, so whatever state it could carry (a parser
 * left mid-message, an upstream's idea of who is on it) stays that caller's.
 * A pooled connection's idle timer is one listener set when it is opened;
 * pooling only arms it. A request that finds its
 * tunnel's connection busy (a client pipelining) takes another.
 *
 * Each request on a connection is an `Exchange` (exchange.ts), which hands
 * the connection back with `give` when it is reusable, and asks for a
 * `fresh` one when a kept-alive connection closed under a request it may
 * send again. A fresh connection goes to the address the failed one was
 * connected to, not to a new lookup of the name: the value filled for that
 * request goes nowhere its first attempt was not going.
 *
 * An idle connection the upstream has ended (its idle timeout) is never
 * handed out: it is dropped when its end is read, and checked again when it
 * is taken, so the race with a close left is the one in flight.
 */
import { isIP } from 'node:net';
import { connect } from 'node:tls';
/** Idle connections kept across tunnels, all targets together. */
const POOL_MAX = 64;
/** How long a pooled connection may stay idle. */
const POOL_IDLE_MS = 30_000;
/** TLS sessions remembered for resumption. */
const SESSIONS_MAX = 256;
/** The proxy's upstream connections: who holds each, the shared pool, TLS sessions. */
export class Upstreams {
    #trust;
    #lookupFor;
    #pool = new Map();
    #pooled = 0;
    #sessions = new Map();
    /** The tunnel a connection is lent to, if any. */
    #holder = new WeakMap();
    /** The address each connection reached (known once it is up): where a retry goes. */
    #address = new WeakMap();
    #closed = false;
    /** `trust`: what upstream certificates are verified against; `lookupFor`: see LookupFor. */
    constructor(trust, lookupFor = () => undefined) {
        this.#trust = trust;
        this.#lookupFor = lookupFor;
    }
    /**
     * The connection holder of one tunnel to `host:port` opened by `caller`
     * (its token; null for the proxy's own identity).
     */
    forTunnel(host, port, caller) {
        return new TunnelUpstream(this, host, port, poolKey(host, port, caller));
    }
    /** Ends every pooled connection; those in use end when handed back. */
    close() {
        this.#closed = true;
        for (const list of this.#pool.values())
            for (const s of list)
                s.destroy();
        this.#pool.clear();
        this.#pooled = 0;
    }
    /** @internal A connection to `host:port` lent to `holder`: one pooled under `key`, else a new one. */
    lend(holder, host, port, key) {
        const s = this.#fromPool(key) ?? this.#open(host, port, key);
        this.#holder.set(s, holder);
        return s;
    }
    /**
     * @internal A new connection lent to `holder`, to the address `failed`
     * reached (to `host` when that is not known: it never got that far).
     */
    reopen(holder, failed, host, port, key) {
        const s = this.#open(host, port, key, this.#address.get(failed));
        this.#holder.set(s, holder);
        return s;
    }
    /** @internal A connection nobody holds any more: pooled while there is room. */
    release(s, key) {
        this.#holder.delete(s);
        const list = this.#pool.get(key) ?? [];
        if (this.#closed || !usable(s) || this.#pooled >= POOL_MAX) {
            s.destroy();
            return;
        }
        list.push(s);
        this.#pool.set(key, list);
        this.#pooled++;
        // Arms the one 'timeout' listener #open set; adds none.
        s.setTimeout(POOL_IDLE_MS);
        s.unref();
    }
    #fromPool(key) {
        const list = this.#pool.get(key);
        while (list !== undefined && list.length > 0) {
            const s = list.pop();
            this.#pooled--;
            if (list.length === 0)
                this.#pool.delete(key);
            if (!usable(s)) {
                s.destroy();
                continue;
            }
            s.setTimeout(0);
            s.ref();
            return s;
        }
        return null;
    }
    #unpool(s, key) {
        const list = this.#pool.get(key);
        const i = list?.indexOf(s) ?? -1;
        if (list === undefined || i === -1)
            return;
        list.splice(i, 1);
        this.#pooled--;
        if (list.length === 0)
            this.#pool.delete(key);
    }
    /**
     * A new connection to `host:port`; to `address` when given, with the
     * certificate still checked against `host` (SNI and identity go by
     * `servername` when there is one, else by the address, which is then `host`).
     */
    #open(host, port, key, address) {
        const target = `${host}:${port}`;
        // An address already reached passed the lookup's checks (a sandboxed session's) then.
        const lookup = address === undefined ? this.#lookupFor(host, port) : undefined;
        const s = connect({
            host: address ?? host,
            port,
            ...(lookup === undefined ? {} : { lookup }),
            servername: isIP(host) === 0 ? host : undefined,
            secureContext: this.#trust,
            session: this.#sessions.get(target),
            ALPNProtocols: ['http/1.1'],
        });
        s.setNoDelay(true);
        s.once('secureConnect', () => {
            const reached = s.remoteAddress;
            if (reached !== undefined)
                this.#address.set(s, reached);
        });
        s.on('session', (session) => {
            this.#sessions.delete(target);
            this.#sessions.set(target, session);
            if (this.#sessions.size > SESSIONS_MAX) {
                const oldest = this.#sessions.keys().next().value;
                if (oldest !== undefined)
                    this.#sessions.delete(oldest);
            }
        });
        // While idle, nobody else listens: an error then just ends it.
        s.on('error', () => {
            this.#sessions.delete(target);
            s.destroy();
        });
        // Only ever armed while the connection sits in the pool (release).
        s.on('timeout', () => s.destroy());
        s.on('close', () => {
            this.#holder.get(s)?.forget(s);
            this.#unpool(s, key);
        });
        return s;
    }
}
/** One tunnel's hold on upstream connections. */
export class TunnelUpstream {
    #idle = null;
    #ended = false;
    #upstreams;
    #host;
    #port;
    #key;
    /** @internal Made by `Upstreams.forTunnel`. */
    constructor(upstreams, host, port, key) {
        this.#upstreams = upstreams;
        this.#host = host;
        this.#port = port;
        this.#key = key;
    }
    /** The connection for this tunnel's next request. */
    take() {
        const kept = this.#idle;
        this.#idle = null;
        if (kept !== null) {
            if (usable(kept))
                return kept;
            kept.destroy();
        }
        return this.#upstreams.lend(this, this.#host, this.#port, this.#key);
    }
    /** A new connection, for a request its kept-alive one failed before any reply (exchange.ts). */
    fresh(failed) {
        return this.#upstreams.reopen(this, failed, this.#host, this.#port, this.#key);
    }
    /** The tunnel ended: its idle connection goes to the shared pool. */
    end() {
        this.#ended = true;
        const kept = this.#idle;
        this.#idle = null;
        if (kept !== null)
            this.#upstreams.release(kept, this.#key);
    }
    /**
     * A connection of ours whose exchange left it reusable: kept for the
     * tunnel's next request, else (the tunnel ended, or it keeps another)
     * given to the shared pool.
     */
    give(s) {
        if (!this.#ended && this.#idle === null && !s.destroyed) {
            this.#idle = s;
            return;
        }
        this.#upstreams.release(s, this.#key);
    }
    /** @internal A connection of ours closed. */
    forget(s) {
        if (this.#idle === s)
            this.#idle = null;
    }
}
/** Whether an idle connection can carry a request: not ended by the upstream, not closed. */
function usable(s) {
    return !s.destroyed && s.writable && !s.readableEnded;
}
/**
 * Where a caller's idle connections to a target wait. A NUL cannot be in a
 * token read from Proxy-Authorization, a host or a port, so no two callers
 * share a key.
 */
function poolKey(host, port, caller) {
    return `${caller === null ? '-' : `+${caller}`}\0${host}:${port}`;
}
