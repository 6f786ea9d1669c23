import { TLSSocket } from 'node:tls';
import { serializeHead, statusLine } from './head.js';
const ESTABLISHED = serializeHead(statusLine(200, 'Connection Established'), []);
export class Tunnels {
    #authority;
    #upstreams;
    #tunnels = new WeakMap();
    #held = new WeakMap();
    constructor(authority, upstreams) {
        this.#authority = authority;
        this.#upstreams = upstreams;
    }
    /** The tunnel a (decrypted) socket belongs to, if it is one. */
    of(socket) {
        return this.#tunnels.get(socket);
    }
    /** Answers a CONNECT and hands what comes through it, decrypted, to `inner`. */
    open(socket, head, target, caller, inner) {
        if (socket.destroyed)
            return;
        if (head.length > 0)
            socket.unshift(head);
        socket.setNoDelay(true);
        socket.write(ESTABLISHED);
        const tls = new TLSSocket(socket, {
            isServer: true,
            secureContext: this.#authority.contextFor(target.host),
            ALPNProtocols: ['http/1.1'],
        });
        tls.on('error', () => tls.destroy());
        this.#tunnels.set(tls, { tls: true, ...target, caller });
        inner.emit('connection', tls);
    }
    /** The tunnel's hold on upstream connections (upstream.ts); null outside a tunnel. */
    upstreamFor(client, dest) {
        const tunnel = this.#tunnels.get(client);
        if (tunnel === undefined)
            return null;
        let u = this.#held.get(client);
        if (u === undefined) {
            const made = this.#upstreams.forTunnel(dest.host, dest.port, tunnel.caller);
            client.once('close', () => made.end());
            this.#held.set(client, made);
            u = made;
        }
        return u;
    }
}
