/**
 * The one-shot ceremony server: serves one page on a random port of
 * 127.0.0.1, as `http://localhost:<port>/<random path>` (an IP is not a valid
 * RP id), takes exactly one result from it, and closes. It decides nothing:
 * whatever the page posts is relayed, and the host's verdict shown.
 *
 * Requests whose Host is not `localhost:<port>` are refused (DNS rebinding),
 * and so are posts whose Origin is another site's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from '../crypto/aead.js';
import { ceremonyPage, type CeremonyKind } from './page.js';

const MAX_RESULT_BYTES = 64 * 1024;

/** The host's verdict on the result, shown on the page. */
export interface Verdict {
  readonly ok: boolean;
  readonly message: string;
}

export interface PageServer {
  /** `http://localhost:<port>`: the origin the host binds the challenge to. */
  readonly origin: string;
  /**
   * Serves the page, returns its URL; `onResult` gets the first result posted
   * (or `{ error: 'Timeout' }` after `timeoutMs`), and the server closes once
   * its verdict is shown.
   */
  publish(
    page: { readonly kind: CeremonyKind; readonly title: string; readonly options: unknown },
    onResult: (result: unknown) => Promise<Verdict>,
    timeoutMs: number,
  ): string;
  /** Resolves when the server has closed (after the result, a timeout or close()). */
  readonly closed: Promise<void>;
  close(): void;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_RESULT_BYTES) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch (err) {
        reject(err instanceof Error ? err : new Error('bad JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** Starts listening on a random port; nothing is served until `publish`. */
export async function startPageServer(): Promise<PageServer> {
  const secretPath = '/' + randomBytes(16).toString('hex');
  const nonce = randomBytes(16).toString('base64');
  let html: string | null = null;
  let handler: ((result: unknown) => Promise<Verdict>) | null = null;
  let taken = false;
  let timer: NodeJS.Timeout | undefined;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, {
        'content-type': type,
        'cache-control': 'no-store',
        connection: 'close',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      });
      res.end(body);
    };
    const reply = (status: number, v: Verdict) =>
      send(status, 'application/json', JSON.stringify(v));
    if (req.headers.host !== `localhost:${port}`)
      return reply(421, { ok: false, message: 'Wrong host.' });
    if (req.method === 'GET' && req.url === secretPath && html !== null) {
      return send(200, 'text/html; charset=utf-8', html);
    }
    if (req.method === 'POST' && req.url === `${secretPath}/result` && handler !== null) {
      const from = req.headers.origin;
      if (from !== undefined && from !== origin)
        return reply(403, { ok: false, message: 'Wrong origin.' });
      if (taken) return reply(410, { ok: false, message: 'This page has already been used.' });
      taken = true;
      clearTimeout(timer);
      const h = handler;
      readJson(req)
        .catch(() => ({ error: 'BadResult' }))
        .then((result) => h(result))
        .then(
          (v) => reply(200, v),
          () => reply(200, { ok: false, message: 'Refused.' }),
        )
        .finally(() => close());
      return;
    }
    return reply(404, { ok: false, message: 'Not found.' });
  });
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const close = () => {
    clearTimeout(timer);
    server.close(() => resolveClosed());
    // Every reply says `Connection: close`; a browser that holds a socket open anyway
    // is cut off shortly (not at once: the verdict must reach the page first).
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://localhost:${port}`;

  return {
    origin,
    closed,
    close,
    publish(page, onResult, timeoutMs) {
      html = ceremonyPage({ ...page, resultPath: `${secretPath}/result`, nonce });
      handler = onResult;
      timer = setTimeout(() => {
        if (taken) return;
        taken = true;
        onResult({ error: 'Timeout' }).then(close, close);
      }, timeoutMs);
      return `${origin}${secretPath}`;
    },
  };
}
