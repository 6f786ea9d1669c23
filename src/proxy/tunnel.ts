/**
 * CONNECT tunnels: the client's socket answered `200 Connection Established`,
 * TLS terminated with a leaf for the target from the local CA, and what comes
 * through served as requests by the inner server. Each tunnel remembers where
 * it goes and who opened it, for every request inside it, and holds its own
 * upstream connections (upstream.ts).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Authority } from './ca.js';
import { serializeHead, statusLine } from './head.js';
import type { Destination, Tunnel } from './routing.js';
import type { TunnelUpstream, Upstreams } from './upstream.js';

const ESTABLISHED = serializeHead(statusLine(200, 'Connection Established'), []);

export class Tunnels {
  readonly #authority: Authority;
  readonly #upstreams: Upstreams;
  readonly #tunnels = new WeakMap<Socket, Tunnel>();
  readonly #held = new WeakMap<Socket, TunnelUpstream>();

  constructor(authority: Authority, upstreams: Upstreams) {
    this.#authority = authority;
    this.#upstreams = upstreams;
  }

  /** The tunnel a (decrypted) socket belongs to, if it is one. */
  of(socket: Socket): Tunnel | undefined {
    return this.#tunnels.get(socket);
  }

  /** Answers a CONNECT and hands what comes through it, decrypted, to `inner`. */
  open(
    socket: Socket,
    head: Buffer,
    target: { host: string; port: number },
    caller: string | null,
    inner: Server,
  ): void {
    if (socket.destroyed) return;
    if (head.length > 0) socket.unshift(head);
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
  upstreamFor(client: Socket, dest: Destination): TunnelUpstream | null {
    const tunnel = this.#tunnels.get(client);
    if (tunnel === undefined) return null;
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
