/**
 * How a refusal is answered: an HTTP status per VLT code, a body that names
 * the code (and, for several references, each one by what the caller wrote,
 * never a value), and the connection closed after it, so nothing pipelined
 * behind a refused request is read as a request.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { VaultError, type ErrorCode } from '../core/errors.js';
import { serializeHead, statusLine } from './head.js';
import type { Destination } from './routing.js';

/** No usable caller token: answered 407 with a challenge, so clients know to send one. */
export class Unauthenticated extends VaultError {
  constructor() {
    super(
      'VLT-2040',
      "The proxy needs a token as the proxy URL's user-info (http://vault:<token>@127.0.0.1:<port>); nothing was sent.",
    );
  }
}

const CHALLENGE = 'Basic realm="vault-cli"';

/** HTTP status of each refusal. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  'VLT-2040': 403,
  'VLT-2041': 403,
  'VLT-2042': 429,
  'VLT-2043': 423,
  'VLT-2044': 400,
  'VLT-2045': 403,
  'VLT-2046': 400,
  'VLT-2047': 422,
  'VLT-2048': 400,
  'VLT-2049': 400,
  'VLT-2052': 403,
  'VLT-2053': 403,
  'VLT-3008': 502,
};

export function statusOf(err: VaultError): number {
  if (err instanceof Unauthenticated) return 407;
  return STATUS[err.code] ?? (err.code.startsWith('VLT-3') ? 502 : 403);
}

function errorBody(err: VaultError): Buffer {
  return Buffer.from(err.line() + '\n');
}

/** Anything thrown where a refusal was due: ours as it is, anything else VLT-3007. */
export const asRefusal = (err: unknown): VaultError =>
  err instanceof VaultError ? err : new VaultError('VLT-3007', undefined, { cause: err });

export const upstreamFailure = (dest: Destination, reason: string) =>
  new VaultError('VLT-3008', `Upstream ${dest.host}:${dest.port}: ${reason}.`);

/** The headers of a refusal, with its body's length. */
function refusalHeaders(err: VaultError, length: number): [string, string][] {
  return [
    ['Content-Type', 'text/plain; charset=utf-8'],
    ...(err instanceof Unauthenticated
      ? [['Proxy-Authenticate', CHALLENGE] as [string, string]]
      : []),
    ['X-Vault-Error', err.code],
    ['Content-Length', String(length)],
    ['Connection', 'close'],
  ];
}

/** An error reply on a socket that is not (or no longer) an HTTP response object. */
export function rawError(socket: Duplex, err: VaultError): void {
  const body = errorBody(err);
  const head = serializeHead(
    statusLine(statusOf(err), 'Refused'),
    refusalHeaders(err, body.length),
  );
  socket.end(Buffer.concat([head, body]));
}

/** An error reply as the response to `res`'s request, or a cut connection once a head went out. */
export function reply(res: ServerResponse, err: VaultError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(err);
  res.writeHead(statusOf(err), refusalHeaders(err, body.length).flat());
  res.end(body);
}
