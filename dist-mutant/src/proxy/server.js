/**
 * The reference-resolving proxy: HTTPS by CONNECT (TLS terminated with a leaf
 * from the local CA, re-originated to the real host with its certificate
 * verified), plain HTTP by absolute-form requests, WebSocket upgrades.
 *
 * This file wires the pieces and carries out their decisions: routing.ts
 * says where a request goes, policy.ts what may be filled and where,
 * forward.ts builds what goes upstream, tunnel.ts and upgrade.ts serve
 * CONNECT and WebSocket, refusal.ts answers a refusal.
 *
 * Invariants this file guards:
 * - Nothing goes upstream before every reference in the request's headers has
 *   been resolved by the host (one `resolve` per request, so a rotation is
 *   seen on the next request) and every check has passed; a refusal is an
 *   HTTP error whose body names the VLT code.
 * - Injected headers always win (forward.ts); bodies stream both ways with
 *   back-pressure; a response echoing an injected value gets the reference
 *   back (scrub.ts).
 * - It serves no API and no page: a request addressed to the proxy itself is
 *   refused.
 */
import { createServer } from 'node:http';
import { createSecureContext } from 'node:tls';
import { VaultError } from '../core/errors.js';
import { Exchange, parserProblem } from './exchange.js';
import { ClientForwarder, clientBody, decoderFor, isReplayable, requestHead, responseHeaders, sendBody, wipeValues, } from './forward.js';
import { fill, framingProblem } from './headers.js';
import { confinedLookup, isLocalHost, loopbackAddress } from './local.js';
import { callerOf, countedRefusal, isConfined, onThisMachine, planFill, planResponse, plainHttpRefusal, replacementsFor, unsafeValueRefusal, upgradeDrops, withRefs, } from './policy.js';
import { RawHeaders } from './raw-headers.js';
import { asRefusal, rawError, reply, upstreamFailure } from './refusal.js';
import { Relay } from './relay.js';
import { routeConnect, routeRequest } from './routing.js';
import { Scavenger } from './scavenge.js';
import { resign, surrogateSigned } from './sigv4.js';
import { Tunnels } from './tunnel.js';
import { Upstreams } from './upstream.js';
import { isWebSocket, relayUpgrade } from './upgrade.js';
export { proxyUrl } from './caller.js';
export { parseAuthority } from './routing.js';
export { hostMismatch } from './policy.js';
/** How long a caller token the host accepted opens tunnels without asking again. */
export const ADMIT_FOR_MS = 30_000;
const ADMITTED_MAX = 1024;
const SERVER_OPTIONS = {
    requestTimeout: 0,
    headersTimeout: 60_000,
    keepAliveTimeout: 30_000,
    // Only a WebSocket handshake is an upgrade. Any other (h2c, TLS upgrade)
    // is an ordinary request whose Upgrade is dropped as hop-by-hop: the
    // upstream answers it in HTTP/1.1, and no protocol the proxy cannot read
    // (and so cannot scrub) runs over a connection it relays.
    shouldUpgradeCallback: (req) => isWebSocket(req.headers.upgrade),
};
/**
 * Whether a request carried something of the vault's: a value filled (its
 * replacements, a SigV4 re-sign's included). An upstream's failure of one
 * that did not is the agent's own traffic (refusal.ts RefusalHook).
 */
const carries = (p) => p.replacements.length > 0;
/**
 * Starts the proxy on 127.0.0.1:`opts.port` (0: any free port).
 * @throws VaultError VLT-3007 when this Node's HTTP parser is not the one the proxy was built against; the listen error (EADDRINUSE) as it is.
 */
export function startProxy(opts) {
    return ProxyServer.start(opts);
}
/**
 * One running proxy: two node:http servers (the listening one, and the one
 * that serves what comes decrypted through tunnels), its upstream
 * connections, and the per-connection state the checks need (tunnels,
 * admitted callers, connections refused for their framing).
 */
