/**
 * The one writer of HTTP/1.1 message heads the proxy sends by hand (a request
 * inside a tunnel, a refusal on a bare socket, a WebSocket handshake's
 * answer): start line, headers in the order given, blank line, as latin1
 * bytes.
 *
 * Invariant it guards: nothing it writes can start another header line or
 * end the head early. A header name must be an RFC 9110 token, and neither
 * a value nor the start line may hold CR, LF or NUL; anything else throws
 * before a byte is written.
 */
import type { RawHeaders } from './raw-headers.js';

/** An RFC 9110 token, what a header name must be. */
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** What would split or end a line. */
const LINE_BREAKING = /[\r\n\0]/;

/** A head that cannot be written without changing what it says. */
export class UnsafeHead extends Error {
  override readonly name = 'UnsafeHead';
}

export const requestLine = (method: string, target: string) => `${method} ${target} HTTP/1.1`;
export const statusLine = (status: number, message: string) => `HTTP/1.1 ${status} ${message}`;

/**
 * The bytes of a head: `start` (a request or status line, without CRLF),
 * then each header as `Name: value`.
 * @throws UnsafeHead for a name that is not a token, or CR, LF or NUL in a value or the start line.
 */
export function serializeHead(
  start: string,
  headers: RawHeaders | Iterable<readonly [string, string]>,
): Buffer {
  if (LINE_BREAKING.test(start)) throw new UnsafeHead('line break in the start line');
  let text = `${start}\r\n`;
  for (const [name, value] of headers) {
    if (!TOKEN.test(name)) throw new UnsafeHead('header name is not a token');
    if (LINE_BREAKING.test(value)) throw new UnsafeHead(`line break in the value of ${name}`);
    text += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, 'latin1');
}
