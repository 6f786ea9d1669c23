/**
 * A stand-in for a model provider's API: a local HTTPS server (certificate
 * from the test CA, so a client or the proxy must be told to trust it) that
 * records every request as it arrived, headers in order and case, and hands
 * it to the provider's handler. Requests no handler claims get a 404, so an
 * agent that calls an endpoint the stand-in does not know fails loudly
 * instead of reading an answer it did not ask for.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestCa } from '../proxy.js';

/** One request as the stand-in saw it. */
export interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

/** Answers `req` and returns true, or returns false to let the server say 404. */
export type Handler = (req: Recorded, res: ServerResponse) => boolean;

export class StandIn {
  readonly seen: Recorded[] = [];
  port = 0;
  private server!: Server;

  private constructor(private readonly handler: Handler) {}

  static async start(ca: TestCa, handler: Handler): Promise<StandIn> {
    const s = new StandIn(handler);
    s.server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => s.handle(req, res));
    await new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r));
    s.port = (s.server.address() as AddressInfo).port;
    return s;
  }

  /** `https://localhost:PORT`: the name is in the test certificate. */
  get origin(): string {
    return `https://localhost:${this.port}`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      this.seen.push(rec);
      if (!this.handler(rec, res)) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `stand-in: no route for ${rec.url}` } }));
      }
    });
  }

  /** Every value of header `name` (any case), over all requests so far. */
  header(name: string): string[] {
    const out: string[] = [];
    for (const s of this.seen) {
      for (let i = 0; i + 1 < s.rawHeaders.length; i += 2) {
        if (s.rawHeaders[i]?.toLowerCase() === name.toLowerCase()) {
          out.push(s.rawHeaders[i + 1] as string);
        }
      }
    }
    return out;
  }

  /** Paths (without the query) requested so far, in order. */
  paths(): string[] {
    return this.seen.map((s) => s.url.split('?')[0] ?? s.url);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** Writes server-sent events: `event:` lines when a name is given, one `data:` JSON each. */
export function sse(res: ServerResponse, events: readonly [string | null, unknown][]): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
  });
  for (const [name, data] of events) {
    res.write(`${name === null ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