export class ProxyServer {
    #opts;
    #port;
    #upstreams;
    #client;
    #tunnels;
    #scavenger = new Scavenger();
    /** Caller tokens the host accepted, until when. */
    #admitted = new Map();
    /**
     * Connections whose framing was refused. Node parses requests pipelined
     * behind the refused one and emits them at once; they are never forwarded
     * (the connection closes after the refusal), since where they begin is
     * exactly what the two readings disagree on.
     */
    #poisoned = new WeakSet();
    /** The listening server: CONNECTs and absolute-form requests. */
    #outer = createServer(SERVER_OPTIONS);
    /** The tunnels' decrypted connections: never listens, gets sockets handed over. */
    #inner = createServer(SERVER_OPTIONS);
    /** The owner's refusal hook, never allowed to break the answer it reports. */
    #report = (code, detail, vault) => {
        try {
            this.#opts.onRefusal?.(code, detail, vault);
        }
        catch {
            // A hook that throws must not cost the client its refusal.
        }
    };
    /** @throws VaultError VLT-3007 when this Node's HTTP parser is not the pinned one (exchange.ts). */
    static async start(opts) {
        const parser = parserProblem();
        if (parser !== null) {
            throw new VaultError('VLT-3007', `The proxy cannot run on this Node: ${parser}.`);
        }
        const proxy = new ProxyServer(opts);
        await proxy.#listen();
        return proxy;
    }
    constructor(opts) {
        this.#opts = opts;
        this.#port = opts.port;
        // The upstream CAs as one context, not as a `ca` option: Node's agent puts a
        // `ca` option into every request's pool key (a 200 kB string built per request,
        // most of the proxy's CPU when measured); a secure context is not part of it.
        const trust = createSecureContext({ ca: [...opts.upstreamCa] });
        const lookupFor = this.#lookupFor.bind(this);
        this.#upstreams = new Upstreams(trust, lookupFor);
        this.#client = new ClientForwarder(trust, lookupFor);
        this.#tunnels = new Tunnels(opts.authority, this.#upstreams);
        for (const server of [this.#outer, this.#inner]) {
            server.on('request', this.#onRequest);
            server.on('upgrade', this.#onUpgrade);
            server.on('clientError', this.#onClientError);
        }
        this.#outer.on('connect', this.#onConnect);
    }
    get port() {
        return this.#port;
    }
    accept(socket) {
        this.#outer.emit('connection', socket);
    }
    close() {
        return new Promise((done) => {
            this.#upstreams.close();
            this.#client.close();
            this.#outer.closeAllConnections();
            this.#inner.closeAllConnections();
            this.#outer.close(() => done());
        });
    }
    #listen() {
        return new Promise((resolve, reject) => {
            this.#outer.once('error', reject);
            this.#outer.listen(this.#opts.port, '127.0.0.1', () => {
                const addr = this.#outer.address();
                if (typeof addr === 'object' && addr !== null)
                    this.#port = addr.port;
                resolve();
            });
        });
    }
    /** Where a connection to `host:port` must not lead to this machine, the lookup that sees to it. */
    #lookupFor(host, port) {
        return isConfined({ host, port }, this.#opts.confine) ? confinedLookup : undefined;
    }
    /** A sandboxed session's refusal of a destination on this machine, or null. */
    async #confined(dest) {
        if (!isConfined(dest, this.#opts.confine))
            return null;
        return (await isLocalHost(dest.host)) ? onThisMachine(dest) : null;
    }
    /** Asks the host about a caller token not admitted within ADMIT_FOR_MS; throws its refusal. */
    async #admit(caller) {
        const check = this.#opts.admit;
        if (caller === null || check === undefined)
            return;
        const now = Date.now();
        if ((this.#admitted.get(caller) ?? 0) > now)
            return;
        await check(caller);
        if (this.#admitted.size >= ADMITTED_MAX)
            this.#admitted.clear();
        this.#admitted.set(caller, now + ADMIT_FOR_MS);
    }
    #callerOf(req) {
        const o = this.#opts;
        return callerOf(new RawHeaders(req.rawHeaders), o.requireCaller === true, o.sessionToken);
    }
    /** The checks that must run before any other request on the connection is looked at, then its route. */
    #precheck(req) {
        if (this.#poisoned.has(req.socket))
            return new VaultError('VLT-2048');
        const framing = framingProblem(req.rawHeaders);
        if (framing !== null) {
            this.#poisoned.add(req.socket);
            return new VaultError('VLT-2048', `Ambiguous request framing (${framing}); nothing was sent.`);
        }
        const tunnel = this.#tunnels.of(req.socket);
        return routeRequest(req.url ?? '', tunnel, this.#port, () => this.#callerOf(req));
    }
    #onRequest = (req, res) => {
        const seenBad = this.#poisoned.has(req.socket);
        const r = this.#precheck(req);
        if (r instanceof VaultError) {
            req.resume();
            // Behind a refused request: no reply; the connection ends after the refusal.
            if (!seenBad)
                reply(res, r, this.#report);
            return;
        }
        void this.#handle(req, res, r);
    };
    #onUpgrade = (req, socket, head) => {
        // Only a Node without shouldUpgradeCallback gets here with another protocol.
        if (!isWebSocket(req.headers.upgrade)) {
            return rawError(socket, new VaultError('VLT-2048', 'Only WebSocket upgrades are relayed.'), this.#report);
        }
        const r = this.#precheck(req);
        if (r instanceof VaultError)
            return rawError(socket, r, this.#report);
        void this.#handleUpgrade(req, socket, head, r);
    };
    #onClientError = (err, socket) => {
        if (!socket.writable) {
            socket.destroy();
            return;
        }
        const message = `Malformed request (${err.code ?? 'parse error'}); nothing was sent.`;
        rawError(socket, new VaultError('VLT-2048', message), this.#report);
    };
    #onConnect = (req, socket, head) => {
        socket.on('error', () => socket.destroy());
        const target = routeConnect(req.url ?? '', this.#port);
        if (target instanceof VaultError)
            return rawError(socket, target, this.#report);
        const caller = this.#callerOf(req);
        if (caller instanceof VaultError)
            return rawError(socket, caller, this.#report);
        void this.#admit(caller)
            .then(() => this.#confined(target))
            .then((local) => local === null
            ? this.#tunnels.open(socket, head, target, caller, this.#inner)
            : rawError(socket, local, this.#report), (err) => rawError(socket, err instanceof VaultError ? err : new VaultError('VLT-3007'), this.#report));
    };
    /**
     * Checks a request and fills its references: the caller admitted and the
     * destination allowed (at the tunnel's opening for one inside a tunnel),
     * then policy.ts's plan carried out: the host resolves every reference in
     * one call, the values are checked fit for a header and filled in.
     * @throws VaultError the refusal to send back.
     */
    async #prepare(req, r, upgrade) {
        // Signed with a surrogate AWS key (sigv4.ts): read before anything is resolved.
        const aws = surrogateSigned(new RawHeaders(req.rawHeaders), r.path);
        if (aws instanceof VaultError)
            throw aws;
        const p = await this.#fill(req, r, upgrade);
        if (aws === null)
            return p;
        try {
            return await resign(req, r, aws, p, this.#opts.sign);
        }
        catch (err) {
            wipeValues(p);
            if (err instanceof VaultError)
                this.#barred(r.caller, err);
            throw err;
        }
    }
    /** The request's references filled (the fill half of #prepare). */
    async #fill(req, routed, upgrade) {
        const { dest, caller } = routed;
        if (this.#tunnels.of(req.socket) === undefined) {
            await this.#admit(caller);
            const local = await this.#confined(dest);
            if (local !== null)
                throw local;
        }
        const received = new RawHeaders(req.rawHeaders);
        const plan = planFill(received.withoutHopByHop(upgrade), received, dest);
        if (plan.kind === 'refuse') {
            const { error, signal } = plan;
            throw signal === undefined ? error : await this.#counted(error, signal, caller);
        }
        if (plan.kind === 'pass')
            return { headers: plan.headers, replacements: [], address: null };
        const address = plan.plainHttp ? await loopbackAddress(dest.host) : null;
        const refused = plan.plainHttp ? plainHttpRefusal(dest, address, this.#port) : null;
        if (refused !== null)
            throw refused;
        const t = plan.template;
        const values = await this.#resolve(t, dest, caller, {
            method: req.method ?? '',
            target: routed.path,
        });
        const unsafe = unsafeValueRefusal(values, t.refs, t.inBasicUser);
        if (unsafe !== null) {
            for (const v of values)
                v.fill(0);
            throw unsafe;
        }
        const headers = new RawHeaders(fill(t, values));
        return { headers, replacements: replacementsFor(t, values), address };
    }
    /** The host's values for a template's references, or its refusal naming each bad one. */
    async #resolve(t, dest, caller, request) {
        try {
            const refs = t.refs.map((r) => ({ entry: r.entry, field: r.field }));
            return await this.#opts.resolve(refs, dest.host, caller, request);
        }
        catch (err) {
            if (err instanceof VaultError)
                this.#barred(caller, err);
            throw err instanceof VaultError ? withRefs(err, t.refs) : err;
        }
    }
    /**
     * A caller the host just found locked or refused opens no further tunnel
     * on the strength of an earlier admission: the next CONNECT asks again.
     */
    #barred(caller, err) {
        if (caller !== null && (err.code === 'VLT-2043' || err.code === 'VLT-2040')) {
            this.#admitted.delete(caller);
        }
    }
    /**
     * The answer to a refused request whose attempt counts as a violation,
     * once the host has recorded it (policy.ts countedRefusal). The refusal
     * stands whatever the host answers, since nothing went upstream: a report
     * the host refuses (a token it no longer knows) or cannot take leaves it
     * as it was, and a caller found locked gets VLT-2043.
     */
    async #counted(refusal, signal, caller) {
        const report = this.#opts.report;
        if (report === undefined)
            return refusal;
        try {
            const { outcome } = await report(signal, caller);
            const answer = countedRefusal(refusal, signal, outcome);
            this.#barred(caller, answer);
            return answer;
        }
        catch (err) {
            if (!(err instanceof VaultError))
                return refusal;
            this.#barred(caller, err);
            return err.code === 'VLT-2043' ? err : refusal;
        }
    }
    async #handle(req, res, r) {
        let p;
        try {
            p = await this.#prepare(req, r, false);
        }
        catch (err) {
            req.resume();
            return reply(res, asRefusal(err), this.#report);
        }
        // The values stay for scrubbing until the exchange ends; then they are zeroed
        // (best effort: the header strings built from them are JavaScript strings).
        if (p.replacements.length > 0)
            res.once('close', () => wipeValues(p));
        const own = r.dest.tls ? this.#tunnels.upstreamFor(req.socket, r.dest) : null;
        if (own !== null)
            this.#exchangeInTunnel(req, res, r, p, own);
        else
            this.#exchangeViaClient(req, res, r, p);
    }
    /** A request inside a tunnel: one exchange on the tunnel's upstream connection (exchange.ts). */
    #exchangeInTunnel(req, res, r, p, own) {
        let relay = null;
        const x = new Exchange(own.take(), requestHead(req, r.path, p), {
            chunked: req.headers['transfer-encoding'] !== undefined,
            headOnly: req.method === 'HEAD',
            replayable: isReplayable(req),
        }, {
            head: (status, message, raw) => (relay = this.#respond(req, res, p, status, message, raw, x)),
            body: (chunk) => {
                this.#scavenger.count(chunk);
                relay?.body(chunk);
            },
            end: () => relay?.end(),
            fail: (reason, headSeen) => {
                if (headSeen)
                    relay?.fail();
                else
                    reply(res, upstreamFailure(r.dest, reason), this.#report, carries(p));
            },
        }, own);
        sendBody(req, res, x, (chunk) => this.#scavenger.count(chunk), p.body);
    }
    /**
     * Absolute-form requests (plain HTTP, or https:// without a tunnel):
     * node:http's client. A replayable request whose pooled connection closed
     * before any byte of a reply goes once more, on a new connection to the
     * address that connection reached (as in a tunnel: exchange.ts), with the
     * same filled headers: `again` is that address, on the second try. Not to
     * a new lookup of the name: it may answer with another machine, which the
     * value filled for the first attempt must not reach.
     */
    #exchangeViaClient(req, res, r, p, again = null) {
        const up = this.#client.request(req, r, p, again !== null, again);
        let relay = null;
        // A pooled connection's address, and whether any byte of a reply came on
        // it: node:http reports a 1xx or part of a head followed by a close as the
        // same ECONNRESET as a close before any reply, which alone is retried.
        let reused = null;
        up.once('socket', (s) => {
            const address = s.remoteAddress;
            if (!up.reusedSocket || address === undefined)
                return;
            const on = { address, heard: false };
            const heard = () => (on.heard = true);
            s.on('data', heard);
            up.once('close', () => s.off('data', heard));
            reused = on;
        });
        up.on('response', (upRes) => {
            const status = upRes.statusCode ?? 502;
            const rel = this.#respond(req, res, p, status, upRes.statusMessage ?? '', upRes.rawHeaders, upRes);
            if (rel === null)
                return;
            relay = rel;
            upRes.on('data', (chunk) => {
                this.#scavenger.count(chunk);
                rel.body(chunk);
            });
            upRes.on('end', () => rel.end());
            upRes.on('error', () => rel.fail());
        });
        up.on('error', (err) => {
            // Mid-response: the client is cut off, as for a failed body.
            if (relay !== null || res.headersSent) {
                relay?.fail();
                res.destroy();
                return;
            }
            // A pooled connection reset or closed before any reply: the case
            // node:http's own documentation retries (reusedSocket, ECONNRESET).
            const reset = err.code === 'ECONNRESET' || err.code === 'EPIPE';
            const stale = reused;
            if (reset && again === null && stale !== null && !stale.heard && isReplayable(req)) {
                if (!res.destroyed)
                    return this.#exchangeViaClient(req, res, r, p, stale.address);
            }
            const failed = upstreamFailure(r.dest, err.code ?? 'connection failed');
            reply(res, failed, this.#report, carries(p));
        });
        sendBody(req, res, clientBody(up), (chunk) => this.#scavenger.count(chunk), p.body);
    }
    /**
     * The relay for a response's body once its head is known, or null when
     * policy.ts refuses the response (the client gets the refusal and
     * `source` is dropped).
     */
    #respond(req, res, p, status, message, rawHeaders, source) {
        const raw = new RawHeaders(rawHeaders);
        const plan = planResponse(req.method, status, message, raw, p.replacements);
        if (plan.kind === 'refuse') {
            source.destroy();
            reply(res, plan.error, this.#report, carries(p));
            return null;
        }
        const headers = responseHeaders(raw, p.replacements, plan.scrubBody);
        const replacements = plan.scrubBody ? p.replacements : null;
        const decoder = plan.decode === null ? null : decoderFor(plan.decode);
        return new Relay(res, status, message, headers, replacements, decoder, source);
    }
    async #handleUpgrade(req, socket, head, r) {
        let p;
        try {
            p = await this.#prepare(req, r, true);
        }
        catch (err) {
            return rawError(socket, err instanceof VaultError ? err : new VaultError('VLT-3007'), this.#report);
        }
        const sent = { ...p, headers: p.headers.delete(...upgradeDrops(p.replacements)) };
        const up = this.#client.request(req, r, sent, true);
        socket.once('close', () => wipeValues(p));
        relayUpgrade(socket, head, up, r.dest, p.replacements, this.#report, carries(p));
        up.end();
    }
}
