/**
 * The benches' client side of the proxy: TLS connections to a local upstream,
 * direct or through a CONNECT tunnel, and a keep-alive https.Agent over them.
 */
import { Agent, type RequestOptions } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

/** Opens a TLS connection to the upstream, through a CONNECT proxy when given. */
export function dial(
  proxyPort: number | null,
  upPort: number,
  ca: string,
  done: (err: Error | null, s?: Socket) => void,
): void {
  const tlsOpts: ConnectionOptions = { servername: 'localhost', ca, ALPNProtocols: ['http/1.1'] };
  if (proxyPort === null) {
    const s = tlsConnect({ ...tlsOpts, host: '127.0.0.1', port: upPort }, () => done(null, s));
    s.once('error', done);
    return;
  }
  const raw = netConnect(proxyPort, '127.0.0.1', () =>
    raw.write(`CONNECT localhost:${upPort} HTTP/1.1\r\nHost: localhost:${upPort}\r\n\r\n`),
  );
  raw.once('error', done);
  let head = '';
  const onData = (c: Buffer) => {
    head += c.toString('latin1');
    if (!head.includes('\r\n\r\n')) return;
    raw.off('data', onData);
    if (!/^HTTP\/1\.[01] 200/.test(head)) return done(new Error(head.split('\r\n')[0]));
    const s = tlsConnect({ ...tlsOpts, socket: raw }, () => done(null, s));
    s.once('error', done);
  };
  raw.on('data', onData);
}

export class TunnelAgent extends Agent {
  constructor(
    private readonly proxyPort: number | null,
    private readonly upPort: number,
    private readonly ca: string,
    maxSockets: number,
  ) {
    super({ keepAlive: true, maxSockets });
  }
  override createConnection(
    _opts: RequestOptions,
    cb?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    dial(this.proxyPort, this.upPort, this.ca, (err, s) => cb?.(err, s as Duplex));
    return undefined;
  }
}
