/**
 * A header list as it was received: Node's `rawHeaders` (`[name, value,
 * name, value, ...]`) with order, case and duplicates kept, and the few
 * operations the proxy performs on it. Every operation returns a new view;
 * the list underneath is never changed, so the client's own headers can be
 * read again after the outgoing ones are built from them.
 *
 * Names are compared without regard to case; the length is compared first,
 * since lower-casing every name of every request showed in profiles.
 */
/** RFC 9110 7.6.1 and the proxy-specific ones: never forwarded as received. */
const HOP_BY_HOP = new Set([
    'connection',
    'keep-alive',
    'proxy-connection',
    'proxy-authenticate',
    'proxy-authorization',
    'te',
    'trailer',
    'transfer-encoding',
    'upgrade',
]);
/** Whether `name` is `lower` (a lower-case name) in any case. */
export function isNamed(name, lower) {
    return name.length === lower.length && name.toLowerCase() === lower;
}
export class RawHeaders {
    #raw;
    /** A view over `raw` (not copied: it must not change afterwards). A trailing odd name is ignored. */
    constructor(raw = []) {
        this.#raw = raw;
    }
    /** A view over a list given either way: a view as it is, a flat array wrapped. */
    static of(h) {
        return h instanceof RawHeaders ? h : new RawHeaders(h);
    }
    /** How many headers (not names) the list holds. */
    get size() {
        return this.#raw.length >> 1;
    }
    *[Symbol.iterator]() {
        const raw = this.#raw;
        for (let i = 0; i + 1 < raw.length; i += 2)
            yield [raw[i], raw[i + 1]];
    }
    /** Every value of the header `name` (any case), in order. */
    all(name) {
        const lower = name.toLowerCase();
        const out = [];
        for (const [n, v] of this)
            if (isNamed(n, lower))
                out.push(v);
        return out;
    }
    /** The header's value, or null when it is absent; several are joined by `, ` (RFC 9110 5.3). */
    get(name) {
        const values = this.all(name);
        return values.length === 0 ? null : values.join(', ');
    }
    has(name) {
        return this.all(name).length > 0;
    }
    /** Whether any value satisfies `test`. */
    someValue(test) {
        const raw = this.#raw;
        for (let i = 1; i < raw.length; i += 2)
            if (test(raw[i]))
                return true;
        return false;
    }
    /** The headers whose lower-case name satisfies `keep`. */
    filter(keep) {
        const out = [];
        for (const [n, v] of this)
            if (keep(n.toLowerCase(), n))
                out.push(n, v);
        return new RawHeaders(out);
    }
    /** The list without the named headers (any case). */
    delete(...names) {
        const lower = new Set(names.map((n) => n.toLowerCase()));
        return this.filter((n) => !lower.has(n));
    }
    /**
     * An injected header: every header of that name (any case) is dropped and
     * this one is added at the end, so no received copy can sit beside it.
     */
    set(name, value) {
        return new RawHeaders([...this.delete(name).#raw, name, value]);
    }
    /** The same list with every value passed through `map`. */
    mapValues(map) {
        const out = [];
        for (const [n, v] of this)
            out.push(n, map(v, n));
        return new RawHeaders(out);
    }
    /** Names listed in every `Connection` header, lower case. */
    connectionNamed() {
        const named = new Set();
        for (const v of this.all('connection')) {
            for (const n of v.split(',')) {
                const t = n.trim().toLowerCase();
                if (t !== '')
                    named.add(t);
            }
        }
        return named;
    }
    /**
     * Without hop-by-hop headers and those the `Connection` headers name: what
     * may go on to the next hop. `keepUpgrade` keeps `Upgrade` and adds
     * `Connection: Upgrade` (a WebSocket handshake).
     */
    withoutHopByHop(keepUpgrade = false) {
        const named = this.connectionNamed();
        const kept = this.filter((n) => (keepUpgrade && n === 'upgrade') || !(HOP_BY_HOP.has(n) || named.has(n)));
        return keepUpgrade ? new RawHeaders([...kept.#raw, 'Connection', 'Upgrade']) : kept;
    }
    /**
     * The flat list, as node:http takes it. The view's own array: node:http
     * only reads it, and nothing else may change it.
     */
    toArray() {
        return this.#raw;
    }
}
